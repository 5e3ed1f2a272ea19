package rpclab.grpcjava;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.grpc.ChannelImpl;
import io.grpc.MethodDescriptor;
import io.grpc.ServerImpl;
import io.grpc.stub.Calls;
import io.grpc.stub.Method;
import io.grpc.transport.netty.NegotiationType;
import io.grpc.transport.netty.NettyChannelBuilder;
import java.net.ServerSocket;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import rpclab.grpc.Nothing;
import rpclab.grpc.Order;
import rpclab.grpc.OrderList;
import rpclab.grpc.Text;

/** Starts the real 0.7 server and calls every method through a 0.7 channel with the same descriptors. */
class BenchServerTest {
    private ServerImpl server;
    private ChannelImpl channel;

    @AfterEach
    void stop() throws Exception {
        if (channel != null) {
            channel.shutdownNow();
        }
        if (server != null) {
            BenchServer.stop(server);
            assertEquals(true, server.isTerminated());
        }
    }

    private <Q, R> R call(Method<Q, R> method, Q request) {
        MethodDescriptor<Q, R> descriptor = Calls.createMethodDescriptor(BenchDefinition.SERVICE, method)
                .withTimeout(30, TimeUnit.SECONDS);
        return Calls.blockingUnaryCall(channel.newCall(descriptor), request);
    }

    static Order sample(int i) {
        return Order.newBuilder().setOrderId(1_000_000_000_000L + i).setPhone("1380013" + String.format("%04d", i))
                .setName("name-" + i).setOrderNum("ORD-" + i).setOrderDate(20150101 + i).setTicketType(i % 3)
                .setAmount(99.5 + i).setOrderStatus(i % 5).build();
    }

    @Test
    void everyMethod() throws Exception {
        int port;
        try (ServerSocket probe = new ServerSocket(0)) {
            port = probe.getLocalPort();
        }
        server = BenchServer.start(port);
        channel = NettyChannelBuilder.forAddress(BenchServer.HOST, port)
                .negotiationType(NegotiationType.PLAINTEXT).build();

        Order order = sample(1);
        assertEquals(order, call(BenchDefinition.ECHO_ORDER, order));

        OrderList.Builder list = OrderList.newBuilder();
        for (int i = 0; i < 100; i++) {
            list.addOrders(sample(i));
        }
        assertEquals(list.build(), call(BenchDefinition.ECHO_ORDERS, list.build()));

        StringBuilder big = new StringBuilder();
        for (int i = 0; i < 1_048_576; i++) {
            big.append((char) ('!' + (i % 94)));
        }
        Text text = Text.newBuilder().setValue(big.toString()).build();
        assertEquals(text, call(BenchDefinition.ECHO_STRING, text));

        assertEquals("hello aa", call(BenchDefinition.HELLO, Text.newBuilder().setValue("aa").build()).getValue());
        assertEquals(Nothing.getDefaultInstance(), call(BenchDefinition.EMPTY, Nothing.getDefaultInstance()));
    }
}
