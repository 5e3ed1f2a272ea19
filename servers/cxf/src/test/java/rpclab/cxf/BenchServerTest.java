package rpclab.cxf;

import org.apache.catalina.startup.Tomcat;
import rpclab.shared.SoapEndpointCases;

/** The endpoint CXF publishes in Tomcat, through the SOAP servers' shared cases. */
class BenchServerTest extends SoapEndpointCases {
    BenchServerTest() {
        super(BenchServer.PATH);
    }

    @Override
    protected AutoCloseable start(int port) throws Exception {
        Tomcat tomcat = BenchServer.start(port, 4, -1);
        return () -> {
            tomcat.stop();
            tomcat.destroy();
        };
    }
}
