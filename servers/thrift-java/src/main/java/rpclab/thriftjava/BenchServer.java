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
import rpclab.thrift.Bench;
import sun.misc.Signal;

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
    static final String HOST = bindFromEnv();
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

    /** RPCLAB_BIND, or 127.0.0.1 when it is unset or blank. */
    static String bindFromEnv() {
        String value = System.getenv("RPCLAB_BIND");
        return value == null || value.isBlank() ? "127.0.0.1" : value.trim();
    }

    static int portFromEnv() {
        String value = System.getenv("RPCLAB_PORT");
        if (value == null || value.isBlank()) {
            return DEFAULT_PORT;
        }
        try {
            int port = Integer.parseInt(value.trim());
            if (port < 0 || port > 65535) {
                throw new NumberFormatException("out of range");
            }
            return port;
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("RPCLAB_PORT is not a valid port: " + value, e);
        }
    }

    static <E extends Enum<E>> E enumFromEnv(String name, Class<E> type, E fallback) {
        String value = System.getenv(name);
        if (value == null || value.isBlank()) {
            return fallback;
        }
        try {
            return Enum.valueOf(type, value.trim().toUpperCase(Locale.ROOT));
        } catch (IllegalArgumentException e) {
            StringBuilder allowed = new StringBuilder();
            for (E constant : type.getEnumConstants()) {
                allowed.append(allowed.length() == 0 ? "" : "|").append(constant.name().toLowerCase(Locale.ROOT));
            }
            throw new IllegalArgumentException(name + " must be " + allowed + ", not: " + value, e);
        }
    }

    public static void main(String[] args) throws Exception {
        Transport transport = enumFromEnv("THRIFT_TRANSPORT", Transport.class, Transport.FRAMED);
        Protocol protocol = enumFromEnv("THRIFT_PROTOCOL", Protocol.class, Protocol.BINARY);
        BenchServer bench = create(portFromEnv(), transport, protocol);
        // SIGTERM (docker stop) and SIGINT stop the server and let main return,
        // so the process exits with status 0 instead of the JVM's 143.
        for (String name : new String[] {"TERM", "INT"}) {
            Signal.handle(new Signal(name), signal -> new Thread(bench::stop, "rpclab-stop").start());
        }
        Thread serveThread = new Thread(bench::serve, "rpclab-accept");
        serveThread.start();
        if (!bench.awaitServing(30, TimeUnit.SECONDS)) {
            throw new IllegalStateException("Thrift server did not start serving");
        }
        System.out.println("rpclab server ready on " + HOST + ":" + bench.port());
        System.out.flush();
        serveThread.join();
        System.out.println("rpclab server stopped");
        System.out.flush();
        System.exit(0);
    }
}
