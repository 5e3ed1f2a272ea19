package rpclab;

import rpclab.shared.ContractPayloads;

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
        return ContractPayloads.sample(i, Order::new);
    }
}
