package rpclab.contract;

import java.util.List;

/**
 * The service contract (contract/README.md) as a Java interface, for frameworks
 * configured by Java interfaces (Dubbo, Motan, SOFA-RPC, RMI, Hessian).
 *
 * <p>The fully qualified name {@code rpclab.contract.BenchService} and the
 * method names are on the wire (Dubbo's service path and method name) and the
 * Rust client uses them verbatim: do not rename.
 */
public interface BenchService {
    /** {@code order-echo}: returns its argument unchanged. */
    Order echoOrder(Order order);

    /** {@code orders-echo}: returns its argument (100 orders) unchanged. */
    List<Order> echoOrders(List<Order> orders);

    /** {@code string-1k}, {@code string-100k}, {@code string-1m}: returns its argument unchanged. */
    String echoString(String value);

    /** {@code hello}: returns {@code "hello " + name}. */
    String hello(String name);

    /** {@code empty}: does nothing. */
    void empty();
}
