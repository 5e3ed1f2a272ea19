package rpclab.shared;

import java.util.ArrayList;
import java.util.List;

/**
 * The contract's deterministic payloads, built as rpclab_model::contract
 * builds them (Order::sample, ascii_text), so that what a Java golden
 * generator or test sends is, field for field, what the Rust client sends.
 *
 * <p>It names no Order class: the contract's {@code rpclab.contract.Order},
 * the Slice-generated {@code rpclab.Order} of Ice and the golden vectors'
 * {@code rpclab.Order} of hessian2 all take the eight fields in the
 * contract's order, so each caller passes its constructor
 * ({@code ContractPayloads.sample(1, Order::new)}).
 */
public final class ContractPayloads {
    private ContractPayloads() {}

    /** A constructor taking the contract's eight Order fields in their order. */
    @FunctionalInterface
    public interface OrderFields<T> {
        T of(long orderId, String phone, String name, String orderNum, int orderDate, int ticketType,
                double amount, int orderStatus);
    }

    /** {@code Order::sample(i)}: the i-th order of the contract's sequence. */
    public static <T> T sample(int i, OrderFields<T> order) {
        return order.of(
                10_000_000_000L + i,
                String.format("138%08d", (i * 7919L) % 100_000_000L),
                "customer-" + i,
                String.format("ORD-2015-%06d", i),
                20_150_701 + (i % 28),
                i % 4,
                100.25 + i * 0.5,
                i % 3);
    }

    /** The first {@code n} samples, as the echoOrders payload of n orders. */
    public static <T> List<T> samples(int n, OrderFields<T> order) {
        List<T> orders = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            orders.add(sample(i, order));
        }
        return orders;
    }

    /** {@code ascii_text(len)}: the echoString payload of {@code len} characters. */
    public static String asciiText(int len) {
        String alphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_";
        StringBuilder text = new StringBuilder(len);
        for (int i = 0; i < len; i++) {
            text.append(alphabet.charAt((i * 31 + i / 64) % alphabet.length()));
        }
        return text.toString();
    }
}
