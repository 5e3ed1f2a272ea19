package rpclab.thriftjava;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.apache.thrift.protocol.TBinaryProtocol;
import org.apache.thrift.protocol.TCompactProtocol;
import org.apache.thrift.protocol.TProtocol;
import org.apache.thrift.transport.TTransport;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import rpclab.thrift.Bench;
import rpclab.thrift.Order;

/**
 * Starts the real server on a free port for each transport/protocol pair and
 * calls every method through the generated client.
 */
class BenchServerTest {
    private BenchServer server;
    private Thread serveThread;
    private TTransport clientTransport;

    static List<Arguments> configurations() {
        List<Arguments> all = new ArrayList<>();
        for (BenchServer.Transport t : BenchServer.Transport.values()) {
            for (BenchServer.Protocol p : BenchServer.Protocol.values()) {
                all.add(Arguments.of(t, p));
            }
        }
        return all;
    }

    Bench.Client start(BenchServer.Transport transport, BenchServer.Protocol protocol) throws Exception {
        server = BenchServer.create(0, transport, protocol);
        serveThread = new Thread(server::serve, "test-serve");
        serveThread.start();
        assertTrue(server.awaitServing(10, TimeUnit.SECONDS));
        assertTrue(server.port() > 0);

        clientTransport = ClientTransport.open(BenchServer.HOST, server.port(),
                transport == BenchServer.Transport.FRAMED, BenchServer.MAX_FRAME_SIZE);
        TProtocol wire = protocol == BenchServer.Protocol.BINARY
                ? new TBinaryProtocol(clientTransport)
                : new TCompactProtocol(clientTransport);
        return new Bench.Client(wire);
    }

    @AfterEach
    void stop() throws Exception {
        if (clientTransport != null) {
            clientTransport.close();
        }
        if (server != null) {
            server.stop();
            serveThread.join(10_000);
            assertTrue(!serveThread.isAlive(), "serve() did not return after stop()");
        }
    }

    /** Same shape as rpclab_model's Order::sample(i); the exact values do not matter here. */
    static Order sample(int i) {
        return new Order(1_000_000_000_000L + i, "1380013" + String.format("%04d", i), "name-" + i,
                "ORD-" + i, 20150101 + i, i % 3, 99.5 + i, i % 5);
    }

    static String ascii(int len) {
        StringBuilder sb = new StringBuilder(len);
        for (int i = 0; i < len; i++) {
            sb.append((char) ('!' + (i % 94)));
        }
        return sb.toString();
    }

    @ParameterizedTest(name = "{0} {1}")
    @MethodSource("configurations")
    void everyMethod(BenchServer.Transport transport, BenchServer.Protocol protocol) throws Exception {
        Bench.Client client = start(transport, protocol);

        Order order = sample(1);
        Order reply = client.echoOrder(order);
        assertEquals(order, reply);
        assertEquals(1_000_000_000_001L, reply.getOrderId());
        assertEquals(100.5, reply.getAmount());

        List<Order> orders = new ArrayList<>();
        for (int i = 0; i < 100; i++) {
            orders.add(sample(i));
        }
        List<Order> echoed = client.echoOrders(orders);
        assertEquals(100, echoed.size());
        assertEquals(orders, echoed);

        for (int len : new int[] {1024, 102_400, 1_048_576}) {
            String value = ascii(len);
            String back = client.echoString(value);
            assertEquals(len, back.length());
            assertEquals(value, back);
        }

        String hello = client.hello("aa");
        assertEquals("hello aa", hello);
        assertNotEquals("aa", hello);

        client.empty();
        // the connection is still usable after a void call
        assertEquals("hello bb", client.hello("bb"));
    }
}
