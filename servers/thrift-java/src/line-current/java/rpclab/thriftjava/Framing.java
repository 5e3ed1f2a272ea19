package rpclab.thriftjava;

import org.apache.thrift.transport.TTransportFactory;
import org.apache.thrift.transport.layered.TFramedTransport;

/** The framed transport of libthrift 0.14 and later (org.apache.thrift.transport.layered). */
final class Framing {
    private Framing() {}

    static TTransportFactory factory(int maxFrameSize) {
        return new TFramedTransport.Factory(maxFrameSize);
    }
}
