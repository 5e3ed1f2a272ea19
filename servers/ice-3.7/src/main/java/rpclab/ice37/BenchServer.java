package rpclab.ice37;

import com.zeroc.Ice.Communicator;
import com.zeroc.Ice.Current;
import com.zeroc.Ice.ObjectAdapter;
import com.zeroc.Ice.Util;
import rpclab.Bench;
import rpclab.Order;

/**
 * The rpclab service (contract/bench.ice) on ZeroC Ice 3.7 for Java.
 *
 * <p>Two deployments, one program:
 *
 * <ul>
 *   <li>direct: no adapter configuration is given, so the adapter listens on
 *       {@code tcp -h $RPCLAB_BIND -p $RPCLAB_PORT} (default 127.0.0.1),
 *       publishes {@code tcp -h $RPCLAB_ADVERTISE -p $RPCLAB_PORT} when that
 *       differs, and clients use the direct proxy
 *       {@code bench:tcp -h ADDRESS -p $RPCLAB_PORT};
 *   <li>IceGrid: the IceGrid node activates this program with
 *       {@code --Ice.Config=...} holding {@code BenchAdapter.Endpoints},
 *       {@code BenchAdapter.AdapterId} and {@code Ice.Default.Locator}, so the
 *       adapter registers its (dynamic) endpoints with the registry and
 *       clients use the indirect proxy {@code bench @ BenchAdapter}.
 * </ul>
 *
 * <p>Every other Ice property (thread pools, message size) comes from the
 * command line or the IceGrid descriptor.
 */
public final class BenchServer {
    /** The servant: echoes, greets, and does nothing, as contract/README.md says. */
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
            return "hello " + name;
        }

        @Override
        public void empty(Current current) {}
    }

    /** The trimmed value of `name`, or `dflt` when it is unset or blank (as rpclab.shared.Env). */
    static String env(String name, String dflt) {
        String v = System.getenv(name);
        return v == null || v.trim().isEmpty() ? dflt : v.trim();
    }

    public static void main(String[] args) {
        try (Communicator communicator = Util.initialize(args)) {
            ObjectAdapter adapter;
            if (communicator.getProperties().getProperty("BenchAdapter.Endpoints").isEmpty()) {
                String port = System.getenv().getOrDefault("RPCLAB_PORT", "10000");
                String bind = env("RPCLAB_BIND", "127.0.0.1");
                String advertise = env("RPCLAB_ADVERTISE", bind.equals("0.0.0.0") ? "127.0.0.1" : bind);
                if (!advertise.equals(bind)) {
                    // What a proxy this adapter makes names: where clients reach it.
                    communicator.getProperties().setProperty("BenchAdapter.PublishedEndpoints",
                            "tcp -h " + advertise + " -p " + port);
                }
                adapter = communicator.createObjectAdapterWithEndpoints(
                        "BenchAdapter", "tcp -h " + bind + " -p " + port);
            } else {
                adapter = communicator.createObjectAdapter("BenchAdapter");
            }
            adapter.add(new BenchI(), Util.stringToIdentity("bench"));
            adapter.activate();
            Runtime.getRuntime().addShutdownHook(new Thread(communicator::shutdown));
            System.out.println("rpclab Ice " + Util.stringVersion() + " server ready: "
                    + adapter.getEndpoints()[0]);
            communicator.waitForShutdown();
        }
    }
}
