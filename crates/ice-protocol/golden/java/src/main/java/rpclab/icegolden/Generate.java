package rpclab.icegolden;

import com.zeroc.Ice.AdapterNotFoundException;
import com.zeroc.Ice.Communicator;
import com.zeroc.Ice.Current;
import com.zeroc.Ice.Identity;
import com.zeroc.Ice.InitializationData;
import com.zeroc.Ice.LocalException;
import com.zeroc.Ice.Locator;
import com.zeroc.Ice.LocatorRegistryPrx;
import com.zeroc.Ice.ObjectAdapter;
import com.zeroc.Ice.ObjectNotFoundException;
import com.zeroc.Ice.ObjectPrx;
import com.zeroc.Ice.OperationMode;
import com.zeroc.Ice.Util;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.PrintWriter;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import rpclab.Bench;
import rpclab.BenchPrx;
import rpclab.Order;

/**
 * Golden vectors for the Rust Ice client, made by the real Ice for Java
 * runtime, and a server for the Rust-writes/Java-reads test.
 *
 * <p>{@code generate DIR}: a Java client calls a Java server of
 * contract/bench.ice, and a Java locator, through a recording TCP relay;
 * every byte each side sent is saved per connection and direction
 * ({@code direct.client.bin}, {@code direct.server.bin},
 * {@code locator.client.bin}, {@code locator.server.bin}), with the list of
 * calls made ({@code direct.calls}, {@code locator.calls}).
 *
 * <p>{@code serve}: runs the same server and locator, prints
 * {@code READY <bench port> <locator port>} and serves until stdin closes.
 */
public final class Generate {
    /** The contract's servant; "raise" and "raise-local" make the failures. */
    static final class BenchI implements Bench {
        @Override
        public Order echoOrder(Order order, Current current) {
            return order;
        }

        @Override
        public Order[] echoOrders(Order[] orders, Current current) {
            return orders;
        }

        @Override
        public String echoString(String s, Current current) {
            return s;
        }

        @Override
        public String hello(String name, Current current) {
            if (name.equals("raise")) {
                throw new IllegalStateException("raised by the golden servant");
            }
            if (name.equals("raise-local")) {
                throw new com.zeroc.Ice.MemoryLimitException("raised by the golden servant");
            }
            // direct.server.bin holds the stack trace of the "raise" reply: the
            // lines above, and so those before them, are in the vectors.
            return "hello " + name;
        }

        @Override
        public void empty(Current current) {}
    }

    /** A locator that knows one adapter, BenchAdapter. */
    static final class LocatorI implements Locator {
        private final ObjectAdapter bench;

        LocatorI(ObjectAdapter bench) {
            this.bench = bench;
        }

        @Override
        public CompletionStage<ObjectPrx> findObjectByIdAsync(Identity id, Current current)
                throws ObjectNotFoundException {
            CompletableFuture<ObjectPrx> f = new CompletableFuture<>();
            f.completeExceptionally(new ObjectNotFoundException());
            return f;
        }

        @Override
        public CompletionStage<ObjectPrx> findAdapterByIdAsync(String id, Current current)
                throws AdapterNotFoundException {
            CompletableFuture<ObjectPrx> f = new CompletableFuture<>();
            if (id.equals("BenchAdapter")) {
                f.complete(bench.createDirectProxy(Util.stringToIdentity("dummy")));
            } else {
                f.completeExceptionally(new AdapterNotFoundException());
            }
            return f;
        }

        @Override
        public LocatorRegistryPrx getRegistry(Current current) {
            return null;
        }
    }

    /** Seed 001's order i, as rpclab_model::contract::Order::sample. */
    static Order sample(int i) {
        return rpclab.shared.ContractPayloads.sample(i, Order::new);
    }

    /** As rpclab_model::contract::ascii_text. */
    static String asciiText(int len) {
        return rpclab.shared.ContractPayloads.asciiText(len);
    }

