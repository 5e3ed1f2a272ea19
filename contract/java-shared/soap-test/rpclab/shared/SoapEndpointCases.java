package rpclab.shared;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * The cases every SOAP server's endpoint must pass over plain HTTP: its WSDL,
 * a call, and a fault. The servers publish {@link BenchWs} through different
 * stacks (CXF in Tomcat, the JAX-WS RI's own HTTP server), so a server's test
 * says how to start its own endpoint on a port and under which path; the
 * cases are one copy, so both stacks are held to the same wire behaviour.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
public abstract class SoapEndpointCases {
    static final HttpClient HTTP = HttpClient.newHttpClient();

    private final String path;
    private String url;
    private AutoCloseable endpoint;

    /** The cases of an endpoint published under {@code path}, e.g. {@code /bench}. */
    protected SoapEndpointCases(String path) {
        this.path = path;
    }

    /** Publishes the endpoint on 127.0.0.1:{@code port}; closing the result stops it. */
    protected abstract AutoCloseable start(int port) throws Exception;

    @BeforeAll
    void startEndpoint() throws Exception {
        int port = freePort();
        endpoint = start(port);
        url = "http://127.0.0.1:" + port + path;
    }

    @AfterAll
    void stopEndpoint() throws Exception {
        endpoint.close();
    }

    /** The published endpoint's URL, e.g. {@code http://127.0.0.1:8080/bench}. */
    String url() {
        return url;
    }

    /** A port nothing listens on now, for the endpoint under test. */
    static int freePort() throws IOException {
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
