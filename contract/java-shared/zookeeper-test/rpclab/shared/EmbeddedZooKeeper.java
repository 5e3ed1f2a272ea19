package rpclab.shared;

import java.io.IOException;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Properties;
import org.apache.zookeeper.Watcher;
import org.apache.zookeeper.ZooKeeper;
import org.apache.zookeeper.server.ServerConfig;
import org.apache.zookeeper.server.ZooKeeperServerMain;
import org.apache.zookeeper.server.quorum.QuorumPeerConfig;

/**
 * A real standalone ZooKeeper server (ZooKeeperServerMain) on 127.0.0.1 and a
 * free port, for the tests of servers that register in ZooKeeper (Dubbo 2.5,
 * 2.6, 3.3). Test scope: the server's pom adds this folder with
 * build-helper's add-test-source and has org.apache.zookeeper:zookeeper.
 */
public final class EmbeddedZooKeeper extends ZooKeeperServerMain implements AutoCloseable {
    public final int port;
    private final Thread thread;

    public EmbeddedZooKeeper() throws Exception {
        try (ServerSocket s = new ServerSocket(0, 1, java.net.InetAddress.getByName("127.0.0.1"))) {
            port = s.getLocalPort();
        }
        Path dataDir = Files.createTempDirectory("rpclab-zk");
        Properties p = new Properties();
        p.setProperty("tickTime", "2000");
        p.setProperty("dataDir", dataDir.toString());
        p.setProperty("clientPort", Integer.toString(port));
        p.setProperty("clientPortAddress", "127.0.0.1");
        p.setProperty("maxClientCnxns", "0");
        System.setProperty("zookeeper.admin.enableServer", "false");
        QuorumPeerConfig qpc = new QuorumPeerConfig();
        qpc.parseProperties(p);
        ServerConfig config = new ServerConfig();
        config.readFrom(qpc);
        thread = new Thread(() -> {
            try {
                runFromConfig(config);
            } catch (Exception e) {
                e.printStackTrace();
            }
        }, "embedded-zookeeper");
        thread.setDaemon(true);
        thread.start();
        long deadline = System.currentTimeMillis() + 30_000;
        while (true) {
            try (java.net.Socket s = new java.net.Socket("127.0.0.1", port)) {
                break;
            } catch (IOException e) {
                if (System.currentTimeMillis() > deadline) {
                    throw new IllegalStateException("embedded ZooKeeper did not start", e);
                }
                Thread.sleep(100);
            }
        }
    }

    /** The registry address as Dubbo's RegistryConfig takes it. */
    public String address() {
        return "zookeeper://127.0.0.1:" + port;
    }

    /** The children of `path`, URL-decoded (a registry's provider URLs); none if it does not exist. */
    public List<String> children(String path) throws Exception {
        CountDownLatch connected = new CountDownLatch(1);
        ZooKeeper client = new ZooKeeper("127.0.0.1:" + port, 30_000, e -> {
            if (e.getState() == Watcher.Event.KeeperState.SyncConnected) {
                connected.countDown();
            }
        });
        try {
            if (!connected.await(30, TimeUnit.SECONDS)) {
                throw new IllegalStateException("ZooKeeper client did not connect");
            }
            if (client.exists(path, false) == null) {
                return List.of();
            }
            List<String> urls = new ArrayList<>();
            for (String child : client.getChildren(path, false)) {
                urls.add(URLDecoder.decode(child, StandardCharsets.UTF_8));
            }
            return urls;
        } finally {
            client.close();
        }
    }

    @Override
    public void close() {
        shutdown();
    }
}