    static Communicator communicator(String... props) {
        InitializationData init = new InitializationData();
        init.properties = Util.createProperties();
        init.properties.setProperty("Ice.MessageSizeMax", "65536");
        // The golden servant raises on purpose: no dispatch warnings.
        init.properties.setProperty("Ice.Warn.Dispatch", "0");
        for (int i = 0; i + 1 < props.length; i += 2) {
            init.properties.setProperty(props[i], props[i + 1]);
        }
        return Util.initialize(init);
    }

    static int port(ObjectAdapter a) {
        return ((com.zeroc.Ice.TCPEndpointInfo) a.getEndpoints()[0].getInfo()).port;
    }

    /** Where {@link #serveOn} listens: the servant's port and the locator's. */
    record Ports(int bench, int locator) {}

    /** Adds the servant ("bench") and the locator to {@code server} on 127.0.0.1. */
    static Ports serveOn(Communicator server) {
        ObjectAdapter bench = server.createObjectAdapterWithEndpoints("Bench", "tcp -h 127.0.0.1");
        bench.add(new BenchI(), Util.stringToIdentity("bench"));
        bench.activate();
        ObjectAdapter loc = server.createObjectAdapterWithEndpoints("Locator", "tcp -h 127.0.0.1");
        loc.add(new LocatorI(bench), Util.stringToIdentity("IceGrid/Locator"));
        loc.activate();
        return new Ports(port(bench), port(loc));
    }

    public static void main(String[] args) throws Exception {
        if (args.length == 2 && args[0].equals("generate")) {
            generate(Path.of(args[1]));
        } else if (args.length == 1 && args[0].equals("serve")) {
            serve();
        } else {
            System.err.println("usage: generate DIR | serve");
            System.exit(2);
        }
    }

    static void serve() throws IOException {
        try (Communicator server = communicator()) {
            Ports ports = serveOn(server);
            System.out.println("READY " + ports.bench() + " " + ports.locator());
            System.out.flush();
            while (System.in.read() >= 0) {
                // serve until the test closes stdin
            }
        }
    }

    static void generate(Path dir) throws Exception {
        Files.createDirectories(dir);
        try (Communicator server = communicator()) {
            Ports ports = serveOn(server);

            Relay direct = new Relay(ports.bench());
            Relay locator = new Relay(ports.locator());
            List<String> directCalls = new ArrayList<>();
            List<String> locatorCalls = new ArrayList<>();
            // Heartbeats off (ACM), so only the calls are on the wire.
            try (Communicator client = communicator(
                    "Ice.ACM.Client.Heartbeat", "0",
                    "Ice.Default.Locator", "IceGrid/Locator:tcp -h 127.0.0.1 -p " + locator.port())) {
                String at = ":tcp -h 127.0.0.1 -p " + direct.port();
                BenchPrx prx = BenchPrx.uncheckedCast(client.stringToProxy("bench" + at));
                Order[] orders = new Order[100];
                for (int i = 0; i < 100; i++) {
                    orders[i] = sample(i);
                }
                check(prx.echoOrder(sample(1)).equals(sample(1)));
                directCalls.add("echoOrder order-echo");
                check(java.util.Arrays.equals(prx.echoOrders(orders), orders));
                directCalls.add("echoOrders orders-echo");
                check(prx.echoString(asciiText(1024)).equals(asciiText(1024)));
                directCalls.add("echoString string-1k");
                check(prx.hello("aa").equals("hello aa"));
                directCalls.add("hello hello");
                prx.empty();
                directCalls.add("empty empty");
                check(prx.echoString(asciiText(100 * 1024)).equals(asciiText(100 * 1024)));
                directCalls.add("echoString string-100k");
                expect(() -> BenchPrx.uncheckedCast(client.stringToProxy("missing" + at)).hello("aa"),
                        com.zeroc.Ice.ObjectNotExistException.class);
                directCalls.add("hello object-not-exist");
                expect(() -> BenchPrx.uncheckedCast(prx.ice_facet("nofacet")).hello("aa"),
                        com.zeroc.Ice.FacetNotExistException.class);
                directCalls.add("hello facet-not-exist");
                expect(() -> prx.ice_invoke("nope", OperationMode.Normal, new byte[0]),
                        com.zeroc.Ice.OperationNotExistException.class);
                directCalls.add("nope operation-not-exist");
                expect(() -> prx.hello("raise"), com.zeroc.Ice.UnknownException.class);
                directCalls.add("hello unknown-exception");
                expect(() -> prx.hello("raise-local"), com.zeroc.Ice.UnknownLocalException.class);
                directCalls.add("hello unknown-local-exception");

                // Through the locator: findAdapterById("BenchAdapter"), then a
                // call on the located endpoints (not relayed), then an adapter
                // the locator does not know.
                BenchPrx located = BenchPrx.uncheckedCast(client.stringToProxy("bench @ BenchAdapter"));
                check(located.hello("aa").equals("hello aa"));
                locatorCalls.add("findAdapterById BenchAdapter");
                expect(() -> BenchPrx.uncheckedCast(client.stringToProxy("bench @ NoSuchAdapter")).hello("aa"),
                        com.zeroc.Ice.NotRegisteredException.class);
                locatorCalls.add("findAdapterById NoSuchAdapter");
            }
            direct.save(dir, "direct", directCalls);
            locator.save(dir, "locator", locatorCalls);
        }
        System.out.println("wrote golden vectors to " + dir);
    }

