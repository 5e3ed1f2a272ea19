package rpclab.shared;

import java.io.File;
import java.nio.file.Files;
import java.util.function.Consumer;
import org.apache.catalina.Context;
import org.apache.catalina.LifecycleException;
import org.apache.catalina.connector.Connector;
import org.apache.catalina.startup.Tomcat;

/**
 * The embedded Apache Tomcat 9 the servlet servers run in, set up the same
 * way for each: one HTTP/1.1 NIO connector bound to 127.0.0.1, a temporary
 * base directory, one root context the server adds its servlets to.
 *
 * <p>Environment ({@link #serve}): RPCLAB_PORT, TOMCAT_THREADS
 * (request worker pool, default 200 = Tomcat's own maxThreads default),
 * TOMCAT_MAX_KEEPALIVE_REQUESTS (requests per keep-alive connection before
 * Tomcat closes it; default -1 = unlimited, where Tomcat's own default is 100:
 * the lab measures RPC calls, not TCP set-up every 100 calls).
 */
public final class EmbeddedTomcat {
    public static final String HOST = "127.0.0.1";

    private EmbeddedTomcat() {}

    /**
     * A servlet server's main: reads the settings (a bad one is refused with
     * status 2), starts Tomcat with `servlets`, prints "rpclab server ready on
     * 127.0.0.1:PORT" + `path` + " (" + `what` + ", tomcat VERSION, threads N,
     * maxKeepAliveRequests K)" and serves until SIGTERM/SIGINT ({@link Serving}).
     */
    public static void serve(int defaultPort, String path, String what, Consumer<Context> servlets) throws Exception {
        int port;
        int threads;
        int keepAlive;
        try {
            port = Env.integer("RPCLAB_PORT", defaultPort, 1, 65535);
            threads = Env.integer("TOMCAT_THREADS", 200, 1, 100_000);
            keepAlive = Env.integer("TOMCAT_MAX_KEEPALIVE_REQUESTS", -1, -1, Integer.MAX_VALUE);
        } catch (IllegalArgumentException e) {
            Serving.refuse(e.getMessage());
            return;
        }
        Tomcat tomcat = start(port, threads, keepAlive, servlets);
        Serving.untilSignalled("rpclab server ready on " + HOST + ":" + port + path + " (" + what
                + ", tomcat " + org.apache.catalina.util.ServerInfo.getServerNumber() + ", threads " + threads
                + ", maxKeepAliveRequests " + keepAlive + ")", () -> stop(tomcat));
    }

    /** Starts Tomcat on HOST:port after `servlets` has added the servlets to the root context; returns it started. */
    public static Tomcat start(int port, int threads, int maxKeepAliveRequests, Consumer<Context> servlets)
            throws Exception {
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

        servlets.accept(tomcat.addContext("", base.getAbsolutePath()));
        tomcat.start();
        return tomcat;
    }

    /** Stops and destroys `tomcat`; a failure is an IllegalStateException (Serving prints it). */
    static void stop(Tomcat tomcat) {
        try {
            tomcat.stop();
            tomcat.destroy();
        } catch (LifecycleException e) {
            throw new IllegalStateException(e);
        }
    }
}
