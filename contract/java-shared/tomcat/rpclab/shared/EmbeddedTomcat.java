package rpclab.shared;

import java.io.File;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.security.cert.Certificate;
import java.security.cert.CertificateFactory;
import java.util.function.Consumer;
import org.apache.catalina.Context;
import org.apache.catalina.LifecycleException;
import org.apache.catalina.connector.Connector;
import org.apache.catalina.startup.Tomcat;
import org.apache.tomcat.util.net.SSLHostConfig;
import org.apache.tomcat.util.net.SSLHostConfigCertificate;

/**
 * The embedded Apache Tomcat 9 the servlet servers run in, set up the same
 * way for each: one HTTP/1.1 NIO connector bound to RPCLAB_BIND (default
 * 127.0.0.1; the services it hosts name whatever host a request came to), a temporary
 * base directory, one root context the server adds its servlets to.
 *
 * <p>Environment ({@link #serve}): RPCLAB_PORT, TOMCAT_THREADS
 * (request worker pool, default 200 = Tomcat's own maxThreads default),
 * TOMCAT_MAX_KEEPALIVE_REQUESTS (requests per keep-alive connection before
 * Tomcat closes it; default -1 = unlimited, where Tomcat's own default is 100:
 * the lab measures RPC calls, not TCP set-up every 100 calls), and, for HTTPS
 * instead of HTTP, the {@link Tls} variables (unset: plain HTTP, exactly as
 * before they existed).
 */
public final class EmbeddedTomcat {
    /** The interface the connector listens on (RPCLAB_BIND, default 127.0.0.1). */
    public static final String HOST = Env.bind();

    private EmbeddedTomcat() {}

    /**
     * HTTPS on the connector, from the environment: RPCLAB_TLS_CERT (the
     * server's certificate chain, PEM) and RPCLAB_TLS_KEY (its private key,
     * PEM, unencrypted: PKCS#8, PKCS#1 or SEC1), both or neither; with
     * RPCLAB_TLS_CLIENT_CA (PEM CA certificates) too, a client must present a
     * certificate one of them signed (mutual TLS). Tomcat reads the PEM files
     * itself (its JSSE PEMFile), so no keystore needs to be made.
     */
    public record Tls(String certificate, String key, String clientCa) {
        /** The setting the environment asks for, or null (plain HTTP); a half-given or unreadable one is an IllegalArgumentException that names the variable. */
        public static Tls fromEnv() {
            String cert = Env.string("RPCLAB_TLS_CERT", null);
            String key = Env.string("RPCLAB_TLS_KEY", null);
            String clientCa = Env.string("RPCLAB_TLS_CLIENT_CA", null);
            if (cert == null && key == null) {
                if (clientCa != null) {
                    throw new IllegalArgumentException(
                            "RPCLAB_TLS_CLIENT_CA is for TLS: set RPCLAB_TLS_CERT and RPCLAB_TLS_KEY too");
                }
                return null;
            }
            if (cert == null || key == null) {
                throw new IllegalArgumentException(
                        "TLS needs both RPCLAB_TLS_CERT (the certificate, PEM) and RPCLAB_TLS_KEY (its private key, PEM)");
            }
            readable("RPCLAB_TLS_CERT", cert);
            readable("RPCLAB_TLS_KEY", key);
            if (clientCa != null) {
                readable("RPCLAB_TLS_CLIENT_CA", clientCa);
            }
            return new Tls(cert, key, clientCa);
        }

        private static void readable(String name, String path) {
            if (!Files.isReadable(Path.of(path))) {
                throw new IllegalArgumentException(name + ": cannot read " + path);
            }
        }

        /** How the ready line says it. */
        String describe() {
            return clientCa == null ? "TLS" : "TLS, client certificates required";
        }

        /** Turns `connector` into an HTTPS one with this certificate (JSSE, Tomcat's own TLS). */
        void configure(Connector connector) throws Exception {
            connector.setScheme("https");
            connector.setSecure(true);
            connector.setProperty("SSLEnabled", "true");
            connector.setProperty("sslImplementationName", "org.apache.tomcat.util.net.jsse.JSSEImplementation");
            SSLHostConfig host = new SSLHostConfig();
            SSLHostConfigCertificate cert = new SSLHostConfigCertificate(host, SSLHostConfigCertificate.Type.UNDEFINED);
            cert.setCertificateFile(certificate);
            cert.setCertificateKeyFile(key);
            host.addCertificate(cert);
            if (clientCa != null) {
                host.setTrustStore(trustStore(clientCa));
                host.setCertificateVerification("required");
            }
            connector.addSslHostConfig(host);
        }

