package rpclab.thriftjava;

import java.util.List;
import rpclab.thrift.Bench;
import rpclab.thrift.Order;

/**
 * The rpclab contract (contract/bench.thrift): echo operations return their
 * argument unchanged, hello returns "hello " + name, empty does nothing.
 * No caching, no logging per call.
 */
final class BenchHandler implements Bench.Iface {
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
