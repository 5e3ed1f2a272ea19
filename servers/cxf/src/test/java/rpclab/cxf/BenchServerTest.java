package rpclab.cxf;

import org.apache.catalina.startup.Tomcat;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import rpclab.shared.SoapEndpointCases;

/** The endpoint CXF publishes in Tomcat, through the SOAP servers' shared cases. */
class BenchServerTest extends SoapEndpointCases {
    static Tomcat tomcat;
    static String url;

    @BeforeAll
    static void start() throws Exception {
        int port = freePort();
        tomcat = BenchServer.start(port, 4, -1);
        url = "http://" + BenchServer.HOST + ":" + port + BenchServer.PATH;
    }

    @AfterAll
    static void stop() throws Exception {
        tomcat.stop();
        tomcat.destroy();
    }

    @Override
    protected String url() {
        return url;
    }
}
