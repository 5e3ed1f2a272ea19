package rpclab.grpcjava;

import io.grpc.Server;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import java.io.IOException;
import java.net.InetSocketAddress;
import rpclab.shared.Serving;

/**
 * rpclab gRPC server: grpc-java, Netty transport (grpc-netty-shaded), plaintext
 * HTTP/2, grpc's default application executor (a cached thread pool).
 *
 * <p>Binds to 127.0.0.1 on the port in RPCLAB_PORT (default 50051), prints
 * "rpclab server ready on 127.0.0.1:PORT" once listening and shuts down
 * gracefully on SIGTERM/SIGINT (exit status 0, after "rpclab server stopped").
 */
public final class BenchServer {
    static final String HOST = "127.0.0.1";
    static final int DEFAULT_PORT = 50051;
    /** Largest request accepted; the contract's largest payload is a 1 MiB string. */
    static final int MAX_INBOUND_MESSAGE_SIZE = 16 * 1024 * 1024;

    private BenchServer() {}

    /** Starts a server on 127.0.0.1:port (0 picks a free port). */
    static Server start(int port) throws IOException {
        return NettyServerBuilder.forAddress(new InetSocketAddress(HOST, port))
                .maxInboundMessageSize(MAX_INBOUND_MESSAGE_SIZE)
                .addService(new BenchService())
                .build()
                .start();
    }

    /** Graceful stop: refuse new calls, let running ones finish (bounded), then close. */
    static void stop(Server server) {
        GracefulStop.stop(server::shutdown, server::awaitTermination, server::shutdownNow);
    }

    public static void main(String[] args) throws Exception {
        int port = Serving.port(DEFAULT_PORT, 0);
        Server server = start(port);
        // Any JVM exit other than SIGTERM/SIGINT still stops the server gracefully.
        Runtime.getRuntime().addShutdownHook(new Thread(() -> stop(server), "rpclab-shutdown"));
        Serving.untilSignalled("rpclab server ready on " + HOST + ":" + server.getPort(), () -> stop(server));
    }
}
