package rpclab.dubbo26;

import java.util.List;
import rpclab.contract.BenchService;
import rpclab.contract.Order;

/** The contract: echoes return their argument, hello prefixes "hello ", empty does nothing. */
public final class BenchServiceImpl implements BenchService {
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
        return value;
    }

    @Override
    public String hello(String name) {
        return "hello " + name;
    }

    @Override
    public void empty() {}
}
