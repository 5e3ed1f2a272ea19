package rpclab.dubbo33;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.dubbo.config.ApplicationConfig;
import org.apache.dubbo.config.ReferenceConfig;
import org.apache.dubbo.config.RegistryConfig;
import org.apache.dubbo.config.bootstrap.DubboBootstrap;
import org.apache.dubbo.rpc.model.FrameworkModel;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;
import java.util.stream.Stream;
import rpclab.contract.BenchService;
import rpclab.shared.ContractCalls;
import rpclab.shared.EmbeddedZooKeeper;
import rpclab.shared.ProviderProcess;

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

    /**
     * Inside the image build (`-Drpclab.test.quick=true`) only the default
     * serialization and one unsupported name: each case is a child JVM, and
     * the lab's end-to-end smoke calls every serialization of the built
     * image through the Rust client anyway. A plain `mvn test` runs them all.
     */
    static final boolean QUICK = Boolean.getBoolean("rpclab.test.quick");

    static Stream<String> supported() {
        return QUICK ? Stream.of("hessian2") : Stream.of("hessian2", "fastjson2", "java", "compactedjava", "nativejava", "kryo");
    }

    static Stream<String> unsupported() {
        return QUICK ? Stream.of("nonsense") : Stream.of("dubbo", "fst", "nonsense");
    }

    @BeforeAll
    static void startZooKeeper() throws Exception {
        zk = new EmbeddedZooKeeper();
        System.setProperty("dubbo.application.service-discovery.migration", "FORCE_INTERFACE");
        // A stock Dubbo consumer connects to NetUtils.filterLocalHost(host): a
        // 127.x provider address becomes the machine's LAN address, where the
        // loopback-only provider is not listening. Pin it as the provider does.
        BenchProvider.pinLocalHost();
    }

    @AfterAll
    static void stopZooKeeper() {
        zk.close();
    }

    /** The provider in a child JVM, configured by the environment as in its container. */
    static ProviderProcess provider(int port, String serialization) throws Exception {
        Map<String, String> env = new HashMap<>();
        env.put("RPCLAB_PORT", Integer.toString(port));
        env.put("ZK_ADDRESS", zk.address());
        if (serialization != null) {
            env.put("DUBBO_SERIALIZATION", serialization);
        }
        env.put("DUBBO_THREADS", "16");
        return new ProviderProcess(BenchProvider.class, JVM_FLAGS, env);
    }

    static List<String> registeredProviders() throws Exception {
        return zk.children("/dubbo/" + SERVICE + "/providers");
    }

    @ParameterizedTest
    @MethodSource("supported")
    void everyMethodThroughZooKeeper(String serialization) throws Exception {
        int port = ProviderProcess.freePort();
        try (ProviderProcess provider = provider(port, serialization)) {
            provider.awaitReady(port);

            List<String> registered = registeredProviders();
            assertEquals(1, registered.size(), "one provider registered: " + registered);
            String url = registered.get(0);
            assertTrue(url.startsWith("dubbo://127.0.0.1:" + port + "/" + SERVICE + "?"), url);
            assertTrue(url.contains("&serialization=" + serialization + "&"), url);
            assertTrue(url.contains("&prefer.serialization=" + serialization + "&"), url);
            assertTrue(url.contains("&dubbo=2.0.2&"), url);

            FrameworkModel framework = new FrameworkModel();
            try {
                ApplicationConfig app = new ApplicationConfig("rpclab-test-consumer");
                app.setQosEnable(false);
                app.setRegisterMode("interface");
                app.setEnableFileCache(false);
                RegistryConfig registry = new RegistryConfig(zk.address());
                registry.setUseAsConfigCenter(false);
                registry.setUseAsMetadataCenter(false);
                ReferenceConfig<BenchService> reference = new ReferenceConfig<>();
                reference.setInterface(BenchService.class);
                reference.setTimeout(30_000);
                reference.setRetries(0);
                reference.setCheck(true);
                DubboBootstrap consumer = DubboBootstrap.newInstance(framework)
                        .application(app)
                        .registry(registry)
                        .reference(reference);
                consumer.start();
                BenchService bench = reference.get();
                ContractCalls.callEveryMethod(bench);
            } finally {
                framework.destroy();
            }

            assertEquals(0, provider.stop(), "exit status after SIGTERM");
            assertTrue(provider.all.contains("rpclab server stopped"));
            assertEquals(List.of(), registeredProviders(), "unregistered after SIGTERM");
        }
    }

    @ParameterizedTest
    @MethodSource("unsupported")
    void unsupportedSerializationFailsFast(String serialization) throws Exception {
        try (ProviderProcess provider = provider(ProviderProcess.freePort(), serialization)) {
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
