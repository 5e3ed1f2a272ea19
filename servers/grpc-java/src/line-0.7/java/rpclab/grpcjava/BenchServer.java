package rpclab.grpcjava;

import io.grpc.ServerImpl;
import io.grpc.transport.netty.NettyServerBuilder;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.util.concurrent.TimeUnit;
import sun.misc.Signal;

/**
 * rpclab gRPC server on grpc-java 0.7: Netty transport
 * (io.grpc.transport.netty, unshaded, netty 4.1.0.Beta5), plaintext HTTP/2,
 * grpc's default application executor (a cached thread pool).
 *
 * <p>Binds to 127.0.0.1 on the port in RPCLAB_PORT (default 50051), prints
 * "rpclab server ready on 127.0.0.1:PORT" once listening and shuts down
 * gracefully on SIGTERM/SIGINT (exit status 0, after "rpclab server stopped").
 */
public final class BenchServer {
    static final String HOST = "127.0.0.1";
    static final int DEFAULT_PORT = 50051;

    private BenchServer() {}

    /** Starts a server on 127.0.0.1:port (0.7 cannot report a port it picked, so port is a real one). */
    static ServerImpl start(int port) throws IOException {
        return NettyServerBuilder.forAddress(new InetSocketAddress(HOST, port))
                .addService(BenchDefinition.service())
                .build()
                .start();
    }

    static int portFromEnv() {
        String value = System.getenv("RPCLAB_PORT");
        if (value == null || value.isBlank()) {
            return DEFAULT_PORT;
        }
        try {
            int port = Integer.parseInt(value.trim());
            if (port <= 0 || port > 65535) {
                throw new NumberFormatException("out of range");
            }
            return port;
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("RPCLAB_PORT is not a valid port: " + value, e);
        }
    }

    /** Graceful stop: refuse new calls, let running ones finish (bounded), then close. */
    static void stop(ServerImpl server) {
        server.shutdown();
        try {
            if (!server.awaitTerminated(5, TimeUnit.SECONDS)) {
                server.shutdownNow();
                server.awaitTerminated(2, TimeUnit.SECONDS);
            }
        } catch (InterruptedException e) {
            server.shutdownNow();
            Thread.currentThread().interrupt();
        }
    }

    public static void main(String[] args) throws Exception {
        int port = portFromEnv();
        ServerImpl server = start(port);
        // SIGTERM (docker stop) and SIGINT stop the server and let main return,
        // so the process exits with status 0 instead of the JVM's 143.
        for (String name : new String[] {"TERM", "INT"}) {
            Signal.handle(new Signal(name), signal -> new Thread(() -> stop(server), "rpclab-stop").start());
        }
        Runtime.getRuntime().addShutdownHook(new Thread(() -> stop(server), "rpclab-shutdown"));
        System.out.println("rpclab server ready on " + HOST + ":" + port);
        System.out.flush();
        server.awaitTerminated();
        System.out.println("rpclab server stopped");
        System.out.flush();
        System.exit(0);
    }
}
