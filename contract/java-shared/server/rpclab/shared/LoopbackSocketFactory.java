package rpclab.shared;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.rmi.server.RMISocketFactory;

/**
 * RMI's process-wide socket factory, installed with
 * RMISocketFactory.setSocketFactory: server sockets bound to 127.0.0.1 (the
 * JDK default binds every interface) and plain client sockets.
 *
 * <p>Why the global factory rather than per-object RMIServerSocketFactory
 * arguments: objects exported without custom factories keep the plain
 * "UnicastRef" stub format (host, port, ObjID, no serialized client factory),
 * the format a stock JDK client gets from a stock server; and the registry and
 * the service then share one listening port. Used by the RMI servers
 * (rmi-jdk, rmi-spring, dubbo-rmi).
 */
public final class LoopbackSocketFactory extends RMISocketFactory {
    public static final String HOST = "127.0.0.1";

    @Override
    public ServerSocket createServerSocket(int port) throws IOException {
        return new ServerSocket(port, 128, InetAddress.getByName(HOST));
    }

    @Override
    public Socket createSocket(String host, int port) throws IOException {
        return new Socket(host, port);
    }

    /** Pins the stubs' host and installs the factory; call before anything touches RMI. */
    public static void install() throws IOException {
        System.setProperty("java.rmi.server.hostname", HOST);
        RMISocketFactory.setSocketFactory(new LoopbackSocketFactory());
    }
}
