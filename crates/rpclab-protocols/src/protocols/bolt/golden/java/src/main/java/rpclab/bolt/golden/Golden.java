package rpclab.bolt.golden;

import com.alipay.sofa.rpc.config.ApplicationConfig;
import com.alipay.sofa.rpc.config.ProviderConfig;
import com.alipay.sofa.rpc.config.ServerConfig;
import java.util.List;
import rpclab.contract.BenchService;
import rpclab.contract.BenchServiceImpl;
import rpclab.contract.Order;

/**
 * What the generator and the interop provider share: a provider (the
 * payloads are the contract's, from {@code rpclab.shared.ContractPayloads}).
 */
final class Golden {
    static final String HOST = "127.0.0.1";

    private Golden() {}

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