    static void check(boolean ok) {
        if (!ok) {
            throw new AssertionError("a golden call returned a wrong value");
        }
    }

    interface Call {
        void run() throws Exception;
    }

    static void expect(Call call, Class<? extends Exception> expected) throws Exception {
        try {
            call.run();
        } catch (Exception e) {
            if (expected.isInstance(e)) {
                return;
            }
            throw e;
        }
        throw new AssertionError("expected " + expected.getName());
    }

    /**
     * A TCP relay on 127.0.0.1 to {@code target} that keeps every byte of
     * its one connection, per direction.
     */
    static final class Relay {
        private final ServerSocket listener;
        private final ByteArrayOutputStream fromClient = new ByteArrayOutputStream();
        private final ByteArrayOutputStream fromServer = new ByteArrayOutputStream();
        private final Thread acceptor;
        private final List<Thread> pumps = new ArrayList<>();

        Relay(int target) throws IOException {
            listener = new ServerSocket(0, 1, InetAddress.getLoopbackAddress());
            acceptor = new Thread(() -> {
                try (Socket client = listener.accept();
                        Socket server = new Socket(InetAddress.getLoopbackAddress(), target)) {
                    client.setTcpNoDelay(true);
                    server.setTcpNoDelay(true);
                    Thread up = pump(client.getInputStream(), server.getOutputStream(), fromClient, server);
                    Thread down = pump(server.getInputStream(), client.getOutputStream(), fromServer, client);
                    up.join();
                    down.join();
                } catch (IOException | InterruptedException e) {
                    throw new RuntimeException(e);
                }
            });
            acceptor.start();
        }

        int port() {
            return listener.getLocalPort();
        }

        private Thread pump(InputStream in, OutputStream out, ByteArrayOutputStream record, Socket peer) {
            Thread t = new Thread(() -> {
                byte[] buf = new byte[65536];
                try {
                    int n;
                    while ((n = in.read(buf)) > 0) {
                        synchronized (record) {
                            record.write(buf, 0, n);
                        }
                        out.write(buf, 0, n);
                        out.flush();
                    }
                    peer.shutdownOutput();
                } catch (IOException e) {
                    // the other side is gone: the recording ends here
                }
            });
            t.start();
            return t;
        }

        void save(Path dir, String name, List<String> calls) throws Exception {
            acceptor.join(10_000);
            listener.close();
            Files.write(dir.resolve(name + ".client.bin"), fromClient.toByteArray());
            Files.write(dir.resolve(name + ".server.bin"), fromServer.toByteArray());
            try (PrintWriter w = new PrintWriter(Files.newBufferedWriter(dir.resolve(name + ".calls"),
                    StandardCharsets.UTF_8))) {
                w.println("# " + name + ": the calls the Java client made, in order (operation, case); "
                        + "made by crates/ice-protocol/golden/regenerate.sh with com.zeroc:ice " + Util.stringVersion());
                calls.forEach(w::println);
            }
        }
    }
}
