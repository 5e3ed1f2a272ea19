package rpclab.grpcjava;

import io.grpc.ServerImpl;
import io.grpc.transport.netty.NettyServerBuilder;
import java.io.IOException;
import java.net.InetSocketAddress;
import rpclab.shared.Env;
import rpclab.shared.Serving;

/**
 * rpclab gRPC server on grpc-java 0.7: Netty transport
 * (io.grpc.transport.netty, unshaded, netty 4.1.0.Beta5), plaintext HTTP/2,
 * grpc's default application executor (a cached thread pool).
 *
 * <p>Binds to RPCLAB_BIND (default 127.0.0.1; gRPC hands out no address, so
 * RPCLAB_ADVERTISE is not used) on the port in RPCLAB_PORT (default 50051),
 * prints "rpclab server ready on BIND:PORT" once listening and shuts down
 * gracefully on SIGTERM/SIGINT (exit status 0, after "rpclab server stopped").
 */
public final class BenchServer {
    /** RPCLAB_BIND, or 127.0.0.1 when it is unset or blank. */
    static final String HOST = Env.bind();
    static final int DEFAULT_PORT = 50051;

    private BenchServer() {}

    /** Starts a server on HOST:port (0.7 cannot report a port it picked, so port is a real one). */
    static ServerImpl start(int port) throws IOException {
        return NettyServerBuilder.forAddress(new InetSocketAddress(HOST, port))
                .addService(BenchDefinition.service())
                .build()
                .start();
    }

    /** Graceful stop: refuse new calls, let running ones finish (bounded), then close. */
    static void stop(ServerImpl server) {
        GracefulStop.stop(server::shutdown, server::awaitTerminated, server::shutdownNow);
    }

    public static void main(String[] args) throws Exception {
        int port = Serving.port(DEFAULT_PORT, 1);
        ServerImpl server = start(port);
        // Any JVM exit other than SIGTERM/SIGINT still stops the server gracefully.
        Runtime.getRuntime().addShutdownHook(new Thread(() -> stop(server), "rpclab-shutdown"));
        Serving.untilSignalled("rpclab server ready on " + Serving.where(port), () -> stop(server));
    }
}
