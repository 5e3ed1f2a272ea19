package rpclab.hessian;

import com.caucho.hessian.server.HessianServlet;
import java.io.File;
import org.apache.catalina.Context;
import org.apache.catalina.startup.Tomcat;
import rpclab.contract.BenchService;
import rpclab.contract.BenchServiceImpl;
import rpclab.shared.EmbeddedTomcat;

/**
 * rpclab Hessian-over-HTTP server: Caucho's {@link HessianServlet} serving
 * {@code rpclab.contract.BenchService} at {@code http://BIND:PORT/hessian/bench}
 * in the lab's {@link EmbeddedTomcat} (Tomcat 9, HTTP/1.1 NIO connector bound
 * to RPCLAB_BIND, default 127.0.0.1; Hessian hands out no address, so
 * RPCLAB_ADVERTISE is not used).
 *
 * <p>Environment: RPCLAB_PORT (default 8090), TOMCAT_THREADS (default 200),
 * TOMCAT_MAX_KEEPALIVE_REQUESTS (default -1 = unlimited; set 100 to see
 * Tomcat's out-of-the-box behaviour): see {@link EmbeddedTomcat}.
 *
 * <p>Deserialization is restricted to an allow-list (HessianServlet's
 * whitelist mode): the contract's classes and the JDK's collection types.
 *
 * <p>Prints "rpclab server ready on BIND:PORT/hessian/bench" once Tomcat has started;
 * SIGTERM/SIGINT stop Tomcat and exit with status 0.
 */
public final class BenchServer {
    public static final String HOST = EmbeddedTomcat.HOST;
    public static final String PATH = "/hessian/bench";
    static final int DEFAULT_PORT = 8090;

    private BenchServer() {}

    /** The servlet, configured in code exactly as web.xml init-params would (home-api, home-class). */
    static HessianServlet servlet() {
        HessianServlet servlet = new HessianServlet();
        servlet.setHomeAPI(BenchService.class);
        servlet.setHome(new BenchServiceImpl());
        servlet.setWhitelist(true);
        servlet.allow("rpclab.contract.*");
        servlet.allow("java.util.*");
        return servlet;
    }

    /** The servlet, at PATH. */
    static void addServlets(Context context) {
        // The contract's largest request is a 1 MiB string: no POST size limit applies
        // to a servlet reading its input stream, so nothing else to raise.
        Tomcat.addServlet(context, "bench", servlet());
        context.addServletMappingDecoded(PATH, "bench");
    }

    /** Starts Tomcat with the servlet on HOST:port; returns it started. */
    static Tomcat start(int port, int threads, int maxKeepAliveRequests) throws Exception {
        return EmbeddedTomcat.start(port, threads, maxKeepAliveRequests, BenchServer::addServlets);
    }

    public static void main(String[] args) throws Exception {
        String jar = new File(HessianServlet.class.getProtectionDomain().getCodeSource().getLocation().getPath()).getName();
        EmbeddedTomcat.serve(DEFAULT_PORT, PATH, jar, BenchServer::addServlets);
    }
}
