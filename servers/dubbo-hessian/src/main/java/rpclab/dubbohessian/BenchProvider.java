package rpclab.dubbohessian;

import com.alibaba.dubbo.common.Version;
import com.alibaba.dubbo.config.ApplicationConfig;
import com.alibaba.dubbo.config.ProtocolConfig;
import com.alibaba.dubbo.config.RegistryConfig;
import com.alibaba.dubbo.config.ServiceConfig;
import rpclab.contract.BenchService;
import rpclab.shared.Dubbo2Export;
import rpclab.shared.Env;
import rpclab.shared.Serving;

/**
 * rpclab Dubbo 2.6 (com.alibaba) provider of rpclab.contract.BenchService
 * over one of Dubbo's HTTP protocols, DUBBO_PROTOCOL: "hessian" (Caucho's
 * HessianSkeleton behind Dubbo's servlet) or "webservice" (Apache CXF's
 * simple frontend behind it), both at
 * http://RPCLAB_ADVERTISE:RPCLAB_PORT/rpclab.contract.BenchService in an
 * embedded Tomcat bound to RPCLAB_BIND ({@link LoopbackTomcatHttpBinder};
 * both 127.0.0.1 unless the lab says otherwise).
 *
 * <p>Environment: RPCLAB_PORT (default 8093), DUBBO_PROTOCOL (default
 * hessian), DUBBO_THREADS (Tomcat's maxThreads through Dubbo's threads,
 * default 200). No registry (N/A): clients of HTTP protocols address the
 * provider by URL, as the seed's consumers could.
 *
 * <p>Prints "rpclab server ready on BIND:PORT/..." once exported;
 * SIGTERM/SIGINT unexport, stop and exit with status 0.
 */
public final class BenchProvider {
    /** The interface Tomcat listens on (RPCLAB_BIND). */
    public static final String BIND = Env.bind();
    /** The host of the exported URL (RPCLAB_ADVERTISE). */
    public static final String ADVERTISE = Env.advertise();
    static final int DEFAULT_PORT = 8093;

    private BenchProvider() {}

    static ServiceConfig<BenchService> start(String protocolName, int port, int threads) {
        ApplicationConfig application = new ApplicationConfig("rpclab-dubbo-" + protocolName + "-provider");
        application.setQosEnable(false);
        ProtocolConfig protocol = new ProtocolConfig(protocolName, port);
        protocol.setHost(ADVERTISE);
        protocol.setServer(LoopbackTomcatHttpBinder.NAME);
        protocol.setThreads(threads);
        return Dubbo2Export.contract(application, new RegistryConfig(RegistryConfig.NO_AVAILABLE), protocol);
    }

    public static void main(String[] args) {
        System.setProperty("dubbo.application.logger", "slf4j");
        int port;
        int threads;
        String protocol = Env.string("DUBBO_PROTOCOL", "hessian");
        try {
            port = Env.integer("RPCLAB_PORT", DEFAULT_PORT, 1, 65535);
            threads = Env.integer("DUBBO_THREADS", 200, 1, 100_000);
            if (!protocol.equals("hessian") && !protocol.equals("webservice")) {
                throw new IllegalArgumentException("DUBBO_PROTOCOL must be hessian or webservice, got: " + protocol);
            }
        } catch (IllegalArgumentException e) {
            Serving.refuse(e.getMessage());
            return;
        }
        ServiceConfig<BenchService> service = start(protocol, port, threads);
        Serving.untilSignalled("rpclab server ready on " + Serving.where(port, "/" + BenchService.class.getName())
                + " (dubbo " + Version.getVersion() + ", protocol " + protocol + ", threads " + threads + ")", () -> {
                    service.unexport();
                    com.alibaba.dubbo.config.DubboShutdownHook.getDubboShutdownHook().destroyAll();
                });
    }
}
