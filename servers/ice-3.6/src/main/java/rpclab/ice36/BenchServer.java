package rpclab.ice36;

import Ice.ByteSeqHolder;
import Ice.Communicator;
import Ice.Current;
import Ice.InputStream;
import Ice.ObjectAdapter;
import Ice.OutputStream;
import Ice.Util;

/**
 * The rpclab service (contract/bench.ice) on the seed-era ZeroC Ice 3.6 for
 * Java.
 *
 * <p>No 3.6 Slice compiler can be had (servers/ice-3.7/NOTES.md), so the
 * servant is an {@link Ice.Blobject}: Ice 3.6 still reads the messages,
 * dispatches by identity and operation and frames the replies; this class
 * does what slice2java's generated dispatch code would, reading each
 * operation's parameters and writing its return value with Ice 3.6's own
 * encapsulation streams (encoding 1.1), field by field in Slice order.
 *
 * <p>Deployments as in ice-3.7: direct on {@code tcp -h $RPCLAB_BIND -p
 * $RPCLAB_PORT} (default 127.0.0.1; published as RPCLAB_ADVERTISE when that
 * differs), or activated by an IceGrid node with {@code BenchAdapter.*}
 * properties.
 */
public final class BenchServer {
    static final class Bench extends Ice.Blobject {
        private final Communicator communicator;

        Bench(Communicator communicator) {
            this.communicator = communicator;
        }

        @Override
        public boolean ice_invoke(byte[] inEncaps, ByteSeqHolder outEncaps, Current current) {
            InputStream in = Util.createInputStream(communicator, inEncaps);
            OutputStream out = Util.createOutputStream(communicator);
            in.startEncapsulation();
            out.startEncapsulation();
            switch (current.operation) {
                case "echoOrder" -> copyOrder(in, out);
                case "echoOrders" -> {
                    int n = in.readSize();
                    out.writeSize(n);
                    for (int i = 0; i < n; i++) {
                        copyOrder(in, out);
                    }
                }
                case "echoString" -> out.writeString(in.readString());
                case "hello" -> out.writeString("hello " + in.readString());
                case "empty" -> {}
                case "ice_ping" -> {}
                case "ice_isA" -> {
                    String id = in.readString();
                    out.writeBool(id.equals("::rpclab::Bench") || id.equals("::Ice::Object"));
                }
                default -> throw new Ice.OperationNotExistException(
                        current.id, current.facet, current.operation);
            }
            in.endEncapsulation();
            out.endEncapsulation();
            outEncaps.value = out.finished();
            return true;
        }

        /** rpclab::Order, read into locals and written back, as generated code does. */
        private static void copyOrder(InputStream in, OutputStream out) {
            long orderId = in.readLong();
            String phone = in.readString();
            String name = in.readString();
            String orderNum = in.readString();
            int orderDate = in.readInt();
            int ticketType = in.readInt();
            double amount = in.readDouble();
            int orderStatus = in.readInt();
            out.writeLong(orderId);
            out.writeString(phone);
            out.writeString(name);
            out.writeString(orderNum);
            out.writeInt(orderDate);
            out.writeInt(ticketType);
            out.writeDouble(amount);
            out.writeInt(orderStatus);
        }
    }

    /** The trimmed value of `name`, or `dflt` when it is unset or blank (as rpclab.shared.Env). */
    static String env(String name, String dflt) {
        String v = System.getenv(name);
        return v == null || v.trim().isEmpty() ? dflt : v.trim();
    }

    public static void main(String[] args) {
        Communicator communicator = Util.initialize(args);
        try {
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
            adapter.add(new Bench(communicator), Util.stringToIdentity("bench"));
            adapter.activate();
            Runtime.getRuntime().addShutdownHook(new Thread(communicator::shutdown));
            System.out.println("rpclab Ice " + Util.stringVersion() + " server ready: "
                    + adapter.getEndpoints()[0]);
            communicator.waitForShutdown();
        } finally {
            communicator.destroy();
        }
    }
}
