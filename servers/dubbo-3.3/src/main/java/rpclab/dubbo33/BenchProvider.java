package rpclab.dubbo33;

import rpclab.contract.BenchServiceImpl;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.dubbo.common.URL;
import org.apache.dubbo.common.serialize.Serialization;
import org.apache.dubbo.config.ApplicationConfig;
import org.apache.dubbo.config.MetricsConfig;
import org.apache.dubbo.config.ProtocolConfig;
import org.apache.dubbo.config.RegistryConfig;
import org.apache.dubbo.config.ServiceConfig;
import org.apache.dubbo.config.bootstrap.DubboBootstrap;
import org.apache.dubbo.rpc.model.FrameworkModel;
import rpclab.contract.BenchService;
import rpclab.shared.Dubbo3Loopback;
import rpclab.shared.Env;
import rpclab.shared.Serving;

/**
 * rpclab Apache Dubbo 3.3 provider: exports rpclab.contract.BenchService over
 * the dubbo protocol on RPCLAB_BIND:RPCLAB_PORT (default 127.0.0.1:20880) and
 * registers it as RPCLAB_ADVERTISE (default the bind address, or 127.0.0.1
 * for 0.0.0.0; interface-level, under
 * /dubbo/rpclab.contract.BenchService/providers) in the ZooKeeper at
 * ZK_ADDRESS (default zookeeper://127.0.0.1:2181).
 *
 * <p>Environment: DUBBO_SERIALIZATION (default hessian2; see SERIALIZATIONS),
 * DUBBO_THREADS (fixed business thread pool, default 200). Configured with the
 * DubboBootstrap API; the seed used the equivalent Spring XML
 * (dubbo:application, dubbo:registry, dubbo:protocol threads="200", dubbo:service).
 *
 * <p>Prints "rpclab server ready on BIND:PORT" once exported and
 * registered; SIGTERM/SIGINT unregister, stop and exit with status 0.
 */
public final class BenchProvider {
    /** The host registered and put in the provider URL (RPCLAB_ADVERTISE). */
    static final String HOST = Dubbo3Loopback.ADVERTISE;
    static final int DEFAULT_PORT = 20880;
    static final String DEFAULT_REGISTRY = "zookeeper://127.0.0.1:2181";
    static final String DEFAULT_SERIALIZATION = "hessian2";
    static final int DEFAULT_THREADS = 200;

    /**
     * Serializations this provider serves (DUBBO_SERIALIZATION), each verified
     * end to end by BenchProviderIT. Value: where it comes from.
     */
    static final Map<String, String> SERIALIZATIONS = new LinkedHashMap<>();

    static {
        SERIALIZATIONS.put("hessian2", "Dubbo core (hessian-lite), the default");
        SERIALIZATIONS.put("fastjson2", "Dubbo core (fastjson2)");
        SERIALIZATIONS.put("java", "dubbo-spi-extensions dubbo-serialization-jdk (java.io object streams)");
        SERIALIZATIONS.put("compactedjava", "dubbo-spi-extensions dubbo-serialization-jdk");
        SERIALIZATIONS.put("nativejava", "dubbo-spi-extensions dubbo-serialization-jdk");
        SERIALIZATIONS.put("kryo", "dubbo-spi-extensions dubbo-serialization-kryo (Kryo 5)");
    }

    private BenchProvider() {}

    static String serializationFromEnv() {
        String s = Env.string("DUBBO_SERIALIZATION", DEFAULT_SERIALIZATION);
        if (!SERIALIZATIONS.containsKey(s)) {
            throw new IllegalArgumentException("DUBBO_SERIALIZATION=" + s + " is not served by this Dubbo "
                    + org.apache.dubbo.common.Version.getVersion() + " provider; use one of " + SERIALIZATIONS.keySet()
                    + " (the old \"dubbo\" serialization is not in Dubbo 2.6.x or 3.x; fst is not packaged in this provider)");
        }
        if (!FrameworkModel.defaultModel().getExtensionLoader(Serialization.class).hasExtension(s)) {
            throw new IllegalStateException("serialization extension '" + s + "' is not on the classpath");
        }
        return s;
    }

    /**
     * Makes Dubbo's idea of "the local host" {@link #HOST} (see
     * {@link Dubbo3Loopback#pinLocalHost()}).
     */
    public static void pinLocalHost() {
        Dubbo3Loopback.pinLocalHost();
    }

