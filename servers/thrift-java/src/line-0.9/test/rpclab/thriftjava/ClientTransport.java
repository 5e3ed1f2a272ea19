package rpclab.thriftjava;

import org.apache.thrift.transport.TFramedTransport;
import org.apache.thrift.transport.TSocket;
import org.apache.thrift.transport.TTransport;

/** A client socket as libthrift 0.9.x opens one. */
final class ClientTransport {
    private ClientTransport() {}

    static TTransport open(String host, int port, boolean framed, int maxFrameSize) throws Exception {
        TSocket socket = new TSocket(host, port, 30_000);
        TTransport transport = framed ? new TFramedTransport(socket, maxFrameSize) : socket;
        transport.open();
        return transport;
    }
}
