package rpclab.grpcjava;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.grpc.ManagedChannel;
import io.grpc.Server;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import rpclab.grpc.BenchGrpc;
import rpclab.grpc.Nothing;
import rpclab.grpc.Order;
import rpclab.grpc.OrderList;
import rpclab.grpc.Text;

/** Starts the real server on a free port and calls every method through the generated client. */
class BenchServerTest {
    private static Server server;
    private static ManagedChannel channel;
    private static BenchGrpc.BenchBlockingStub stub;

    @BeforeAll
    static void startServer() throws Exception {
        server = BenchServer.start(0);
        assertTrue(server.getPort() > 0);
        channel = NettyChannelBuilder.forAddress(BenchServer.HOST, server.getPort())
                .usePlaintext()
                .maxInboundMessageSize(BenchServer.MAX_INBOUND_MESSAGE_SIZE)
                .build();
        stub = BenchGrpc.newBlockingStub(channel).withDeadlineAfter(30, TimeUnit.SECONDS);
    }

    @AfterAll
    static void stopServer() throws Exception {
        channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        server.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
    }

    /** Same shape as rpclab_model's Order::sample(i); the exact values do not matter here. */
    static Order sample(int i) {
        return Order.newBuilder()
                .setOrderId(1_000_000_000_000L + i)
                .setPhone("1380013" + String.format("%04d", i))
                .setName("name-" + i)
                .setOrderNum("ORD-" + i)
                .setOrderDate(20150101 + i)
                .setTicketType(i % 3)
                .setAmount(99.5 + i)
                .setOrderStatus(i % 5)
                .build();
    }

    static String ascii(int len) {
        StringBuilder sb = new StringBuilder(len);
        for (int i = 0; i < len; i++) {
            sb.append((char) ('!' + (i % 94)));
        }
        return sb.toString();
    }

    @Test
    void echoOrder() {
        Order order = sample(1);
        Order reply = stub.echoOrder(order);
        assertEquals(order, reply);
        assertEquals(1_000_000_000_001L, reply.getOrderId());
        assertEquals(100.5, reply.getAmount());
    }

    @Test
    void echoOrders() {
        OrderList.Builder list = OrderList.newBuilder();
        for (int i = 0; i < 100; i++) {
            list.addOrders(sample(i));
        }
        OrderList request = list.build();
        OrderList reply = stub.echoOrders(request);
        assertEquals(100, reply.getOrdersCount());
        assertEquals(request, reply);
    }

    @Test
    void echoString() {
        for (int len : new int[] {1024, 102_400, 1_048_576}) {
            String value = ascii(len);
            Text reply = stub.echoString(Text.newBuilder().setValue(value).build());
            assertEquals(len, reply.getValue().length());
            assertEquals(value, reply.getValue());
        }
    }

    @Test
    void hello() {
        Text reply = stub.hello(Text.newBuilder().setValue("aa").build());
        assertEquals("hello aa", reply.getValue());
        assertNotEquals("aa", reply.getValue());
    }

    @Test
    void empty() {
        assertEquals(Nothing.getDefaultInstance(), stub.empty(Nothing.getDefaultInstance()));
    }
}
