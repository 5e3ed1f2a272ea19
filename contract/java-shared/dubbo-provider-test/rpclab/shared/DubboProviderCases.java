package rpclab.shared;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * End to end, the cases every Dubbo provider passes whatever its version: a
 * real ZooKeeper, the real provider (its main in a child JVM, configured by
 * the environment exactly as in the container) and a real Dubbo consumer of
 * the same version that finds it through ZooKeeper and calls every method,
 * once per serialization the provider claims; a serialization it does not
 * serve ends it with status 2 and a line naming it. A provider's test
 * extends this class with what is its version's own: the serializations
 * (constructor), the URL parameters it registers and how its consumer is
 * made; the default serialization is the first served one.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
public abstract class DubboProviderCases {
    public static final String SERVICE = "rpclab.contract.BenchService";
    /** The server.toml jvm_flags minus the heap size. */
    static final List<String> JVM_FLAGS = Arrays.asList(
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

    /**
     * Inside the image build (`-Drpclab.test.quick=true`) only the default
     * serialization and one unsupported name: each case is a child JVM, and
     * the lab's end-to-end smoke calls every serialization of the built
     * image through the Rust client anyway. A plain `mvn test` runs them all.
     */
    static final boolean QUICK = Boolean.getBoolean("rpclab.test.quick");

    private final Class<?> provider;
    private final List<String> served;
    private final List<String> refused;
    protected EmbeddedZooKeeper zk;

    /**
     * @param provider the provider's main class
     * @param served every serialization it serves, its default first
     * @param refused serializations it must refuse (besides "nonsense")
     */
    protected DubboProviderCases(Class<?> provider, Collection<String> served, List<String> refused) {
        this.provider = provider;
        this.served = new ArrayList<>(served);
        this.refused = refused;
    }

    /** What the consumer of this JVM needs before it meets the provider. */
    protected abstract void prepareConsumer();

    /** The parameters (`key=value`) the registered provider URL must carry. */
    protected abstract List<String> urlParameters(String serialization);

    /** Calls every method through a consumer that finds the provider in the ZooKeeper at `registry`. */
    protected abstract void callEveryMethodThrough(String registry) throws Exception;

    Stream<String> supported() {
        return QUICK ? Stream.of(served.get(0)) : served.stream();
    }

    Stream<String> unsupported() {
        return QUICK ? Stream.of("nonsense") : Stream.concat(refused.stream(), Stream.of("nonsense"));
    }

    @BeforeAll
    void startZooKeeper() throws Exception {
        zk = new EmbeddedZooKeeper();
        prepareConsumer();
    }

    @AfterAll
    void stopZooKeeper() {
        zk.close();
    }

    /** The provider in a child JVM, configured by the environment as in its container. */
    ProviderProcess start(int port, String serialization) throws Exception {
        Map<String, String> env = new HashMap<>();
        env.put("RPCLAB_PORT", Integer.toString(port));
        env.put("ZK_ADDRESS", zk.address());
        env.put("DUBBO_SERIALIZATION", serialization);
        env.put("DUBBO_THREADS", "16");
        return new ProviderProcess(provider, JVM_FLAGS, env);
    }

    List<String> registeredProviders() throws Exception {
        return zk.children("/dubbo/" + SERVICE + "/providers");
    }

    @ParameterizedTest
    @MethodSource("supported")
    void everyMethodThroughZooKeeper(String serialization) throws Exception {
        int port = ProviderProcess.freePort();
        try (ProviderProcess provider = start(port, serialization)) {
            provider.awaitReady(port);

            List<String> registered = registeredProviders();
            assertEquals(1, registered.size(), "one provider registered: " + registered);
            String url = registered.get(0);
            assertTrue(url.startsWith("dubbo://127.0.0.1:" + port + "/" + SERVICE + "?"), url);
            assertTrue(url.contains("&serialization=" + serialization + "&"), url);
            for (String parameter : urlParameters(serialization)) {
                assertTrue(url.contains("&" + parameter + "&"), parameter + " in " + url);
            }

            callEveryMethodThrough(zk.address());

            assertEquals(0, provider.stop(), "exit status after SIGTERM");
            assertTrue(provider.all.contains("rpclab server stopped"));
            assertEquals(List.of(), registeredProviders(), "unregistered after SIGTERM");
        }
    }

    @ParameterizedTest
    @MethodSource("unsupported")
    void unsupportedSerializationFailsFast(String serialization) throws Exception {
        try (ProviderProcess provider = start(ProviderProcess.freePort(), serialization)) {
            assertTrue(provider.process.waitFor(60, TimeUnit.SECONDS), "exits");
            assertEquals(2, provider.process.exitValue());
            Thread.sleep(200);
            assertTrue(provider.all.stream().anyMatch(l -> l.contains("DUBBO_SERIALIZATION=" + serialization)),
                    String.join("\n", provider.all));
        }
    }

    @Test
    void defaultIsTheFirstServed() {
        assertEquals("hessian2", served.get(0));
    }
}
