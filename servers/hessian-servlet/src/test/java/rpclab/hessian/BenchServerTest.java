package rpclab.hessian;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.caucho.hessian.client.HessianProxyFactory;
import java.net.ServerSocket;
import java.util.ArrayList;
import java.util.List;
import org.apache.catalina.startup.Tomcat;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import rpclab.contract.BenchService;
import rpclab.contract.Order;

/** The server against Caucho's own client (HessianProxyFactory), every operation of the contract. */
class BenchServerTest {
    static Tomcat tomcat;
    static BenchService proxy;

    @BeforeAll
    static void start() throws Exception {
        int port;
        try (ServerSocket s = new ServerSocket(0)) {
            port = s.getLocalPort();
        }
        tomcat = BenchServer.start(port, 8, -1);
        HessianProxyFactory factory = new HessianProxyFactory();
        factory.setHessian2Request(true);
        factory.setHessian2Reply(true);
        proxy = (BenchService) factory.create(BenchService.class,
                "http://" + BenchServer.HOST + ":" + port + BenchServer.PATH);
    }

    @AfterAll
    static void stop() throws Exception {
        tomcat.stop();
        tomcat.destroy();
    }

    static Order order(int i) {
        return new Order(10_000_000_000L + i, "1380013800" + i, "name " + i, "NO-" + i, 20250101 + i, i % 3, 100.75 + i, i % 5);
    }

    @Test
    void everyOperation() {
        assertEquals("hello aa", proxy.hello("aa"));
        assertEquals(order(1), proxy.echoOrder(order(1)));
        List<Order> orders = new ArrayList<>();
        for (int i = 0; i < 100; i++) {
            orders.add(order(i));
        }
        assertEquals(orders, proxy.echoOrders(orders));
        String big = "x".repeat(1 << 20);
        assertEquals(big, proxy.echoString(big));
        proxy.empty();
    }

    /** A method the service does not have. */
    interface Missing {
        String nope(String s);
    }

    @Test
    void anUnknownMethodIsAFault() throws Exception {
        HessianProxyFactory factory = new HessianProxyFactory();
        Missing missing = (Missing) factory.create(Missing.class,
                "http://" + BenchServer.HOST + ":" + tomcat.getConnector().getLocalPort() + BenchServer.PATH);
        RuntimeException e = assertThrows(RuntimeException.class, () -> missing.nope("x"));
        // A checked HessianServiceException (fault code NoSuchMethodException), wrapped by the proxy.
        Throwable fault = e.getCause() != null ? e.getCause() : e;
        assertTrue(String.valueOf(fault.getMessage()).contains("nope"), fault.toString());
    }
}
