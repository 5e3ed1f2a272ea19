package rpclab.rmispring;

import org.springframework.context.support.ClassPathXmlApplicationContext;
import org.springframework.core.SpringVersion;
import rpclab.shared.LoopbackSocketFactory;
import rpclab.shared.Serving;

/**
 * rpclab's Spring RMI server: rmi-server.xml's RmiServiceExporter exports
 * rpclab.contract.BenchService (not a java.rmi.Remote interface, so through
 * Spring's RMI invoker: the registry binds an RmiInvocationHandler whose
 * invoke(RemoteInvocation) calls the service) with an RMI registry on
 * RPCLAB_BIND:RPCLAB_PORT (default 127.0.0.1:1100) and the service on the
 * same port; its stubs name RPCLAB_ADVERTISE (see LoopbackSocketFactory).
 *
 * <p>Prints "rpclab server ready on BIND:PORT"; SIGTERM/SIGINT close
 * the context (the exporter unbinds and unexports) and exit with status 0.
 */
public final class SpringRmiServer {
    private SpringRmiServer() {}

    public static void main(String[] args) throws Exception {
        LoopbackSocketFactory.install();
        ClassPathXmlApplicationContext context = new ClassPathXmlApplicationContext("rmi-server.xml");
        String port = context.getEnvironment().getProperty("RPCLAB_PORT", "1100");

        Serving.untilSignalled("rpclab server ready on " + Serving.where(Integer.parseInt(port))
                + " (Spring " + SpringVersion.getVersion() + " RmiServiceExporter, JDK "
                + System.getProperty("java.version") + ")", context::close);
    }
}
