package rpclab.dubbo25;

import java.io.IOException;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Properties;
import org.apache.zookeeper.server.ServerConfig;
import org.apache.zookeeper.server.ZooKeeperServerMain;
import org.apache.zookeeper.server.quorum.QuorumPeerConfig;

/** A real standalone ZooKeeper server (ZooKeeperServerMain) on 127.0.0.1 and a free port. */
final class EmbeddedZooKeeper extends ZooKeeperServerMain implements AutoCloseable {
    final int port;
    private final Thread thread;

    EmbeddedZooKeeper() throws Exception {
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

    String address() {
        return "zookeeper://127.0.0.1:" + port;
    }

    @Override
    public void close() {
        shutdown();
    }
}
