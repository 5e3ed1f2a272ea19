package rpclab.cxf;

import rpclab.shared.BenchWs;
import java.io.File;
import java.nio.file.Files;
import java.util.concurrent.CountDownLatch;
import javax.servlet.ServletConfig;
import org.apache.catalina.Context;
import org.apache.catalina.LifecycleException;
import org.apache.catalina.connector.Connector;
import org.apache.catalina.startup.Tomcat;
import org.apache.cxf.Bus;
import org.apache.cxf.jaxws.EndpointImpl;
import org.apache.cxf.transport.servlet.CXFNonSpringServlet;
import sun.misc.Signal;

/**
 * rpclab Apache CXF server: {@link BenchWs} published through CXF's JAX-WS
 * frontend on CXF's servlet transport ({@link CXFNonSpringServlet}, mapped at
 * /services/*) in an embedded Apache Tomcat 9 (HTTP/1.1 NIO connector bound
 * to 127.0.0.1). The service is at /services/bench, its WSDL at
 * /services/bench?wsdl.
 *
 * <p>Environment: RPCLAB_PORT (default 8092), TOMCAT_THREADS (default 200 =
 * Tomcat's maxThreads default), TOMCAT_MAX_KEEPALIVE_REQUESTS (default -1 =
 * unlimited; Tomcat's own default is 100).
 *
 * <p>Prints "rpclab server ready on 127.0.0.1:PORT" once Tomcat has started;
 * SIGTERM/SIGINT stop Tomcat and exit with status 0.
 */
public final class BenchServer {
    public static final String HOST = "127.0.0.1";
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

    static int intEnv(String name, int dflt, int min, int max) {
        String v = System.getenv(name);
        if (v == null || v.trim().isEmpty()) {
            return dflt;
        }
        try {
            int n = Integer.parseInt(v.trim());
            if (n < min || n > max) {
                throw new NumberFormatException("out of range");
            }
            return n;
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(name + " must be an integer in " + min + ".." + max + ", got: " + v, e);
        }
    }

    /** Starts Tomcat with CXF's servlet on HOST:port; returns it started. */
    static Tomcat start(int port, int threads, int maxKeepAliveRequests) throws Exception {
        File base = Files.createTempDirectory("rpclab-tomcat").toFile();
        base.deleteOnExit();
        Tomcat tomcat = new Tomcat();
        tomcat.setBaseDir(base.getAbsolutePath());

        Connector connector = new Connector("org.apache.coyote.http11.Http11NioProtocol");
        connector.setPort(port);
        connector.setProperty("address", HOST);
        connector.setProperty("maxThreads", Integer.toString(threads));
        connector.setProperty("maxKeepAliveRequests", Integer.toString(maxKeepAliveRequests));
        tomcat.getService().addConnector(connector);
        tomcat.setConnector(connector);

        Context context = tomcat.addContext("", base.getAbsolutePath());
        org.apache.catalina.Wrapper servlet = Tomcat.addServlet(context, "cxf", new BenchCxfServlet());
        servlet.setLoadOnStartup(1);
        context.addServletMappingDecoded("/services/*", "cxf");
        tomcat.start();
        return tomcat;
    }

    public static void main(String[] args) throws Exception {
        int port;
        int threads;
        int keepAlive;
        try {
            port = intEnv("RPCLAB_PORT", DEFAULT_PORT, 1, 65535);
            threads = intEnv("TOMCAT_THREADS", 200, 1, 100_000);
            keepAlive = intEnv("TOMCAT_MAX_KEEPALIVE_REQUESTS", -1, -1, Integer.MAX_VALUE);
        } catch (IllegalArgumentException e) {
            System.err.println("rpclab: " + e.getMessage());
            System.exit(2);
            return;
        }
        Tomcat tomcat = start(port, threads, keepAlive);
        CountDownLatch stopped = new CountDownLatch(1);
        Runnable stop = () -> {
            try {
                tomcat.stop();
                tomcat.destroy();
            } catch (LifecycleException e) {
                System.err.println("rpclab: stop failed: " + e);
            } finally {
                stopped.countDown();
            }
        };
        for (String name : new String[] {"TERM", "INT"}) {
            Signal.handle(new Signal(name), s -> new Thread(stop, "rpclab-stop").start());
        }
        System.out.println("rpclab server ready on " + HOST + ":" + port + PATH
                + " (cxf " + org.apache.cxf.version.Version.getCurrentVersion()
                + ", tomcat " + org.apache.catalina.util.ServerInfo.getServerNumber()
                + ", threads " + threads + ", maxKeepAliveRequests " + keepAlive + ")");
        System.out.flush();
        stopped.await();
        System.out.println("rpclab server stopped");
        System.out.flush();
        System.exit(0);
    }
}
