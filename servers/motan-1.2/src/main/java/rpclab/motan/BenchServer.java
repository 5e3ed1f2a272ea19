package rpclab.motan;

import com.weibo.api.motan.common.MotanConstants;
import com.weibo.api.motan.config.ProtocolConfig;
import com.weibo.api.motan.config.RegistryConfig;
import com.weibo.api.motan.config.ServiceConfig;
import com.weibo.api.motan.rpc.Exporter;
import com.weibo.api.motan.rpc.URL;
import com.weibo.api.motan.util.MotanSwitcherUtil;
import java.util.List;
import java.util.Set;
import rpclab.contract.BenchService;
import rpclab.contract.BenchServiceImpl;
import rpclab.shared.Env;
import rpclab.shared.Serving;

/**
 * rpclab Weibo Motan provider: exports rpclab.contract.BenchService over the
 * motan2 protocol on RPCLAB_BIND:RPCLAB_PORT (default 127.0.0.1:8002) and
 * registers it in the ZooKeeper at ZK_ADDRESS (default
 * zookeeper://127.0.0.1:2181), under
 * /motan/MOTAN_GROUP/rpclab.contract.BenchService/server/ADVERTISE:PORT
 * (RPCLAB_ADVERTISE: default the bind address, or 127.0.0.1 for 0.0.0.0).
 *
 * <p>Environment: MOTAN_SERIALIZATION (hessian2, the default, or simple),
 * MOTAN_GROUP (default rpclab), MOTAN_REGISTRY ("zookeeper", the default:
 * node data Java-serialized by zkclient; or "zk": plain UTF-8),
 * MOTAN_MIN_WORKERS / MOTAN_MAX_WORKERS (the business thread pool; Motan's
 * defaults when unset), MOTAN_MIN_CLIENT_CONNECTIONS /
 * MOTAN_MAX_CLIENT_CONNECTIONS (the seed's pool, 100/200, published in the
 * registered URL for Motan referers).
 *
 * <p>Motan registers a service as unavailable (under unavailableServer/) until
 * the registry heartbeat switcher is turned on; this provider turns it on once
 * exported, as a Motan application does when it is ready for traffic.
 *
 * <p>Prints "rpclab server ready on BIND:PORT" once exported and made
 * available; SIGTERM/SIGINT unregister, stop and exit with status 0.
 */
public final class BenchServer {
    /** The interface the endpoint factory's server listens on (RPCLAB_BIND). */
    static final String BIND = Env.bind();
    /** The host registered and put in the exported URL (RPCLAB_ADVERTISE). */
    static final String ADVERTISE = Env.advertise();
    static final int DEFAULT_PORT = 8002;
    static final String DEFAULT_REGISTRY = "zookeeper://127.0.0.1:2181";
    static final Set<String> SERIALIZATIONS = Set.of("hessian2", "simple");
    static final Set<String> REGISTRIES = Set.of("zookeeper", "zk");
    /** The interface's version in the service key (Motan's default). */
    static final String VERSION = "1.0";

    private BenchServer() {}

    static String oneOf(String name, String dflt, Set<String> allowed) {
        String v = Env.string(name, dflt);
        if (!allowed.contains(v)) {
            throw new IllegalArgumentException(name + "=" + v + " is not served by this provider; use one of " + allowed);
        }
        return v;
    }

    /** "zookeeper://127.0.0.1:2181" (Dubbo-style, as the lab passes it) or "127.0.0.1:2181". */
    static String zkAddress(String value) {
        String address = value.startsWith("zookeeper://") ? value.substring("zookeeper://".length()) : value;
        int slash = address.indexOf('/');
        return slash < 0 ? address : address.substring(0, slash);
    }

    /**
     * ServiceConfig that registers {@link #ADVERTISE} (127.0.0.1 by default).
     *
     * <p>Motan treats 127.x as "invalid" for a provider host (NetUtils.isInvalidLocalHost)
     * and replaces it with getLocalHostAddress(), the first non-loopback address it finds
     * (with --network host: the host's LAN address), which ZooKeeper would then publish.
     * Both signatures are overridden: 1.2.x calls getLocalHostAddress(), 1.1.x
     * getLocalHostAddress(List) (no @Override, so one source builds against both).
     */
    static final class LoopbackServiceConfig<T> extends ServiceConfig<T> {
        private static final long serialVersionUID = 1L;

        protected String getLocalHostAddress() {
            return ADVERTISE;
        }

        protected String getLocalHostAddress(List<URL> registryUrls) {
            return ADVERTISE;
        }
    }