        /** The CA certificates of the PEM file `path`, as an in-memory trust store. */
        private static KeyStore trustStore(String path) throws Exception {
            KeyStore store = KeyStore.getInstance(KeyStore.getDefaultType());
            store.load(null, null);
            int n = 0;
            try (InputStream in = Files.newInputStream(Path.of(path))) {
                for (Certificate c : CertificateFactory.getInstance("X.509").generateCertificates(in)) {
                    store.setCertificateEntry("client-ca-" + n++, c);
                }
            }
            if (n == 0) {
                throw new IllegalArgumentException("RPCLAB_TLS_CLIENT_CA: no PEM certificate in " + path);
            }
            return store;
        }
    }

    /**
     * A servlet server's main: reads the settings (a bad one is refused with
     * status 2), starts Tomcat with `servlets`, prints "rpclab server ready on
     * BIND:PORT" + `path` + " (" + `what` + ", tomcat VERSION, threads N,
     * maxKeepAliveRequests K)" (", TLS..." before the parenthesis closes when
     * serving HTTPS) and serves until SIGTERM/SIGINT ({@link Serving}).
     */
    public static void serve(int defaultPort, String path, String what, Consumer<Context> servlets) throws Exception {
        int port = Serving.port(defaultPort, 1);
        int threads;
        int keepAlive;
        Tls tls;
        try {
            threads = Env.integer("TOMCAT_THREADS", 200, 1, 100_000);
            keepAlive = Env.integer("TOMCAT_MAX_KEEPALIVE_REQUESTS", -1, -1, Integer.MAX_VALUE);
            tls = Tls.fromEnv();
        } catch (IllegalArgumentException e) {
            Serving.refuse(e.getMessage());
            return;
        }
        Tomcat tomcat = start(port, threads, keepAlive, tls, servlets);
        Serving.untilSignalled("rpclab server ready on " + Serving.where(port, path) + " (" + what
                + ", tomcat " + org.apache.catalina.util.ServerInfo.getServerNumber() + ", threads " + threads
                + ", maxKeepAliveRequests " + keepAlive + (tls == null ? "" : ", " + tls.describe()) + ")",
                () -> stop(tomcat));
    }

    /** Starts Tomcat on HOST:port after `servlets` has added the servlets to the root context; returns it started. */
    public static Tomcat start(int port, int threads, int maxKeepAliveRequests, Consumer<Context> servlets)
            throws Exception {
        return start(port, threads, maxKeepAliveRequests, null, servlets);
    }

    /**
     * {@link #start(int, int, int, Consumer)}, serving HTTPS when `tls` is not
     * null. A TLS connector that cannot start (a certificate or key Tomcat
     * cannot read) is an IllegalStateException, not a server that says it is
     * ready and does not listen.
     */
    public static Tomcat start(int port, int threads, int maxKeepAliveRequests, Tls tls, Consumer<Context> servlets)
            throws Exception {
        File base = Files.createTempDirectory("rpclab-tomcat").toFile();
        base.deleteOnExit();
        Tomcat tomcat = new Tomcat();
        tomcat.setBaseDir(base.getAbsolutePath());

        Connector connector = new Connector("org.apache.coyote.http11.Http11NioProtocol");
        connector.setPort(port);
        connector.setProperty("address", HOST);
        connector.setProperty("maxThreads", Integer.toString(threads));
        connector.setProperty("maxKeepAliveRequests", Integer.toString(maxKeepAliveRequests));
        if (tls != null) {
            tls.configure(connector);
        }
        tomcat.getService().addConnector(connector);
        tomcat.setConnector(connector);

        servlets.accept(tomcat.addContext("", base.getAbsolutePath()));
        tomcat.start();
        if (tls != null && !connector.getState().isAvailable()) {
            stop(tomcat);
            throw new IllegalStateException("the TLS connector on " + HOST + ":" + port
                    + " did not start (see Tomcat's log above): check RPCLAB_TLS_CERT and RPCLAB_TLS_KEY");
        }
        return tomcat;
    }

    /** Stops and destroys `tomcat`; a failure is an IllegalStateException (Serving prints it). */
    static void stop(Tomcat tomcat) {
        try {
            tomcat.stop();
            tomcat.destroy();
        } catch (LifecycleException e) {
            throw new IllegalStateException(e);
        }
    }
}
