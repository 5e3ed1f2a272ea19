package rpclab;

import java.io.Serializable;

/**
 * The lab contract's Order, field for field and in declaration order (see
 * crates/rpclab-model/src/contract.rs). No equals(): the golden code compares
 * objects field by field with reflection.
 */
public class Order implements Serializable {
    private static final long serialVersionUID = 1L;

    private long orderId;
    private String phone;
    private String name;
    private String orderNum;
    private int orderDate;
    private int ticketType;
    private double amount;
    private int orderStatus;

    public Order() {}

    public Order(long orderId, String phone, String name, String orderNum,
                 int orderDate, int ticketType, double amount, int orderStatus) {
        this.orderId = orderId;
        this.phone = phone;
        this.name = name;
        this.orderNum = orderNum;
        this.orderDate = orderDate;
        this.ticketType = ticketType;
        this.amount = amount;
        this.orderStatus = orderStatus;
    }

    /** The i-th order of the contract's deterministic sequence (Order::sample in Rust). */
    public static Order sample(int i) {
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
