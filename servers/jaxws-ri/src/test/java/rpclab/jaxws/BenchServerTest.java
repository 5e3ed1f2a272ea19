package rpclab.jaxws;

import javax.xml.ws.Endpoint;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import rpclab.shared.SoapEndpointCases;

/** The endpoint the JAX-WS RI publishes, through the SOAP servers' shared cases. */
class BenchServerTest extends SoapEndpointCases {
    static Endpoint endpoint;
    static String url;

    @BeforeAll
    static void start() throws Exception {
        int port = freePort();
        endpoint = BenchServer.start(port, 4);
        url = "http://" + BenchServer.HOST + ":" + port + BenchServer.PATH;
    }

    @AfterAll
    static void stop() {
        endpoint.stop();
    }

    @Override
    protected String url() {
        return url;
    }
}
