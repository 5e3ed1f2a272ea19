package rpclab.jaxws;

import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import javax.xml.ws.Endpoint;
import rpclab.shared.BenchWs;
import rpclab.shared.Env;
import rpclab.shared.Serving;

/**
 * rpclab "Java 6 WebService" server: {@link BenchWs} published with
 * {@code Endpoint.publish("http://BIND:PORT/bench")} (RPCLAB_BIND, default
 * 127.0.0.1) on the JDK's built-in HTTP server, by the JAX-WS reference
 * implementation. WSDL at {@code /bench?wsdl}; its soap:address names the
 * host the request for it came to, so RPCLAB_ADVERTISE is not needed.
 *
 * <p>Environment: RPCLAB_PORT (default 8091), JAXWS_THREADS (default 200: a
 * fixed pool set with Endpoint.setExecutor; 0 keeps Endpoint.publish's
 * default, where the HTTP server's single dispatcher thread runs every
 * request, as a Java 6 program that set no executor did), HTTPSERVER_NODELAY
 * (default true: sets sun.net.httpserver.nodelay, TCP_NODELAY on accepted
 * sockets; the JDK HTTP server's own default is false, which costs a
 * delayed-ACK wait of about 40 ms per reply on Linux).
 *
 * <p>Prints "rpclab server ready on BIND:PORT/bench" once published;
 * SIGTERM/SIGINT stop the endpoint and exit with status 0.
 */
public final class BenchServer {
    /** The interface the HTTP server listens on (RPCLAB_BIND). */
    public static final String HOST = Env.bind();
    public static final String PATH = "/bench";
    static final int DEFAULT_PORT = 8091;

    private BenchServer() {}

    /** Publishes the service on HOST:port; threads 0 = the default executor. */
    static Endpoint start(int port, int threads) {
        Endpoint endpoint = Endpoint.create(new BenchWs());
        if (threads > 0) {
            ExecutorService pool = Executors.newFixedThreadPool(threads);
            endpoint.setExecutor(pool);
        }
        endpoint.publish("http://" + HOST + ":" + port + PATH);
        return endpoint;
    }

    public static void main(String[] args) throws Exception {
        // Read once when the JDK HTTP server's configuration class loads: before publishing.
        System.setProperty("sun.net.httpserver.nodelay", Env.string("HTTPSERVER_NODELAY", "true"));
        int port;
        int threads;
        try {
            port = Env.integer("RPCLAB_PORT", DEFAULT_PORT, 1, 65535);
            threads = Env.integer("JAXWS_THREADS", 200, 0, 100_000);
        } catch (IllegalArgumentException e) {
            Serving.refuse(e.getMessage());
            return;
        }
        Endpoint endpoint = start(port, threads);
        Serving.untilSignalled("rpclab server ready on " + Serving.where(port, PATH)
                + " (" + endpoint.getClass().getName() + " from "
                + new java.io.File(endpoint.getClass().getProtectionDomain().getCodeSource().getLocation().getPath()).getName()
                + ", threads " + (threads > 0 ? Integer.toString(threads) : "default executor")
                + ", nodelay " + System.getProperty("sun.net.httpserver.nodelay") + ")", endpoint::stop);
    }
}
