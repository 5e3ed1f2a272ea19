package rpclab.thriftjava;

import org.apache.thrift.TConfiguration;
import org.apache.thrift.transport.TSocket;
import org.apache.thrift.transport.TTransport;
import org.apache.thrift.transport.layered.TFramedTransport;

/** A client socket as libthrift 0.14 and later open one. */
final class ClientTransport {
    private ClientTransport() {}

    static TTransport open(String host, int port, boolean framed, int maxFrameSize) throws Exception {
        TSocket socket = new TSocket(new TConfiguration(), host, port, 30_000);
        TTransport transport = framed ? new TFramedTransport(socket, maxFrameSize) : socket;
        transport.open();
        return transport;
    }
}
