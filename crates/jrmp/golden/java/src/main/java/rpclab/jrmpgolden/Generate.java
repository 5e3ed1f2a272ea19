package rpclab.jrmpgolden;

import java.io.ByteArrayOutputStream;
import java.io.FilterInputStream;
import java.io.FilterOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.rmi.NotBoundException;
import java.rmi.registry.LocateRegistry;
import java.rmi.registry.Registry;
import java.rmi.server.RMISocketFactory;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import org.springframework.remoting.rmi.RmiInvocationHandler;
import org.springframework.remoting.rmi.RmiProxyFactoryBean;
import org.springframework.remoting.support.RemoteInvocation;
import rpclab.contract.BenchService;
import rpclab.contract.Order;
import rpclab.rmi.RemoteBenchService;
import rpclab.shared.ContractPayloads;

/**
 * Records real JRMP conversations: the JDK's RMI client (plain stubs, and
 * Spring's RmiProxyFactoryBean) calls the servers of {@link Servers} in this
 * JVM, through a process-wide RMISocketFactory whose client sockets copy
 * every byte they send and receive.
 *
 * <p>Each case writes {@code <case>-c<k>-c2s.bin} (what the client sent) and
 * {@code <case>-c<k>-s2c.bin} (what it received) per client connection k
 * used during the case, k counted from 0 in order of first use. Connections
 * are the JDK's cached ones, so a case that reuses one has no handshake and
 * may start with a ping, exactly as the JDK does it. Object ids, UIDs and
 * times are random per run: the Rust tests check structure and cross-links
 * (the stub's ObjID is the one later calls address), and re-encode the
 * client's messages from the parsed values byte for byte.
 */
public final class Generate {
    /** The case being recorded; bytes outside any case are dropped. */
    private static volatile String current;
    private static final Map<String, Map<Integer, ByteArrayOutputStream[]>> recorded = new LinkedHashMap<>();
    private static final AtomicInteger connections = new AtomicInteger();

    private Generate() {}

    private static synchronized void record(int conn, int dir, byte[] b, int off, int len) {
        String c = current;
        if (c == null || len <= 0) {
            return;
        }
        ByteArrayOutputStream[] s = recorded.computeIfAbsent(c, k -> new LinkedHashMap<>())
                .computeIfAbsent(conn, k -> new ByteArrayOutputStream[] {new ByteArrayOutputStream(), new ByteArrayOutputStream()});
        s[dir].write(b, off, len);
    }

    /** A client socket that records both directions. */
    static final class RecordingSocket extends Socket {
        private final int id = connections.getAndIncrement();
        private InputStream in;
        private OutputStream out;

        RecordingSocket(String host, int port) throws IOException {
            super(host, port);
        }

        @Override
        public synchronized InputStream getInputStream() throws IOException {
            if (in == null) {
                in = new FilterInputStream(super.getInputStream()) {
                    @Override
                    public int read() throws IOException {
                        int b = super.read();
                        if (b >= 0) {
                            record(id, 1, new byte[] {(byte) b}, 0, 1);
                        }
                        return b;
                    }

                    @Override
                    public int read(byte[] b, int off, int len) throws IOException {
                        int n = super.read(b, off, len);
                        record(id, 1, b, off, n);
                        return n;
                    }
                };
            }
            return in;
        }

        @Override
        public synchronized OutputStream getOutputStream() throws IOException {
            if (out == null) {
                out = new FilterOutputStream(super.getOutputStream()) {
                    @Override
                    public void write(int b) throws IOException {
                        record(id, 0, new byte[] {(byte) b}, 0, 1);
                        super.write(b);
                    }

                    @Override
                    public void write(byte[] b, int off, int len) throws IOException {
                        record(id, 0, b, off, len);
                        out.write(b, off, len);
                    }
                };
            }
            return out;
        }
    }

    static final class RecordingFactory extends RMISocketFactory {
        @Override
        public ServerSocket createServerSocket(int port) throws IOException {
            return new ServerSocket(port, 128, InetAddress.getByName("127.0.0.1"));
        }

        @Override
        public Socket createSocket(String host, int port) throws IOException {
            return new RecordingSocket(host, port);
        }
    }

    interface Case {
        void run() throws Exception;
    }

    private static void record(String name, Case c) throws Exception {
        current = name;
        try {
            c.run();
        } finally {
            current = null;
        }
    }

