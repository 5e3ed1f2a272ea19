package rpclab.grpcjava;

import io.grpc.ServerImpl;
import io.grpc.transport.netty.NettyServerBuilder;
import java.io.IOException;
import java.net.InetSocketAddress;
import rpclab.shared.Serving;

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

    /** Graceful stop: refuse new calls, let running ones finish (bounded), then close. */
    static void stop(ServerImpl server) {
        GracefulStop.stop(server::shutdown, server::awaitTerminated, server::shutdownNow);
    }

    public static void main(String[] args) throws Exception {
        int port = Serving.port(DEFAULT_PORT, 1);
        ServerImpl server = start(port);
        // Any JVM exit other than SIGTERM/SIGINT still stops the server gracefully.
        Runtime.getRuntime().addShutdownHook(new Thread(() -> stop(server), "rpclab-shutdown"));
        Serving.untilSignalled("rpclab server ready on " + HOST + ":" + port, () -> stop(server));
    }
}
