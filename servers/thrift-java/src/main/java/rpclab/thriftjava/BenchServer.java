package rpclab.thriftjava;

import java.net.InetSocketAddress;
import java.util.Locale;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.apache.thrift.protocol.TBinaryProtocol;
import org.apache.thrift.protocol.TCompactProtocol;
import org.apache.thrift.protocol.TProtocol;
import org.apache.thrift.protocol.TProtocolFactory;
import org.apache.thrift.server.ServerContext;
import org.apache.thrift.server.TServer;
import org.apache.thrift.server.TServerEventHandler;
import org.apache.thrift.server.TThreadPoolServer;
import org.apache.thrift.transport.TServerSocket;
import org.apache.thrift.transport.TTransport;
import org.apache.thrift.transport.TTransportException;
import org.apache.thrift.transport.TTransportFactory;
import rpclab.shared.Env;
import rpclab.shared.Serving;
import rpclab.thrift.Bench;

/**
 * rpclab Thrift server: Apache Thrift Java, TThreadPoolServer (one thread per
 * connection), TFramedTransport + TBinaryProtocol by default.
 *
 * <p>Environment: RPCLAB_PORT (default 9090), THRIFT_TRANSPORT=framed|buffered
 * (default framed), THRIFT_PROTOCOL=binary|compact (default binary),
 * RPCLAB_BIND (the interface to listen on, default 127.0.0.1: the lab sets
 * another only when the client is on another machine, docs/multi-host.md).
 * Prints "rpclab server ready on HOST:PORT" once serving and
 * stops gracefully on SIGTERM/SIGINT (exit status 0, after "rpclab server
 * stopped").
 */
public final class BenchServer {
    /** RPCLAB_BIND, or 127.0.0.1 when it is unset or blank. */
    static final String HOST = Env.string("RPCLAB_BIND", "127.0.0.1");
    static final int DEFAULT_PORT = 9090;
    /** Largest frame accepted; the contract's largest payload is a 1 MiB string. */
    static final int MAX_FRAME_SIZE = 16 * 1024 * 1024;
    /** Listen backlog (java.net's default is 50), so a burst of client connections is not dropped. */
    static final int BACKLOG = 1024;

    /** Wire transport. "buffered" is Thrift's unframed stream transport. */
    enum Transport {
        FRAMED,
        BUFFERED;

        TTransportFactory factory() {
            return this == FRAMED ? Framing.factory(MAX_FRAME_SIZE) : new TTransportFactory();
        }
    }

    enum Protocol {
        BINARY,
        COMPACT;

        TProtocolFactory factory() {
            return this == BINARY ? new TBinaryProtocol.Factory() : new TCompactProtocol.Factory();
        }
    }

    private final TServerSocket socket;
    private final TThreadPoolServer server;
    private final CountDownLatch serving = new CountDownLatch(1);

    private BenchServer(TServerSocket socket, TThreadPoolServer server) {
        this.socket = socket;
        this.server = server;
    }

    /** Binds HOST:port (0 picks a free port); call {@link #serve()} to accept connections. */
    static BenchServer create(int port, Transport transport, Protocol protocol) throws TTransportException {
        TServerSocket socket = new TServerSocket(new TServerSocket.ServerSocketTransportArgs()
                .bindAddr(new InetSocketAddress(HOST, port))
                .backlog(BACKLOG));
        TThreadPoolServer.Args args = new TThreadPoolServer.Args(socket)
                .processor(new Bench.Processor<>(new BenchHandler()))
                .transportFactory(transport.factory())
                .protocolFactory(protocol.factory());
        // On stop, wait at most this long for connection threads before serve() returns.
        args.stopTimeoutVal = 2;
        args.stopTimeoutUnit = TimeUnit.SECONDS;
        BenchServer bench = new BenchServer(socket, new TThreadPoolServer(args));
        bench.server.setServerEventHandler(new TServerEventHandler() {
            @Override
            public void preServe() {
                bench.serving.countDown();
            }

            @Override
            public ServerContext createContext(TProtocol input, TProtocol output) {
                return null;
            }

            @Override
            public void deleteContext(ServerContext context, TProtocol input, TProtocol output) {}

            @Override
            public void processContext(ServerContext context, TTransport in, TTransport out) {}
        });
        return bench;
    }

    int port() {
        return socket.getServerSocket().getLocalPort();
    }

    /** Accepts connections until {@link #stop()}; blocks. */
    void serve() {
        server.serve();
    }

    /** Blocks until the accept loop runs. */
    boolean awaitServing(long timeout, TimeUnit unit) throws InterruptedException {
        return serving.await(timeout, unit);
    }

    void stop() {
        server.stop();
    }

    static <E extends Enum<E>> E enumFromEnv(String name, Class<E> type, E fallback) {
        String value = Env.string(name, null);
        if (value == null) {
            return fallback;
        }
        try {
            return Enum.valueOf(type, value.toUpperCase(Locale.ROOT));
        } catch (IllegalArgumentException e) {
            StringBuilder allowed = new StringBuilder();
            for (E constant : type.getEnumConstants()) {
                allowed.append(allowed.length() == 0 ? "" : "|").append(constant.name().toLowerCase(Locale.ROOT));
            }
            throw new IllegalArgumentException(name + " must be " + allowed + ", not: " + value, e);
        }
    }

    public static void main(String[] args) throws Exception {
        int port;
        Transport transport;
        Protocol protocol;
        try {
            port = Env.integer("RPCLAB_PORT", DEFAULT_PORT, 0, 65535);
            transport = enumFromEnv("THRIFT_TRANSPORT", Transport.class, Transport.FRAMED);
            protocol = enumFromEnv("THRIFT_PROTOCOL", Protocol.class, Protocol.BINARY);
        } catch (IllegalArgumentException e) {
            Serving.refuse(e.getMessage());
            return;
        }
        BenchServer bench = create(port, transport, protocol);
        Thread serveThread = new Thread(bench::serve, "rpclab-accept");
        serveThread.start();
        if (!bench.awaitServing(30, TimeUnit.SECONDS)) {
            throw new IllegalStateException("Thrift server did not start serving");
        }
        Serving.untilSignalled("rpclab server ready on " + HOST + ":" + bench.port(), () -> {
            bench.stop();
            try {
                serveThread.join();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        });
    }
}
