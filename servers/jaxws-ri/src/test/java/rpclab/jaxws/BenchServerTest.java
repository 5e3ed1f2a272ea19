package rpclab.jaxws;

import javax.xml.ws.Endpoint;
import rpclab.shared.SoapEndpointCases;

/** The endpoint the JAX-WS RI publishes, through the SOAP servers' shared cases. */
class BenchServerTest extends SoapEndpointCases {
    BenchServerTest() {
        super(BenchServer.PATH);
    }

    @Override
    protected AutoCloseable start(int port) {
        Endpoint endpoint = BenchServer.start(port, 4);
        return endpoint::stop;
    }
}
