package rpclab;

/**
 * The lab contract's Order (contract/java/rpclab/contract/Order.java: its
 * fields, in its declaration order, are what Hessian writes) under the class
 * name `rpclab.Order` that the golden vectors carry. No fields of its own, so
 * the objects are field for field the contract's.
 */
public class Order extends rpclab.contract.Order {
    private static final long serialVersionUID = 1L;

    public Order() {}

    public Order(long orderId, String phone, String name, String orderNum,
                 int orderDate, int ticketType, double amount, int orderStatus) {
        super(orderId, phone, name, orderNum, orderDate, ticketType, amount, orderStatus);
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
