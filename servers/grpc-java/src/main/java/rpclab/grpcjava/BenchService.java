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

    @Override
    public void echoOrder(Order request, StreamObserver<Order> responseObserver) {
        responseObserver.onNext(request);
        responseObserver.onCompleted();
    }

    @Override
    public void echoOrders(OrderList request, StreamObserver<OrderList> responseObserver) {
        responseObserver.onNext(request);
        responseObserver.onCompleted();
    }

    @Override
    public void echoString(Text request, StreamObserver<Text> responseObserver) {
        responseObserver.onNext(request);
        responseObserver.onCompleted();
    }

    @Override
    public void hello(Text request, StreamObserver<Text> responseObserver) {
        responseObserver.onNext(Text.newBuilder().setValue("hello " + request.getValue()).build());
        responseObserver.onCompleted();
    }

    @Override
    public void empty(Nothing request, StreamObserver<Nothing> responseObserver) {
        responseObserver.onNext(NOTHING);
        responseObserver.onCompleted();
    }
}
