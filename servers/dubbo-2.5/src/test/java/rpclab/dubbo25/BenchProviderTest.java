package rpclab.dubbo25;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.io.BufferedReader;
import java.io.File;
import java.io.InputStreamReader;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import com.alibaba.dubbo.config.ApplicationConfig;
import com.alibaba.dubbo.config.ReferenceConfig;
import com.alibaba.dubbo.config.RegistryConfig;
import org.apache.zookeeper.Watcher;
import org.apache.zookeeper.ZooKeeper;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import rpclab.contract.BenchService;
import rpclab.contract.Order;

/**
 * End to end: a real ZooKeeper, the real provider (BenchProvider.main in a
 * child JVM, configured by the environment exactly as in the container) and a
 * real Dubbo consumer (ReferenceConfig) that finds it through ZooKeeper and
 * calls every method, once per serialization the provider claims.
 */
class BenchProviderTest {
    static final String SERVICE = "rpclab.contract.BenchService";
    /** The server.toml jvm_flags minus the heap size. */
    static final List<String> JVM_FLAGS = List.of(
            "-Xmx512m",
            "--add-opens=java.base/java.lang=ALL-UNNAMED",
            "--add-opens=java.base/java.lang.reflect=ALL-UNNAMED",
            "--add-opens=java.base/java.lang.invoke=ALL-UNNAMED",
            "--add-opens=java.base/java.util=ALL-UNNAMED",
            "--add-opens=java.base/java.util.concurrent=ALL-UNNAMED",
            "--add-opens=java.base/java.util.concurrent.atomic=ALL-UNNAMED",
            "--add-opens=java.base/java.util.regex=ALL-UNNAMED",
            "--add-opens=java.base/java.math=ALL-UNNAMED",
            "--add-opens=java.base/java.net=ALL-UNNAMED",
            "--add-opens=java.base/java.nio=ALL-UNNAMED",
            "--add-opens=java.base/java.text=ALL-UNNAMED",
            "--add-opens=java.base/java.time=ALL-UNNAMED",
            "--add-opens=java.base/java.io=ALL-UNNAMED",
            "--add-opens=java.sql/java.sql=ALL-UNNAMED",
            "--add-opens=java.base/java.security=ALL-UNNAMED");

    static EmbeddedZooKeeper zk;

    @BeforeAll
    static void startZooKeeper() throws Exception {
        zk = new EmbeddedZooKeeper();
        System.setProperty("dubbo.application.logger", "slf4j");
        // A stock Dubbo consumer connects to NetUtils.filterLocalHost(host): a
        // 127.x provider address becomes the machine's LAN address, where the
        // loopback-only provider is not listening. Pin it as the provider does.
        BenchProvider.pinNetUtils();
    }

    @AfterAll
    static void stopZooKeeper() {
        zk.close();
    }

    static int freePort() throws Exception {
        try (java.net.ServerSocket s = new java.net.ServerSocket(0, 1, java.net.InetAddress.getByName("127.0.0.1"))) {
            return s.getLocalPort();
        }
    }

    /** A provider child JVM; its output is echoed and scanned for the ready line. */
    static final class Provider implements AutoCloseable {
        final Process process;
        final Thread reader;
        final BlockingQueue<String> lines = new LinkedBlockingQueue<>();
        final List<String> all = Collections.synchronizedList(new ArrayList<>());

        Provider(int port, String serialization) throws Exception {
            List<String> cmd = new ArrayList<>();
            cmd.add(System.getProperty("java.home") + File.separator + "bin" + File.separator + "java");
            cmd.addAll(JVM_FLAGS);
            cmd.add("-cp");
            cmd.add(System.getProperty("java.class.path"));
            cmd.add(BenchProvider.class.getName());
            ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true);
            pb.environment().put("RPCLAB_PORT", Integer.toString(port));
            pb.environment().put("ZK_ADDRESS", zk.address());
            if (serialization != null) {
                pb.environment().put("DUBBO_SERIALIZATION", serialization);
            }
            pb.environment().put("DUBBO_THREADS", "16");
            process = pb.start();
            reader = new Thread(() -> {
                try (BufferedReader r = new BufferedReader(
                        new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
                    String line;
                    while ((line = r.readLine()) != null) {
                        System.out.println("[provider] " + line);
                        all.add(line);
                        lines.add(line);
                    }
                } catch (Exception ignored) {
                    // process ended
                }
            });
            reader.setDaemon(true);
            reader.start();
        }

        void awaitReady(int port) throws Exception {
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(90);
            while (System.nanoTime() < deadline) {
                String line = lines.poll(200, TimeUnit.MILLISECONDS);
                if (line != null && line.startsWith("rpclab server ready on 127.0.0.1:" + port)) {
                    return;
                }
                if (line == null && !process.isAlive()) {
                    fail("provider exited with " + process.exitValue() + " before it was ready:\n" + String.join("\n", all));
                }
            }
            fail("provider not ready after 90 s:\n" + String.join("\n", all));
        }

