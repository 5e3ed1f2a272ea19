package rpclab.rmi;

import java.rmi.registry.LocateRegistry;
import java.rmi.registry.Registry;
import java.rmi.server.UnicastRemoteObject;
import java.util.concurrent.CountDownLatch;
import sun.misc.Signal;
import rpclab.shared.LoopbackSocketFactory;

/**
 * rpclab's plain JDK RMI server: an RMI registry on 127.0.0.1:RPCLAB_PORT
 * (default 1099) and the RemoteBenchService exported on the same port,
 * bound in the registry under RMI_NAME (default rpclab.contract.BenchService).
 * java.rmi.server.hostname is 127.0.0.1, so the stub the registry hands out
 * names 127.0.0.1:RPCLAB_PORT.
 *
 * <p>The implementation and the registry are held in static fields: RMI's
 * object table only keeps weak references to exported objects that no client
 * has marked "dirty" through the distributed GC, and a collected
 * implementation would make every later call fail with NoSuchObjectException.
 *
 * <p>Prints "rpclab server ready on 127.0.0.1:PORT"; SIGTERM/SIGINT unexport
 * and exit with status 0.
 */
public final class RmiServer {
    static final int DEFAULT_PORT = 1099;
    static final String DEFAULT_NAME = "rpclab.contract.BenchService";

    private static RemoteBenchServiceImpl impl;
    private static Registry registry;

    private RmiServer() {}

    static int port() {
        String v = System.getenv("RPCLAB_PORT");
        if (v == null || v.isBlank()) {
            return DEFAULT_PORT;
        }
        try {
            int p = Integer.parseInt(v.trim());
            if (p < 1 || p > 65535) {
                throw new NumberFormatException("out of range");
            }
            return p;
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("RPCLAB_PORT must be a port number, got: " + v, e);
        }
    }

    static String name() {
        String v = System.getenv("RMI_NAME");
        return v == null || v.isBlank() ? DEFAULT_NAME : v.trim();
    }

    public static void main(String[] args) throws Exception {
        LoopbackSocketFactory.install();
        int port = port();
        String name = name();

        registry = LocateRegistry.createRegistry(port);
        impl = new RemoteBenchServiceImpl();
        RemoteBenchService stub = (RemoteBenchService) UnicastRemoteObject.exportObject(impl, port);
        registry.rebind(name, stub);

        CountDownLatch stopped = new CountDownLatch(1);
        Runnable stop = () -> {
            try {
                registry.unbind(name);
                UnicastRemoteObject.unexportObject(impl, true);
                UnicastRemoteObject.unexportObject(registry, true);
            } catch (Exception e) {
                System.err.println("rpclab: stop failed: " + e);
            } finally {
                stopped.countDown();
            }
        };
        for (String sig : new String[] {"TERM", "INT"}) {
            Signal.handle(new Signal(sig), s -> new Thread(stop, "rpclab-stop").start());
        }
        System.out.println("rpclab server ready on " + LoopbackSocketFactory.HOST + ":" + port
                + " (JDK RMI " + System.getProperty("java.version") + ", registry and service on one port, name "
                + name + ", stub " + stub + ")");
        System.out.flush();
        stopped.await();
        System.out.println("rpclab server stopped");
        System.out.flush();
        System.exit(0);
    }
}