    private static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getByName("127.0.0.1"))) {
            return s.getLocalPort();
        }
    }

    public static void main(String[] args) throws Exception {
        if (args.length != 1) {
            System.err.println("usage: Generate <vectors dir>");
            System.exit(2);
        }
        Path dir = Paths.get(args[0]);
        Files.createDirectories(dir);
        System.setProperty("java.rmi.server.hostname", "127.0.0.1");
        RMISocketFactory.setSocketFactory(new RecordingFactory());
        int plainPort = freePort();
        int springPort = freePort();
        Servers.startPlain(plainPort);
        Servers.startSpring(springPort);

        // Plain JDK RMI: registry lookup, then every contract operation.
        Registry registry = LocateRegistry.getRegistry("127.0.0.1", plainPort);
        RemoteBenchService[] stub = new RemoteBenchService[1];
        record("jdk-lookup", () -> stub[0] = (RemoteBenchService) registry.lookup(Servers.NAME));
        record("jdk-hello", () -> check("hello aa".equals(stub[0].hello("aa"))));
        record("jdk-order", () -> check(stub[0].echoOrder(ContractPayloads.sample(1, Order::new)).getOrderId() == 10_000_000_001L));
        record("jdk-orders", () -> check(stub[0].echoOrders(ContractPayloads.samples(100, Order::new)).size() == 100));
        record("jdk-string-1k", () -> check(stub[0].echoString(ContractPayloads.asciiText(1024)).length() == 1024));
        record("jdk-string-100k", () -> check(stub[0].echoString(ContractPayloads.asciiText(102400)).length() == 102400));
        record("jdk-empty", () -> stub[0].empty());
        // Idle longer than the connection's last round trip (5 ms at first):
        // the JDK pings the cached connection before reusing it.
        Thread.sleep(50);
        record("jdk-ping-hello", () -> check("hello aa".equals(stub[0].hello("aa"))));
        record("jdk-not-bound", () -> {
            try {
                registry.lookup("missing");
                throw new IllegalStateException("lookup of a missing name succeeded");
            } catch (NotBoundException expected) {
                // an ExceptionalReturn carrying java.rmi.NotBoundException
            }
        });

        // Spring: RmiProxyFactoryBean (lookup at start-up), then invoke(RemoteInvocation).
        RmiProxyFactoryBean proxy = new RmiProxyFactoryBean();
        proxy.setServiceUrl("rmi://127.0.0.1:" + springPort + "/" + Servers.NAME);
        proxy.setServiceInterface(BenchService.class);
        record("spring-lookup", proxy::afterPropertiesSet);
        BenchService spring = (BenchService) proxy.getObject();
        record("spring-hello", () -> check("hello aa".equals(spring.hello("aa"))));
        record("spring-order", () -> check(spring.echoOrder(ContractPayloads.sample(1, Order::new)).getOrderId() == 10_000_000_001L));
        record("spring-orders", () -> check(spring.echoOrders(ContractPayloads.samples(100, Order::new)).size() == 100));
        record("spring-string-1k", () -> check(spring.echoString(ContractPayloads.asciiText(1024)).length() == 1024));
        record("spring-empty", spring::empty);
        Registry springRegistry = LocateRegistry.getRegistry("127.0.0.1", springPort);
        RmiInvocationHandler handler = (RmiInvocationHandler) springRegistry.lookup(Servers.NAME);
        record("spring-no-such-method", () -> {
            try {
                handler.invoke(new RemoteInvocation("noSuchMethod", new Class<?>[0], new Object[0]));
                throw new IllegalStateException("a missing method succeeded");
            } catch (NoSuchMethodException expected) {
                // an ExceptionalReturn carrying java.lang.NoSuchMethodException
            }
        });

        int files = 0;
        synchronized (Generate.class) {
            for (Map.Entry<String, Map<Integer, ByteArrayOutputStream[]>> e : recorded.entrySet()) {
                int k = 0;
                for (ByteArrayOutputStream[] s : e.getValue().values()) {
                    Files.write(dir.resolve(e.getKey() + "-c" + k + "-c2s.bin"), s[0].toByteArray());
                    Files.write(dir.resolve(e.getKey() + "-c" + k + "-s2c.bin"), s[1].toByteArray());
                    k++;
                    files += 2;
                }
            }
        }
        System.out.println("wrote " + files + " files to " + dir);
        System.exit(0);
    }

    private static void check(boolean ok) {
        if (!ok) {
            throw new IllegalStateException("wrong reply");
        }
    }
}
