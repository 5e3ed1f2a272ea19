package rpclab.thriftjava;

import org.apache.thrift.transport.TFramedTransport;
import org.apache.thrift.transport.TTransportFactory;

/** The framed transport of libthrift 0.9.x (org.apache.thrift.transport, before the layered package of 0.14). */
final class Framing {
    private Framing() {}

    static TTransportFactory factory(int maxFrameSize) {
        return new TFramedTransport.Factory(maxFrameSize);
    }
}
