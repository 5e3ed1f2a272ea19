package rpclab.grpcjava;

import io.grpc.Server;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import java.io.IOException;
import java.net.InetSocketAddress;
import rpclab.shared.Env;
import rpclab.shared.Serving;

/**
 * rpclab gRPC server: grpc-java, Netty transport (grpc-netty-shaded), plaintext
 * HTTP/2, grpc's default application executor (a cached thread pool).
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
    /** Largest request accepted; the contract's largest payload is a 1 MiB string. */
    static final int MAX_INBOUND_MESSAGE_SIZE = 16 * 1024 * 1024;

    private BenchServer() {}

    /** Starts a server on HOST:port (0 picks a free port). */
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
        Serving.untilSignalled("rpclab server ready on " + Serving.where(server.getPort()), () -> stop(server));
    }
}