    /** Exports and registers the service; returns it. */
    static ServiceConfig<BenchService> start(int port, String zk, String registryType, String serialization,
            String group, Integer minWorkers, Integer maxWorkers, Integer minClientConns, Integer maxClientConns) {
        // ZooKeeper 3.4's client (what zkclient 0.11 and Motan bring) cannot
        // connect on Java 14+ with SASL on: SaslServerPrincipal fails with
        // "Unable to canonicalize address 127.0.0.1/<unresolved>:2181"
        // (ZOOKEEPER-3779). The lab's ZooKeeper has no SASL anyway.
        if (System.getProperty("zookeeper.sasl.client") == null) {
            System.setProperty("zookeeper.sasl.client", "false");
        }
        RegistryConfig registry = new RegistryConfig();
        registry.setRegProtocol(registryType);
        registry.setAddress(zkAddress(zk));
        registry.setConnectTimeout(10_000);

        ProtocolConfig protocol = new ProtocolConfig();
        protocol.setId("motan2");
        protocol.setName("motan2");
        protocol.setSerialization(serialization);
        protocol.setEndpointFactory("rpclab-loopback");
        protocol.setMaxContentLength(16 * 1024 * 1024);
        if (minWorkers != null) {
            protocol.setMinWorkerThread(minWorkers);
        }
        if (maxWorkers != null) {
            protocol.setMaxWorkerThread(maxWorkers);
        }
        if (minClientConns != null) {
            protocol.setMinClientConnection(minClientConns);
        }
        if (maxClientConns != null) {
            protocol.setMaxClientConnection(maxClientConns);
        }

        ServiceConfig<BenchService> service = new LoopbackServiceConfig<>();
        service.setInterface(BenchService.class);
        service.setRef(new BenchServiceImpl());
        service.setApplication("rpclab");
        service.setModule("rpclab-motan");
        service.setGroup(group);
        service.setVersion(VERSION);
        service.setShareChannel(true);
        service.setRegistry(registry);
        service.setProtocol(protocol);
        service.setExport("motan2:" + port);
        service.export();
        // Registered under unavailableServer/ so far: the registry heartbeat
        // switcher moves every exported service to server/.
        MotanSwitcherUtil.setSwitcherValue(MotanConstants.REGISTRY_HEARTBEAT_SWITCHER, true);
        return service;
    }

    public static void main(String[] args) {
        int port = Serving.port(DEFAULT_PORT, 1);
        String zk;
        String registryType;
        String serialization;
        String group;
        Integer minWorkers;
        Integer maxWorkers;
        Integer minClientConns;
        Integer maxClientConns;
        try {
            zk = Env.string("ZK_ADDRESS", DEFAULT_REGISTRY);
            registryType = oneOf("MOTAN_REGISTRY", "zookeeper", REGISTRIES);
            serialization = oneOf("MOTAN_SERIALIZATION", "hessian2", SERIALIZATIONS);
            group = Env.string("MOTAN_GROUP", "rpclab");
            minWorkers = Env.integer("MOTAN_MIN_WORKERS", null, 1, 100_000);
            maxWorkers = Env.integer("MOTAN_MAX_WORKERS", null, 1, 100_000);
            minClientConns = Env.integer("MOTAN_MIN_CLIENT_CONNECTIONS", null, 1, 100_000);
            maxClientConns = Env.integer("MOTAN_MAX_CLIENT_CONNECTIONS", null, 1, 100_000);
        } catch (RuntimeException e) {
            Serving.refuse(e.getMessage());
            return;
        }

        ServiceConfig<BenchService> service;
        try {
            service = start(port, zk, registryType, serialization, group,
                    minWorkers, maxWorkers, minClientConns, maxClientConns);
        } catch (RuntimeException | LinkageError e) {
            // Motan's threads would keep a half-started JVM alive.
            System.err.println("rpclab: cannot export the service: " + e);
            e.printStackTrace();
            System.exit(1);
            return;
        }
        for (Exporter<BenchService> exporter : service.getExporters()) {
            URL url = exporter.getUrl();
            System.out.println("rpclab motan exported " + url.toFullStr());
            if (!ADVERTISE.equals(url.getHost())) {
                throw new IllegalStateException("exported URL host is " + url.getHost() + ", not " + ADVERTISE + ": " + url);
            }
        }

        Serving.untilSignalled("rpclab server ready on " + Serving.where(port) + " (motan " + motanVersion()
                + ", motan2, serialization " + serialization + ", group " + group + ", registry " + registryType
                + " at " + zkAddress(zk) + ")", () -> {
                    MotanSwitcherUtil.setSwitcherValue(MotanConstants.REGISTRY_HEARTBEAT_SWITCHER, false);
                    service.unexport(); // unregisters from ZooKeeper, closes the server
                });
    }

    /** motan-core's version, from the pom.properties Maven put in its jar. */
    static String motanVersion() {
        try (java.io.InputStream in = ServiceConfig.class.getResourceAsStream(
                "/META-INF/maven/com.weibo/motan-core/pom.properties")) {
            java.util.Properties p = new java.util.Properties();
            if (in != null) {
                p.load(in);
            }
            return p.getProperty("version", "unknown");
        } catch (java.io.IOException e) {
            return "unknown";
        }
    }
}
