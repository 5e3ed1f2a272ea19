package rpclab.soapgolden;

import rpclab.shared.BenchWs;
import javax.xml.ws.Endpoint;

/** JAX-WS RI: Endpoint.publish on the JDK's HTTP server, as servers/jaxws-ri. */
final class Publisher {
    private Publisher() {}

    static AutoCloseable publish(int port) {
        Endpoint endpoint = Endpoint.publish("http://127.0.0.1:" + port + "/bench", new BenchWs());
        System.out.println("published with " + endpoint.getClass().getName());
        return endpoint::stop;
    }
}