        int stop() throws Exception {
            // SIGTERM, as docker stop sends it (Process.destroy() would also
            // close the pipes, losing the provider's last lines).
            new ProcessBuilder("kill", "-TERM", Long.toString(process.pid())).inheritIO().start().waitFor();
            if (!process.waitFor(30, TimeUnit.SECONDS)) {
                process.destroyForcibly();
                fail("provider did not stop within 30 s of SIGTERM");
            }
            reader.join(5_000);
            return process.exitValue();
        }

        @Override
        public void close() {
            process.destroyForcibly();
        }
    }

    static List<String> registeredProviders() throws Exception {
        CountDownLatch connected = new CountDownLatch(1);
        ZooKeeper client = new ZooKeeper("127.0.0.1:" + zk.port, 30_000, e -> {
            if (e.getState() == Watcher.Event.KeeperState.SyncConnected) {
                connected.countDown();
            }
        });
        try {
            assertTrue(connected.await(30, TimeUnit.SECONDS), "ZooKeeper client connected");
            String path = "/dubbo/" + SERVICE + "/providers";
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

    static Order sample(int i) {
        Order o = new Order();
        o.setOrderId(1_000_000_000_000L + i);
        o.setPhone("1380013" + String.format("%04d", i));
        o.setName("name-" + i);
        o.setOrderNum("ORD-" + i);
        o.setOrderDate(20150101 + i);
        o.setTicketType(i % 3);
        o.setAmount(99.5 + i);
        o.setOrderStatus(i % 5);
        return o;
    }

    static String ascii(int len) {
        StringBuilder sb = new StringBuilder(len);
        for (int i = 0; i < len; i++) {
            sb.append((char) ('!' + (i % 94)));
        }
        return sb.toString();
    }

    static void callEveryMethod(BenchService bench) {
        Order order = sample(1);
        Order reply = bench.echoOrder(order);
        assertNotSame(order, reply);
        assertEquals(order, reply);

        List<Order> orders = new ArrayList<>();
        for (int i = 0; i < 100; i++) {
            orders.add(sample(i));
        }
        assertEquals(orders, bench.echoOrders(orders));

        for (int len : new int[] {1024, 102_400, 1_048_576}) {
            String s = ascii(len);
            String echoed = bench.echoString(s);
            assertEquals(len, echoed.length());
            assertEquals(s, echoed);
        }
        assertEquals("hello aa", bench.hello("aa"));
        bench.empty();
    }

    @ParameterizedTest
    @ValueSource(strings = {"hessian2", "dubbo", "java", "compactedjava", "nativejava"})
    void everyMethodThroughZooKeeper(String serialization) throws Exception {
        int port = freePort();
        try (Provider provider = new Provider(port, serialization)) {
            provider.awaitReady(port);

            List<String> registered = registeredProviders();
            assertEquals(1, registered.size(), "one provider registered: " + registered);
            String url = registered.get(0);
            assertTrue(url.startsWith("dubbo://127.0.0.1:" + port + "/" + SERVICE + "?"), url);
            assertTrue(url.contains("&serialization=" + serialization + "&"), url);
            assertTrue(url.contains("&server=rpclab-netty&"), url);
            assertTrue(url.contains("&client=netty&"), url);
            assertTrue(url.contains("&dubbo=" + com.alibaba.dubbo.common.Version.getVersion() + "&"), url);

            ApplicationConfig app = new ApplicationConfig("rpclab-test-consumer");
            app.setQosEnable(false);
            RegistryConfig registry = new RegistryConfig(zk.address());
            ReferenceConfig<BenchService> reference = new ReferenceConfig<>();
            reference.setApplication(app);
            reference.setRegistry(registry);
            reference.setInterface(BenchService.class);
            reference.setTimeout(30_000);
            reference.setRetries(0);
            reference.setCheck(true);
            try {
                callEveryMethod(reference.get());
            } finally {
                reference.destroy();
            }

            assertEquals(0, provider.stop(), "exit status after SIGTERM");
            assertTrue(provider.all.contains("rpclab server stopped"));
            assertEquals(List.of(), registeredProviders(), "unregistered after SIGTERM");
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"kryo", "fastjson2", "nonsense"})
    void unsupportedSerializationFailsFast(String serialization) throws Exception {
        try (Provider provider = new Provider(freePort(), serialization)) {
            assertTrue(provider.process.waitFor(60, TimeUnit.SECONDS), "exits");
            assertEquals(2, provider.process.exitValue());
            Thread.sleep(200);
            assertTrue(provider.all.stream().anyMatch(l -> l.contains("DUBBO_SERIALIZATION=" + serialization)),
                    String.join("\n", provider.all));
        }
    }

    @Test
    void defaultIsHessian2() {
        assertEquals("hessian2", BenchProvider.DEFAULT_SERIALIZATION);
        assertNull(System.getenv("DUBBO_SERIALIZATION_UNSET_PROBE"));
    }
}
