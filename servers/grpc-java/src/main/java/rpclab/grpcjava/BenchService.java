package rpclab.grpcjava;

import io.grpc.stub.StreamObserver;
import rpclab.grpc.BenchGrpc;
import rpclab.grpc.Nothing;
import rpclab.grpc.Order;
import rpclab.grpc.OrderList;
import rpclab.grpc.Text;

/**
 * The rpclab contract (contract/bench.proto): echo operations return their
 * argument unchanged, hello returns "hello " + name, empty does nothing.
 * No caching, no logging per call.
 */
final class BenchService extends BenchGrpc.BenchImplBase {
    private static final Nothing NOTHING = Nothing.getDefaultInstance();

    /** Every call of the contract is unary: one reply, then the end of the call. */
    private static <T> void reply(StreamObserver<T> responseObserver, T value) {
        responseObserver.onNext(value);
        responseObserver.onCompleted();
    }

    @Override
    public void echoOrder(Order request, StreamObserver<Order> responseObserver) {
        reply(responseObserver, request);
    }

    @Override
    public void echoOrders(OrderList request, StreamObserver<OrderList> responseObserver) {
        reply(responseObserver, request);
    }

    @Override
    public void echoString(Text request, StreamObserver<Text> responseObserver) {
        reply(responseObserver, request);
    }

    @Override
    public void hello(Text request, StreamObserver<Text> responseObserver) {
        reply(responseObserver, Text.newBuilder().setValue("hello " + request.getValue()).build());
    }

    @Override
    public void empty(Nothing request, StreamObserver<Nothing> responseObserver) {
        reply(responseObserver, NOTHING);
    }
}