    /** Exports the service; returns the started bootstrap. */
    static DubboBootstrap start(int port, String registryAddress, String serialization, int threads) {
        // The address Dubbo registers: RPCLAB_ADVERTISE, never a container/bridge
        // IP Dubbo would pick. (The socket itself is bound to RPCLAB_BIND by
        // Dubbo3LoopbackTransporter.)
        pinLocalHost();
        // No QoS/telnet server, no metrics/metadata ports, no caches on disk.
        System.setProperty("dubbo.application.qos-enable", "false");

        ApplicationConfig application = new ApplicationConfig("rpclab-dubbo-3.3-provider");
        application.setQosEnable(false);
        // Interface-level registration only (/dubbo/<interface>/providers), as
        // Dubbo 2.x did: no application-level service discovery, so no
        // MetadataService export and no metadata port.
        application.setRegisterMode("interface");
        application.setEnableFileCache(false);
        application.setMetadataType("local");
        // Serialization security: strict allow-list. The contract's classes are
        // allowed by src/main/resources/security/serialize.allowlist (prefix
        // "rpclab.contract"), not by auto-trusting the interface's types.
        application.setSerializeCheckStatus("STRICT");
        application.setAutoTrustSerializeClass(false);
        application.setCheckSerializable(true);

        RegistryConfig registry = new RegistryConfig(registryAddress);
        registry.setUseAsConfigCenter(false);
        registry.setUseAsMetadataCenter(false);
        registry.setRegisterMode("interface");
        registry.setTimeout(30_000);
        Map<String, String> registryParams = new HashMap<>();
        registryParams.put("file.cache", "false");
        registry.setParameters(registryParams);

        ProtocolConfig protocol = new ProtocolConfig("dubbo", port);
        protocol.setHost(HOST);
        protocol.setSerialization(serialization);
        // Dubbo 3.2+ advertises prefer.serialization (default "fastjson2,hessian2")
        // and 3.x consumers then pick its first entry: pin it to the chosen one.
        protocol.setPreferSerialization(serialization);
        protocol.setThreadpool("fixed");
        protocol.setThreads(threads);
        protocol.setPayload(16 * 1024 * 1024);

        MetricsConfig metrics = new MetricsConfig();
        metrics.setEnableJvm(false);
        metrics.setEnableRegistry(false);
        metrics.setEnableMetadata(false);
        metrics.setEnableRpc(false);
        metrics.setEnableNetty(false);
        metrics.setEnableThreadpool(false);
        metrics.setEnableMetricsInit(false);
        metrics.setExportMetricsService(false);

        ServiceConfig<BenchService> service = new ServiceConfig<>();
        service.setInterface(BenchService.class);
        service.setRef(new BenchServiceImpl());

        DubboBootstrap bootstrap = DubboBootstrap.getInstance()
                .application(application)
                .registry(registry)
                .protocol(protocol)
                .metrics(metrics)
                .service(service);
        bootstrap.start(true);
        List<URL> urls = service.getExportedUrls();
        for (URL url : urls) {
            System.out.println("rpclab dubbo exported " + url.toFullString());
            if (!HOST.equals(url.getHost())) {
                throw new IllegalStateException("exported URL host is " + url.getHost() + ", not " + HOST + ": " + url);
            }
        }
        return bootstrap;
    }

    public static void main(String[] args) {
        int port = Env.integer("RPCLAB_PORT", DEFAULT_PORT, 1, 65535);
        String registry = Env.string("ZK_ADDRESS", DEFAULT_REGISTRY);
        int threads = Env.integer("DUBBO_THREADS", DEFAULT_THREADS, 1, 100_000);
        String serialization;
        try {
            serialization = serializationFromEnv();
        } catch (RuntimeException e) {
            Serving.refuse(e.getMessage());
            return;
        }

        DubboBootstrap bootstrap = start(port, registry, serialization, threads);
        // stop(): unregisters from ZooKeeper, closes the server
        Serving.untilSignalled("rpclab server ready on " + Serving.where(port)
                + " (dubbo " + org.apache.dubbo.common.Version.getVersion()
                + ", serialization " + serialization + ", threads " + threads + ", registry " + registry + ")",
                bootstrap::stop);
    }
}
