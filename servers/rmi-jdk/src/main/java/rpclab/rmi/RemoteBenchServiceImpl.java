package rpclab.rmi;

import java.util.List;
import rpclab.contract.BenchService;
import rpclab.contract.BenchServiceImpl;
import rpclab.contract.Order;

/** Delegates to the contract's one implementation (contract/java), so every framework answers alike. */
public final class RemoteBenchServiceImpl implements RemoteBenchService {
    private final BenchService impl = new BenchServiceImpl();

    @Override
    public Order echoOrder(Order order) {
        return impl.echoOrder(order);
    }

    @Override
    public List<Order> echoOrders(List<Order> orders) {
        return impl.echoOrders(orders);
    }

    @Override
    public String echoString(String value) {
        return impl.echoString(value);
    }

    @Override
    public String hello(String name) {
        return impl.hello(name);
    }

    @Override
    public void empty() {
        impl.empty();
    }
}
