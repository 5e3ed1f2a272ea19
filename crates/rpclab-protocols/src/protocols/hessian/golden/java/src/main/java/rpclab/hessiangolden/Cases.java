package rpclab.hessiangolden;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import rpclab.contract.Order;
import rpclab.shared.ContractPayloads;

import static rpclab.shared.ContractPayloads.asciiText;

/**
 * The calls of the golden vectors: each contract operation with the payload
 * the Rust client sends (rpclab_model::contract: Order::sample, ascii_text),
 * plus a call of a method the service does not have (a fault).
 */
final class Cases {
    private Cases() {}

    /** Name, method, arguments. */
    record Case(String name, String method, Object[] args) {}

    /** rpclab_model::contract::Order::sample(i). */
    static Order order(int i) {
        return ContractPayloads.sample(i, Order::new);
    }

    static Map<String, Case> all() {
        Map<String, Case> cases = new LinkedHashMap<>();
        List<Order> orders = ContractPayloads.samples(100, Order::new);
        for (Case c : new Case[] {
                new Case("order-echo", "echoOrder", new Object[] {order(1)}),
                new Case("orders-echo", "echoOrders", new Object[] {orders}),
                new Case("string-1k", "echoString", new Object[] {asciiText(1024)}),
                new Case("string-100k", "echoString", new Object[] {asciiText(100 * 1024)}),
                new Case("hello", "hello", new Object[] {"aa"}),
                new Case("empty", "empty", null),
                new Case("fault-no-such-method", "nope", new Object[] {"aa"}),
        }) {
            cases.put(c.name(), c);
        }
        return cases;
    }
}
