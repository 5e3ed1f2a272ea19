package rpclab.golden;

import rpclab.contract.Order;

/** The contract's deterministic payloads, as rpclab_model::contract builds them. */
final class Contract {
    private Contract() {}

    /** {@code Order::sample(i)}. */
    static Order sample(int i) {
        return new Order(
                10_000_000_000L + i,
                String.format("138%08d", (i * 7919L) % 100_000_000L),
                "customer-" + i,
                String.format("ORD-2015-%06d", i),
                20_150_701 + (i % 28),
                i % 4,
                100.25 + i * 0.5,
                i % 3);
    }
}
