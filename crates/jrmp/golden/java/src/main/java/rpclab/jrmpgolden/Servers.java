package rpclab.jrmpgolden;

import java.rmi.registry.LocateRegistry;
import java.rmi.registry.Registry;
import java.rmi.server.UnicastRemoteObject;
import java.util.ArrayList;
import java.util.List;
import org.springframework.remoting.rmi.RmiServiceExporter;
import rpclab.contract.BenchService;
import rpclab.contract.BenchServiceImpl;
import rpclab.contract.Order;
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

    /** rpclab_model::contract::ascii_text. */
    static String asciiText(int len) {
        String alphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_";
        StringBuilder b = new StringBuilder(len);
        for (int i = 0; i < len; i++) {
            b.append(alphabet.charAt((i * 31 + i / 64) % alphabet.length()));
        }
        return b.toString();
    }

    /** rpclab_model::contract::Order::sample. */
    static Order sample(int i) {
        Order o = new Order();
        o.setOrderId(10_000_000_000L + i);
        o.setPhone(String.format("138%08d", ((long) i * 7919) % 100_000_000L));
        o.setName("customer-" + i);
        o.setOrderNum(String.format("ORD-2015-%06d", i));
        o.setOrderDate(20_150_701 + (i % 28));
        o.setTicketType(i % 4);
        o.setAmount(100.25 + i * 0.5);
        o.setOrderStatus(i % 3);
        return o;
    }

    static List<Order> orders(int n) {
        List<Order> list = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            list.add(sample(i));
        }
        return list;
    }
}
