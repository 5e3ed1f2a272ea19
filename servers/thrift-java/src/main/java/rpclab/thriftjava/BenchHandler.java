package rpclab.thriftjava;

import java.util.List;
import rpclab.contract.BenchServiceImpl;
import rpclab.thrift.Bench;
import rpclab.thrift.Order;

/**
 * The rpclab contract (contract/bench.thrift) on Thrift's generated
 * interface: the operations on plain Java types are the contract's
 * {@link BenchServiceImpl}; the echoes of Thrift's own Order return their
 * argument unchanged, as the contract's do. No caching, no logging per call.
 */
final class BenchHandler implements Bench.Iface {
    private final BenchServiceImpl contract = new BenchServiceImpl();

    @Override
    public Order echoOrder(Order order) {
        return order;
    }

    @Override
    public List<Order> echoOrders(List<Order> orders) {
        return orders;
    }

    @Override
    public String echoString(String value) {
        return contract.echoString(value);
    }

    @Override
    public String hello(String name) {
        return contract.hello(name);
    }

    @Override
    public void empty() {
        contract.empty();
    }
}
