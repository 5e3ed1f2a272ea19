package rpclab.sofa;

import com.alipay.sofa.rpc.common.Version;
import com.alipay.sofa.rpc.config.ApplicationConfig;
import com.alipay.sofa.rpc.config.ProviderConfig;
import com.alipay.sofa.rpc.config.RegistryConfig;
import com.alipay.sofa.rpc.config.ServerConfig;
import com.alipay.sofa.rpc.context.RpcRuntimeContext;
import rpclab.contract.BenchService;
import rpclab.contract.BenchServiceImpl;
import rpclab.shared.Env;
import rpclab.shared.Serving;

/**
 * rpclab SOFA-RPC provider: exports rpclab.contract.BenchService over bolt
 * (hessian2) on RPCLAB_BIND:RPCLAB_PORT (default 127.0.0.1:12200) and
 * registers it, as RPCLAB_ADVERTISE (default the bind address, or 127.0.0.1
 * for 0.0.0.0), in the
 * ZooKeeper at ZK_ADDRESS (default zookeeper://127.0.0.1:2181), under
 * /sofa-rpc/rpclab.contract.BenchService/providers.
 *
 * <p>Environment: SOFA_CORE_THREADS / SOFA_MAX_THREADS, the bolt server's
 * business pool; unset (or 0), SOFA-RPC keeps its own default (ServerConfig's
 * core 20 / max 200). Seed 004's "min 100 / max 200" are client connections,
 * not threads, so the lab's definition leaves them unset. Configured
 * with SOFA-RPC's own API (ProviderConfig, ServerConfig, RegistryConfig), the
 * same objects its Spring XML / SOFABoot configuration builds.
 *
 * <p>Prints "rpclab server ready on BIND:PORT" once exported and
 * registered; SIGTERM/SIGINT unregister, stop and exit with status 0.
 */
public final class BenchProvider {
    /** The interface the server listens on (RPCLAB_BIND). */
    static final String BIND = Env.bind();
    /** The host it registers (RPCLAB_ADVERTISE). */
    static final String ADVERTISE = Env.advertise();
    static final int DEFAULT_PORT = 12200;
    static final String DEFAULT_REGISTRY = "zookeeper://127.0.0.1:2181";
    /** 0: keep SOFA-RPC's default pool size. */
    static final int DEFAULT_CORE_THREADS = 0;
    static final int DEFAULT_MAX_THREADS = 0;

    private BenchProvider() {}

    /** "zookeeper://host:port[,host:port]" (the lab's form) to SOFA's address "host:port[,...]". */
    static String zkAddress(String url) {
        String prefix = "zookeeper://";
        if (!url.startsWith(prefix)) {
            throw new IllegalArgumentException("ZK_ADDRESS must look like zookeeper://127.0.0.1:2181, got: " + url);
        }
        String rest = url.substring(prefix.length());
        int end = rest.indexOf('/');
        return end < 0 ? rest : rest.substring(0, end);
    }

    /** Exports the service; returns its provider config. */
    static ProviderConfig<BenchService> start(int port, String zk, int coreThreads, int maxThreads) {
        // SOFA-RPC reads system properties over its JSON defaults
        // (RpcConfigs), and must read these before its classes initialise:
        // - no tracer: sofa-rpc-all turns SOFATracer on, which writes a log
        //   line per call (the contract forbids logging per call);
        System.setProperty("default.tracer", "");

        RegistryConfig registry = new RegistryConfig()
                .setProtocol("zookeeper")
                .setAddress(zkAddress(zk))
                .setConnectTimeout(30_000);

        ServerConfig server = new ServerConfig()
                .setProtocol("bolt")
                .setPort(port)
                // bound to RPCLAB_BIND only (127.0.0.1 by default) ...
                .setHost(BIND)
                // ... and registered as RPCLAB_ADVERTISE: SOFA replaces a
                // loopback or any-address host by the machine's first
                // non-loopback address when it builds the registered URL,
                // unless a virtual host is set.
                .setVirtualHost(ADVERTISE)
                .setSerialization("hessian2")
                .setDaemon(false)
                .setAdaptivePort(false);
        if (coreThreads > 0) {
            server.setCoreThreads(coreThreads);
        }
        if (maxThreads > 0) {
            server.setMaxThreads(maxThreads);
        }

        ProviderConfig<BenchService> provider = new ProviderConfig<BenchService>()
                .setApplication(new ApplicationConfig().setAppName("rpclab-sofa-provider"))
                .setInterfaceId(BenchService.class.getName())
                .setRef(new BenchServiceImpl())
                .setServer(server)
                .setRegistry(registry)
                .setSerialization("hessian2");
        provider.export();
        return provider;
    }

    public static void main(String[] args) {
        int port = Serving.port(DEFAULT_PORT, 1);
        String zk;
        int core;
        int max;
        try {
            zk = Env.string("ZK_ADDRESS", DEFAULT_REGISTRY);
            zkAddress(zk);
            core = Env.integer("SOFA_CORE_THREADS", DEFAULT_CORE_THREADS, 0, 100_000);
            max = Env.integer("SOFA_MAX_THREADS", DEFAULT_MAX_THREADS, 0, 100_000);
            if (core > 0 && max > 0 && max < core) {
                throw new IllegalArgumentException("SOFA_MAX_THREADS must be at least SOFA_CORE_THREADS");
            }
        } catch (RuntimeException e) {
            Serving.refuse(e.getMessage());
            return;
        }

        ProviderConfig<BenchService> provider = start(port, zk, core, max);

        Serving.untilSignalled("rpclab server ready on " + Serving.where(port)
                + " (sofa-rpc " + Version.VERSION + ", bolt, hessian2, business pool core " + core
                + " / max " + max + ", registry " + zk + ")", () -> {
                    provider.unExport(); // unregisters from ZooKeeper
                    RpcRuntimeContext.destroy(); // closes the server and the registry client
                });
    }
}
