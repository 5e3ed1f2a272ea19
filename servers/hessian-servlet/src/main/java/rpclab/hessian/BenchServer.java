package rpclab.hessian;

import com.caucho.hessian.server.HessianServlet;
import java.io.File;
import java.nio.file.Files;
import java.util.concurrent.CountDownLatch;
import org.apache.catalina.Context;
import org.apache.catalina.LifecycleException;
import org.apache.catalina.connector.Connector;
import org.apache.catalina.startup.Tomcat;
import rpclab.contract.BenchService;
import rpclab.contract.BenchServiceImpl;
import sun.misc.Signal;

/**
 * rpclab Hessian-over-HTTP server: Caucho's {@link HessianServlet} serving
 * {@code rpclab.contract.BenchService} at {@code http://127.0.0.1:PORT/hessian/bench}
 * in an embedded Apache Tomcat 9 (HTTP/1.1 NIO connector bound to 127.0.0.1).
 *
 * <p>Environment: RPCLAB_PORT (default 8090), TOMCAT_THREADS (request worker
 * pool, default 200 = Tomcat's own default maxThreads),
 * TOMCAT_MAX_KEEPALIVE_REQUESTS (requests per keep-alive connection before
 * Tomcat closes it; default -1 = unlimited, where Tomcat's own default is 100:
 * the lab measures RPC calls, not TCP set-up every 100 calls; set 100 to see
 * Tomcat's out-of-the-box behaviour).
 *
 * <p>Deserialization is restricted to an allow-list (HessianServlet's
 * whitelist mode): the contract's classes and the JDK's collection types.
 *
 * <p>Prints "rpclab server ready on 127.0.0.1:PORT" once Tomcat has started;
 * SIGTERM/SIGINT stop Tomcat and exit with status 0.
 */
public final class BenchServer {
    public static final String HOST = "127.0.0.1";
    public static final String PATH = "/hessian/bench";
    static final int DEFAULT_PORT = 8090;

    private BenchServer() {}

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

    /** Starts Tomcat with the servlet on HOST:port; returns it started. */
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
        // The contract's largest request is a 1 MiB string: no POST size limit applies
        // to a servlet reading its input stream, so nothing else to raise.
        tomcat.getService().addConnector(connector);
        tomcat.setConnector(connector);

        Context context = tomcat.addContext("", base.getAbsolutePath());
        Tomcat.addServlet(context, "bench", servlet());
        context.addServletMappingDecoded(PATH, "bench");
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
                + " (" + new File(HessianServlet.class.getProtectionDomain().getCodeSource().getLocation().getPath()).getName()
                + ", tomcat " + org.apache.catalina.util.ServerInfo.getServerNumber()
                + ", threads " + threads + ", maxKeepAliveRequests " + keepAlive + ")");
        System.out.flush();
        stopped.await();
        System.out.println("rpclab server stopped");
        System.out.flush();
        System.exit(0);
    }
}
