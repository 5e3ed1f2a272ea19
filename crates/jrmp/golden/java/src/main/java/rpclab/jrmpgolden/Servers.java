package rpclab.jrmpgolden;

import java.rmi.registry.LocateRegistry;
import java.rmi.registry.Registry;
import java.rmi.server.UnicastRemoteObject;
import org.springframework.remoting.rmi.RmiServiceExporter;
import rpclab.contract.BenchService;
import rpclab.contract.BenchServiceImpl;
import rpclab.rmi.RemoteBenchService;
import rpclab.rmi.RemoteBenchServiceImpl;

/**
 * The two servers the recordings are made against, in this JVM: the plain
 * JDK one exactly as servers/rmi-jdk sets it up (registry and service on one
 * port), and a Spring 5.3 RmiServiceExporter as servers/rmi-spring sets it up
 * (its own registry, service exported on the registry's port). Also the
 * contract's payloads, written as the Rust side builds them.
 */
final class Servers {
    static final String NAME = "rpclab.contract.BenchService";

    // Static: RMI only holds exported objects weakly (see RmiServer).
    private static RemoteBenchServiceImpl plainImpl;
    private static Registry plainRegistry;
    private static RmiServiceExporter springExporter;

    private Servers() {}

    static void startPlain(int port) throws Exception {
        plainRegistry = LocateRegistry.createRegistry(port);
        plainImpl = new RemoteBenchServiceImpl();
        RemoteBenchService stub = (RemoteBenchService) UnicastRemoteObject.exportObject(plainImpl, port);
        plainRegistry.rebind(NAME, stub);
    }

    static void startSpring(int port) throws Exception {
        RmiServiceExporter exporter = new RmiServiceExporter();
        exporter.setServiceName(NAME);
        exporter.setService(new BenchServiceImpl());
        exporter.setServiceInterface(BenchService.class);
        exporter.setRegistryPort(port);
        exporter.setServicePort(port);
        exporter.afterPropertiesSet();
        springExporter = exporter;
    }
}
