package rpclab.jaxws;

import rpclab.shared.BenchWs;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import javax.xml.ws.Endpoint;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** The published endpoint over plain HTTP: its WSDL, a call, and a fault. */
class BenchServerTest {
    static Endpoint endpoint;
    static String url;
    static final HttpClient HTTP = HttpClient.newHttpClient();

    @BeforeAll
    static void start() throws Exception {
        int port;
        try (ServerSocket s = new ServerSocket(0)) {
            port = s.getLocalPort();
        }
        endpoint = BenchServer.start(port, 4);
        url = "http://" + BenchServer.HOST + ":" + port + BenchServer.PATH;
    }

    @AfterAll
    static void stop() {
        endpoint.stop();
    }

    static HttpResponse<String> post(String body) throws Exception {
        return HTTP.send(HttpRequest.newBuilder(URI.create(url))
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
        HttpResponse<String> wsdl = HTTP.send(HttpRequest.newBuilder(URI.create(url + "?wsdl")).build(),
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
