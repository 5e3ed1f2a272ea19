package rpclab.shared;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.rmi.server.RMISocketFactory;

/**
 * RMI's process-wide socket factory, installed with
 * RMISocketFactory.setSocketFactory: server sockets bound to RPCLAB_BIND
 * (default 127.0.0.1; the JDK default binds every interface) and plain client
 * sockets. The stubs name RPCLAB_ADVERTISE (java.rmi.server.hostname; default
 * the bind address, or 127.0.0.1 for 0.0.0.0), the address a client reaches
 * the server at.
 *
 * <p>Why the global factory rather than per-object RMIServerSocketFactory
 * arguments: objects exported without custom factories keep the plain
 * "UnicastRef" stub format (host, port, ObjID, no serialized client factory),
 * the format a stock JDK client gets from a stock server; and the registry and
 * the service then share one listening port. Used by the RMI servers
 * (rmi-jdk, rmi-spring, dubbo-rmi).
 */
public final class LoopbackSocketFactory extends RMISocketFactory {
    /** The interface the server sockets listen on (RPCLAB_BIND). */
    public static final String BIND = Env.bind();
    /** The host the stubs name (RPCLAB_ADVERTISE). */
    public static final String ADVERTISE = Env.advertise();

    @Override
    public ServerSocket createServerSocket(int port) throws IOException {
        return new ServerSocket(port, 128, InetAddress.getByName(BIND));
    }

    @Override
    public Socket createSocket(String host, int port) throws IOException {
        return new Socket(host, port);
    }

    /** Pins the stubs' host and installs the factory; call before anything touches RMI. */
    public static void install() throws IOException {
        System.setProperty("java.rmi.server.hostname", ADVERTISE);
        RMISocketFactory.setSocketFactory(new LoopbackSocketFactory());
    }
}
