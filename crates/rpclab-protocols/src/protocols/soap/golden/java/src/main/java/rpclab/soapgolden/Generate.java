package rpclab.soapgolden;

import rpclab.shared.BenchWs;
import com.sun.net.httpserver.HttpServer;
import java.io.ByteArrayOutputStream;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.HttpURLConnection;
import java.net.InetSocketAddress;
import java.net.URL;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.xml.namespace.QName;
import javax.xml.ws.BindingProvider;
import javax.xml.ws.Service;
import rpclab.contract.Order;
import rpclab.shared.ContractPayloads;

import static rpclab.shared.ContractPayloads.asciiText;

/**
 * Publishes {@link BenchWs} on 127.0.0.1:{@value #PORT}/bench with the profile's
 * stack ({@code Publisher}), calls every operation with that
 * implementation's client through a recording relay, and writes into OUT_DIR:
 * {@code <case>.request.xml} and {@code <case>.response.xml} per operation,
 * {@code fault.response.xml} (an operation the service does not have),
 * {@code service.wsdl} and, when the WSDL imports one, {@code service.xsd}.
 * Fixed ports keep the WSDL's addresses stable. Usage: Generate OUT_DIR.
 */
public final class Generate {
    static final int PORT = 18391;
    static final int RELAY = 18392;
    static final String NS = BenchWs.NAMESPACE;

    private Generate() {}

    /** rpclab_model::contract::Order::sample(i). */
    static Order order(int i) {
        return ContractPayloads.sample(i, Order::new);
    }

    /** Each case: a call on the client port, checked. */
    static Map<String, Consumer<BenchPort>> cases() {
        Map<String, Consumer<BenchPort>> cases = new LinkedHashMap<>();
        List<Order> orders = ContractPayloads.samples(100, Order::new);
        cases.put("order-echo", p -> check(p.echoOrder(order(1)), order(1)));
        cases.put("orders-echo", p -> check(p.echoOrders(orders), orders));
        cases.put("string-1k", p -> check(p.echoString(asciiText(1024)), asciiText(1024)));
        cases.put("string-100k", p -> check(p.echoString(asciiText(100 * 1024)), asciiText(100 * 1024)));
        cases.put("hello", p -> check(p.hello("aa"), "hello aa"));
        cases.put("empty", BenchPort::empty);
        return cases;
    }

    static void check(Object got, Object expected) {
        if (!expected.equals(got)) {
            throw new IllegalStateException("wrong reply: " + got);
        }
    }

    static byte[] readAll(InputStream in) throws Exception {
        if (in == null) {
            return new byte[0];
        }
        try (InputStream i = in) {
            return i.readAllBytes();
        }
    }

    /** One HTTP exchange with the endpoint: status and body. */
    record Reply(int status, byte[] body) {}

    static Reply http(String method, String url, byte[] body, String soapAction) throws Exception {
        HttpURLConnection c = (HttpURLConnection) new URL(url).openConnection();
        c.setRequestMethod(method);
        if (body != null) {
            c.setDoOutput(true);
            c.setRequestProperty("Content-Type", "text/xml; charset=utf-8");
            c.setRequestProperty("SOAPAction", soapAction == null ? "\"\"" : soapAction);
            try (OutputStream o = c.getOutputStream()) {
                o.write(body);
            }
        }
        int status = c.getResponseCode();
        byte[] reply = readAll(status >= 400 ? c.getErrorStream() : c.getInputStream());
        return new Reply(status, reply);
    }

    static AutoCloseable publish() throws Exception {
        return Publisher.publish(PORT);
    }

    public static void main(String[] args) throws Exception {
        Path out = Path.of(args[0]);
        Files.createDirectories(out);
        AutoCloseable endpoint = publish();
        String[] current = new String[1];
        HttpServer relay = HttpServer.create(new InetSocketAddress("127.0.0.1", RELAY), 0);
        relay.createContext("/bench", exchange -> {
            try {
                byte[] request = readAll(exchange.getRequestBody());
                String query = exchange.getRequestURI().getRawQuery();
                String url = "http://127.0.0.1:" + PORT + "/bench" + (query == null ? "" : "?" + query);
                Reply reply = http(exchange.getRequestMethod(), url,
                        "POST".equals(exchange.getRequestMethod()) ? request : null,
                        exchange.getRequestHeaders().getFirst("SOAPAction"));
                if (current[0] != null && "POST".equals(exchange.getRequestMethod())) {
                    Files.write(out.resolve(current[0] + ".request.xml"), request);
                    Files.write(out.resolve(current[0] + ".response.xml"), reply.body());
                }
                exchange.getResponseHeaders().add("Content-Type", "text/xml; charset=utf-8");
                exchange.sendResponseHeaders(reply.status(), reply.body().length == 0 ? -1 : reply.body().length);
                try (OutputStream o = exchange.getResponseBody()) {
                    o.write(reply.body());
                }
            } catch (Exception e) {
                e.printStackTrace();
                exchange.sendResponseHeaders(502, -1);
                exchange.close();
            }
        });
        relay.start();
        try {
            Service service = Service.create(new URL("http://127.0.0.1:" + PORT + "/bench?wsdl"),
                    new QName(NS, "BenchService"));
            BenchPort port = service.getPort(new QName(NS, "BenchPort"), BenchPort.class);
            ((BindingProvider) port).getRequestContext()
                    .put(BindingProvider.ENDPOINT_ADDRESS_PROPERTY, "http://127.0.0.1:" + RELAY + "/bench");
            for (Map.Entry<String, Consumer<BenchPort>> c : cases().entrySet()) {
                current[0] = c.getKey();
                c.getValue().accept(port);
                System.out.println("wrote " + c.getKey());
            }
            current[0] = null;
            String nope = "<soap:Envelope xmlns:soap=\"http://schemas.xmlsoap.org/soap/envelope/\"><soap:Body>"
                    + "<ns:nope xmlns:ns=\"" + NS + "\"/></soap:Body></soap:Envelope>";
            Reply fault = http("POST", "http://127.0.0.1:" + PORT + "/bench",
                    nope.getBytes(StandardCharsets.UTF_8), "\"\"");
            if (fault.status() != 500) {
                throw new IllegalStateException("the fault came with HTTP " + fault.status());
            }
            Files.write(out.resolve("fault.response.xml"), fault.body());
            byte[] wsdl = http("GET", "http://127.0.0.1:" + PORT + "/bench?wsdl", null, null).body();
            Files.write(out.resolve("service.wsdl"), wsdl);
            Matcher m = Pattern.compile("schemaLocation=\"([^\"]+)\"").matcher(new String(wsdl, StandardCharsets.UTF_8));
            if (m.find()) {
                Files.write(out.resolve("service.xsd"), http("GET", m.group(1), null, null).body());
            }
            System.out.println("wrote fault and WSDL");
        } finally {
            relay.stop(0);
            endpoint.close();
        }
        System.exit(0);
    }
}
