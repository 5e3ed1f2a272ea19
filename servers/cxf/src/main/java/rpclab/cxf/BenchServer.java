package rpclab.cxf;

import javax.servlet.ServletConfig;
import org.apache.catalina.Context;
import org.apache.catalina.startup.Tomcat;
import org.apache.cxf.Bus;
import org.apache.cxf.jaxws.EndpointImpl;
import org.apache.cxf.transport.servlet.CXFNonSpringServlet;
import rpclab.shared.BenchWs;
import rpclab.shared.EmbeddedTomcat;

/**
 * rpclab Apache CXF server: {@link BenchWs} published through CXF's JAX-WS
 * frontend on CXF's servlet transport ({@link CXFNonSpringServlet}, mapped at
 * /services/*) in the lab's {@link EmbeddedTomcat} (Tomcat 9, HTTP/1.1 NIO
 * connector bound to RPCLAB_BIND, default 127.0.0.1). The service is at
 * /services/bench, its WSDL at /services/bench?wsdl; CXF's servlet writes the
 * host a request came to into the WSDL's soap:address, so RPCLAB_ADVERTISE is
 * not needed.
 *
 * <p>Environment: RPCLAB_PORT (default 8092), TOMCAT_THREADS (default 200 =
 * Tomcat's maxThreads default), TOMCAT_MAX_KEEPALIVE_REQUESTS (default -1 =
 * unlimited; Tomcat's own default is 100).
 *
 * <p>Prints "rpclab server ready on BIND:PORT/services/bench" once Tomcat has started;
 * SIGTERM/SIGINT stop Tomcat and exit with status 0.
 */
public final class BenchServer {
    public static final String HOST = EmbeddedTomcat.HOST;
    public static final String PATH = "/services/bench";
    static final int DEFAULT_PORT = 8092;

    private BenchServer() {}

    /** The servlet, publishing the endpoint on its bus once it has one (the non-Spring way). */
    public static final class BenchCxfServlet extends CXFNonSpringServlet {
        private static final long serialVersionUID = 1L;

        @Override
        protected void loadBus(ServletConfig config) {
            super.loadBus(config);
            Bus bus = getBus();
            EndpointImpl endpoint = new EndpointImpl(bus, new BenchWs());
            endpoint.publish("/bench");
        }
    }

    /** CXF's servlet, mapped at /services/*. */
    static void addServlets(Context context) {
        org.apache.catalina.Wrapper servlet = Tomcat.addServlet(context, "cxf", new BenchCxfServlet());
        servlet.setLoadOnStartup(1);
        context.addServletMappingDecoded("/services/*", "cxf");
    }

    /** Starts Tomcat with CXF's servlet on HOST:port; returns it started. */
    static Tomcat start(int port, int threads, int maxKeepAliveRequests) throws Exception {
        return EmbeddedTomcat.start(port, threads, maxKeepAliveRequests, BenchServer::addServlets);
    }

    public static void main(String[] args) throws Exception {
        EmbeddedTomcat.serve(DEFAULT_PORT, PATH, "cxf " + org.apache.cxf.version.Version.getCurrentVersion(),
                BenchServer::addServlets);
    }
}
