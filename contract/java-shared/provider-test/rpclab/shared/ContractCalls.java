package rpclab.shared;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotSame;

import java.util.ArrayList;
import java.util.List;
import rpclab.contract.BenchService;
import rpclab.contract.Order;

/**
 * Every contract operation called once through a framework's client proxy,
 * each reply checked: the payloads of the load client's scenarios (one Order,
 * 100 Orders, 1 KiB, 100 KiB and 1 MiB strings, hello, empty). Test scope
 * (JUnit).
 */
public final class ContractCalls {
    private ContractCalls() {}

    public static Order sample(int i) {
        Order o = new Order();
        o.setOrderId(1_000_000_000_000L + i);
        o.setPhone("1380013" + String.format("%04d", i));
        o.setName("name-" + i);
        o.setOrderNum("ORD-" + i);
        o.setOrderDate(20150101 + i);
        o.setTicketType(i % 3);
        o.setAmount(99.5 + i);
        o.setOrderStatus(i % 5);
        return o;
    }

    public static String ascii(int len) {
        StringBuilder sb = new StringBuilder(len);
        for (int i = 0; i < len; i++) {
            sb.append((char) ('!' + (i % 94)));
        }
        return sb.toString();
    }

    public static void callEveryMethod(BenchService bench) {
        Order order = sample(1);
        Order reply = bench.echoOrder(order);
        assertNotSame(order, reply);
        assertEquals(order, reply);

        List<Order> orders = new ArrayList<>();
        for (int i = 0; i < 100; i++) {
            orders.add(sample(i));
        }
        assertEquals(orders, bench.echoOrders(orders));

        for (int len : new int[] {1024, 102_400, 1_048_576}) {
            String s = ascii(len);
            String echoed = bench.echoString(s);
            assertEquals(len, echoed.length());
            assertEquals(s, echoed);
        }
        assertEquals("hello aa", bench.hello("aa"));
        bench.empty();
    }
}
