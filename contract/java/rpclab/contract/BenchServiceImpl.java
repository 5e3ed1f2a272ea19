package rpclab.contract;

import java.util.List;

/**
 * The contract implemented once for every Java server whose framework serves
 * a plain Java interface (Dubbo, and later Motan, SOFA-RPC, RMI, Hessian):
 * echoes return their argument, hello prefixes "hello ", empty does nothing.
 * Not final: a framework whose interface only adds checked exceptions to the
 * same methods (plain RMI's {@code java.rmi.Remote}) extends it instead of
 * delegating each method by hand.
 */
public class BenchServiceImpl implements BenchService {
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
