package rpclab.hessiangolden;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import rpclab.contract.Order;

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

    /** rpclab_model::contract::ascii_text(len). */
    static String asciiText(int len) {
        String alphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_";
        StringBuilder s = new StringBuilder(len);
        for (int i = 0; i < len; i++) {
            s.append(alphabet.charAt((i * 31 + i / 64) % alphabet.length()));
        }
        return s.toString();
    }

    static Map<String, Case> all() {
        Map<String, Case> cases = new LinkedHashMap<>();
        List<Order> orders = new ArrayList<>();
        for (int i = 0; i < 100; i++) {
            orders.add(order(i));
        }
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
