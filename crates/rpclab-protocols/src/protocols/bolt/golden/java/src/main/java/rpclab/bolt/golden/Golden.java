package rpclab.bolt.golden;

import com.alipay.sofa.rpc.config.ApplicationConfig;
import com.alipay.sofa.rpc.config.ProviderConfig;
import com.alipay.sofa.rpc.config.ServerConfig;
import java.util.ArrayList;
import java.util.List;
import rpclab.contract.BenchService;
import rpclab.contract.BenchServiceImpl;
import rpclab.contract.Order;

/** What the generator and the interop provider share: payloads and a provider. */
final class Golden {
    static final String HOST = "127.0.0.1";

    private Golden() {}

    /** rpclab_model::contract::Order::sample(i), field for field. */
    static Order sample(int i) {
        return new Order(
                10_000_000_000L + i,
                String.format("138%08d", ((long) i * 7919) % 100_000_000L),
                "customer-" + i,
                String.format("ORD-2015-%06d", i),
                20_150_701 + (i % 28),
                i % 4,
                100.25 + i * 0.5,
                i % 3);
    }

    static List<Order> samples(int n) {
        List<Order> orders = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            orders.add(sample(i));
        }
        return orders;
    }

    /** rpclab_model::contract::ascii_text(len). */
    static String asciiText(int len) {
        String alphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_";
        StringBuilder sb = new StringBuilder(len);
        for (int i = 0; i < len; i++) {
            sb.append(alphabet.charAt((i * 31 + i / 64) % alphabet.length()));
        }
        return sb.toString();
    }

    /** A service that throws, exported under uniqueId "throws". */
    static final class Throwing implements BenchService {
        @Override public Order echoOrder(Order order) { throw new IllegalStateException("echoOrder refused"); }
        @Override public List<Order> echoOrders(List<Order> orders) { throw new IllegalStateException("echoOrders refused"); }
        @Override public String echoString(String value) { throw new IllegalStateException("echoString refused"); }
        @Override public String hello(String name) { throw new IllegalStateException("no greeting for " + name); }
        @Override public void empty() { throw new IllegalStateException("empty refused"); }
    }

    /**
     * Exports the contract over bolt on 127.0.0.1:port without a registry
     * (and, under uniqueId "throws", a service that throws).
     */
    static void export(int port) {
        // No tracer (it logs every call); must be set before SOFA's classes load.
        System.setProperty("default.tracer", "");
        ServerConfig server = new ServerConfig()
                .setProtocol("bolt")
                .setHost(HOST)
                .setVirtualHost(HOST)
                .setPort(port)
                .setAdaptivePort(false)
                .setDaemon(false);
        ApplicationConfig app = new ApplicationConfig().setAppName("rpclab-bolt-golden");
        new ProviderConfig<BenchService>()
                .setApplication(app)
                .setInterfaceId(BenchService.class.getName())
                .setRef(new BenchServiceImpl())
                .setServer(server)
                .setRegister(false)
                .export();
        new ProviderConfig<BenchService>()
                .setApplication(app)
                .setInterfaceId(BenchService.class.getName())
                .setUniqueId("throws")
                .setRef(new Throwing())
                .setServer(server)
                .setRegister(false)
                .export();
    }
}
