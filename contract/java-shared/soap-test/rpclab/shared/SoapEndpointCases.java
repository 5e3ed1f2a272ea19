package rpclab.shared;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import org.junit.jupiter.api.Test;

/**
 * The cases every SOAP server's endpoint must pass over plain HTTP: its WSDL,
 * a call, and a fault. The servers publish {@link BenchWs} through different
 * stacks (CXF in Tomcat, the JAX-WS RI's own HTTP server), so a server's test
 * starts and stops its own endpoint and hands the URL here; the cases are one
 * copy, so both stacks are held to the same wire behaviour.
 */
public abstract class SoapEndpointCases {
    static final HttpClient HTTP = HttpClient.newHttpClient();

    /** The published endpoint's URL, e.g. {@code http://127.0.0.1:8080/bench}. */
    protected abstract String url();

    /** A port nothing listens on now, for the endpoint under test. */
    protected static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0)) {
            return s.getLocalPort();
        }
    }

    HttpResponse<String> post(String body) throws Exception {
        return HTTP.send(HttpRequest.newBuilder(URI.create(url()))
                        .header("Content-Type", "text/xml; charset=utf-8")
                        .header("SOAPAction", "\"\"")
                        .POST(HttpRequest.BodyPublishers.ofString(body))
                        .build(),
                HttpResponse.BodyHandlers.ofString());
    }

    static String envelope(String body) {
        return "<S:Envelope xmlns:S=\"http://schemas.xmlsoap.org/soap/envelope/\"><S:Body>" + body
                + "</S:Body></S:Envelope>";
    }

    @Test
    void wsdlAndACall() throws Exception {
        HttpResponse<String> wsdl = HTTP.send(HttpRequest.newBuilder(URI.create(url() + "?wsdl")).build(),
                HttpResponse.BodyHandlers.ofString());
        assertEquals(200, wsdl.statusCode());
        assertTrue(wsdl.body().contains("echoOrders"), wsdl.body());
        HttpResponse<String> r = post(envelope("<ns:hello xmlns:ns=\"" + BenchWs.NAMESPACE + "\"><arg0>aa</arg0></ns:hello>"));
        assertEquals(200, r.statusCode(), r.body());
        assertTrue(r.body().contains("<return>hello aa</return>"), r.body());
    }

    @Test
    void anUnknownOperationIsAFault() throws Exception {
        HttpResponse<String> r = post(envelope("<ns:nope xmlns:ns=\"" + BenchWs.NAMESPACE + "\"/>"));
        assertEquals(500, r.statusCode(), r.body());
        assertTrue(r.body().contains("Fault"), r.body());
    }
}
