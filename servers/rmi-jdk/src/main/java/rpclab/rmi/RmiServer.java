package rpclab.rmi;

import java.rmi.registry.LocateRegistry;
import java.rmi.registry.Registry;
import java.rmi.server.UnicastRemoteObject;
import rpclab.shared.Env;
import rpclab.shared.LoopbackSocketFactory;
import rpclab.shared.Serving;

/**
 * rpclab's plain JDK RMI server: an RMI registry on RPCLAB_BIND:RPCLAB_PORT
 * (default 127.0.0.1:1099) and the RemoteBenchService exported on the same
 * port, bound in the registry under RMI_NAME (default
 * rpclab.contract.BenchService). java.rmi.server.hostname is
 * RPCLAB_ADVERTISE (default the bind address, or 127.0.0.1 for 0.0.0.0), so
 * the stub the registry hands out names RPCLAB_ADVERTISE:RPCLAB_PORT.
 *
 * <p>The implementation and the registry are held in static fields: RMI's
 * object table only keeps weak references to exported objects that no client
 * has marked "dirty" through the distributed GC, and a collected
 * implementation would make every later call fail with NoSuchObjectException.
 *
 * <p>Prints "rpclab server ready on BIND:PORT"; SIGTERM/SIGINT unexport
 * and exit with status 0.
 */
public final class RmiServer {
    static final int DEFAULT_PORT = 1099;
    static final String DEFAULT_NAME = "rpclab.contract.BenchService";

    private static RemoteBenchServiceImpl impl;
    private static Registry registry;

    private RmiServer() {}

    public static void main(String[] args) throws Exception {
        LoopbackSocketFactory.install();
        int port = Serving.port(DEFAULT_PORT, 1);
        String name = Env.string("RMI_NAME", DEFAULT_NAME);

        registry = LocateRegistry.createRegistry(port);
        impl = new RemoteBenchServiceImpl();
        RemoteBenchService stub = (RemoteBenchService) UnicastRemoteObject.exportObject(impl, port);
        registry.rebind(name, stub);

        Serving.untilSignalled("rpclab server ready on " + Serving.where(port)
                + " (JDK RMI " + System.getProperty("java.version") + ", registry and service on one port, name "
                + name + ", stub " + stub + ")", () -> {
                    try {
                        registry.unbind(name);
                        UnicastRemoteObject.unexportObject(impl, true);
                        UnicastRemoteObject.unexportObject(registry, true);
                    } catch (Exception e) {
                        throw new IllegalStateException(e);
                    }
                });
    }
}
