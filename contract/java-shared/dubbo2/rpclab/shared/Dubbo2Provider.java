package rpclab.shared;

import com.alibaba.dubbo.common.Version;
import com.alibaba.dubbo.common.extension.ExtensionLoader;
import com.alibaba.dubbo.common.serialize.Serialization;
import com.alibaba.dubbo.common.utils.NetUtils;
import com.alibaba.dubbo.config.ApplicationConfig;
import com.alibaba.dubbo.config.ProtocolConfig;
import com.alibaba.dubbo.config.RegistryConfig;
import com.alibaba.dubbo.config.ServiceConfig;
import java.io.IOException;
import java.lang.reflect.Field;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import rpclab.contract.BenchService;

/**
 * The Dubbo 2 (com.alibaba:dubbo 2.5 and 2.6) provider of
 * rpclab.contract.BenchService over the dubbo protocol, written once for both
 * lines: it exports the service on RPCLAB_BIND:RPCLAB_PORT (default
 * 127.0.0.1) and registers it, as RPCLAB_ADVERTISE:RPCLAB_PORT (default the
 * bind address, or 127.0.0.1 for 0.0.0.0), under
 * /dubbo/rpclab.contract.BenchService/providers in the ZooKeeper at
 * ZK_ADDRESS (default zookeeper://127.0.0.1:2181). Each line's
 * `BenchProvider` gives what differs ({@link Line}) and its transporter
 * bound to {@link #BIND} (registered as {@link #TRANSPORTER}).
 *
 * <p>Environment: DUBBO_SERIALIZATION (default hessian2; the line's
 * serializations), DUBBO_THREADS (fixed business thread pool, default 200).
 * Configured with the ServiceConfig/ProtocolConfig/RegistryConfig API; the
 * seed used the equivalent Spring XML (dubbo:application, dubbo:registry,
 * dubbo:protocol threads="200", dubbo:service).
 *
 * <p>Prints "rpclab server ready on BIND:PORT" once exported and
 * registered; SIGTERM/SIGINT unregister, stop and exit with status 0.
 */
public final class Dubbo2Provider {
    /** The interface the transporter listens on (RPCLAB_BIND). */
    public static final String BIND = Env.bind();
    /** The address registered and put in the provider URL (RPCLAB_ADVERTISE). */
    public static final String ADVERTISE = Env.advertise();
    /** The name of each line's loopback transporter (META-INF/dubbo/...Transporter). */
    public static final String TRANSPORTER = "rpclab-netty";
    static final String DEFAULT_REGISTRY = "zookeeper://127.0.0.1:2181";
    public static final String DEFAULT_SERIALIZATION = "hessian2";
    static final int DEFAULT_THREADS = 200;

    /** What differs between the Dubbo 2 lines. */
    public static final class Line {
        /** "2.5" or "2.6": in the application name. */
        final String name;
        final int defaultPort;
        /** Serializations served (DUBBO_SERIALIZATION), each with where it comes from. */
        final Map<String, String> serializations;
        /** Appended to the refusal of another serialization. */
        final String refusalNote;
        /** Unregisters from the registries and closes the protocols' servers. */
        final Runnable destroyAll;

        public Line(String name, int defaultPort, Map<String, String> serializations, String refusalNote,
                Runnable destroyAll) {
            this.name = name;
            this.defaultPort = defaultPort;
            this.serializations = serializations;
            this.refusalNote = refusalNote;
            this.destroyAll = destroyAll;
        }
    }

    private Dubbo2Provider() {}

    static String serializationFromEnv(Line line) {
        String s = Env.string("DUBBO_SERIALIZATION", DEFAULT_SERIALIZATION);
        if (!line.serializations.containsKey(s)) {
            throw new IllegalArgumentException("DUBBO_SERIALIZATION=" + s + " is not served by this Dubbo "
                    + Version.getVersion() + " provider; use one of " + line.serializations.keySet()
                    + line.refusalNote);
        }
        if (!ExtensionLoader.getExtensionLoader(Serialization.class).hasExtension(s)) {
            throw new IllegalStateException("serialization extension '" + s + "' is not on the classpath");
        }
        return s;
    }

    /**
     * Makes Dubbo's idea of "the local host" {@link #ADVERTISE} (127.0.0.1
     * by default), so that the URL it registers says that address, never a
     * container/LAN/bridge address Dubbo would pick itself.
     *
     * <p>Dubbo 2 refuses 127.x wherever a provider address can be configured
     * (DUBBO_IP_TO_REGISTRY/DUBBO_IP_TO_BIND=127.0.0.1: "Specified invalid ...
     * ip"; protocol host 127.0.0.1: replaced). For a 127.x protocol host,
     * ServiceConfig.findConfigedHosts tries, in order:
     * InetAddress.getLocalHost() (the machine's host name, resolved), the local
     * address of a socket connected to the registry (127.0.0.1 here, since
     * ZooKeeper is on loopback), then NetUtils.getLocalHost(). So: host-name
     * resolution goes through a hosts file that does not know the host name
     * (jdk.net.hosts.file, read when InetAddress initialises; this must run
     * before anything touches InetAddress), and NetUtils' cached address is
     * set to 127.0.0.1. Side effect: the provider URL says anyhost=true,
     * while the socket is bound to 127.0.0.1 only (the loopback transporter).
     */
    public static void pinLocalHost() {
        if (System.getProperty("jdk.net.hosts.file") == null) {
            try {
                Path hosts = Files.createTempFile("rpclab-hosts", ".txt");
                Files.write(hosts, "127.0.0.1 localhost\n".getBytes(StandardCharsets.US_ASCII));
                hosts.toFile().deleteOnExit();
                System.setProperty("jdk.net.hosts.file", hosts.toString());
            } catch (IOException e) {
                throw new IllegalStateException("cannot write a hosts file", e);
            }
        }
        try {
            InetAddress local = InetAddress.getLocalHost();
            if (!local.isLoopbackAddress()) {
                throw new IllegalStateException("InetAddress.getLocalHost() is " + local
                        + ", so Dubbo would register it; start the JVM with -Djdk.net.hosts.file=<file without the host name>");
            }
        } catch (UnknownHostException expected) {
            // what we want: Dubbo then falls back to the registry socket / NetUtils
        }
        pinNetUtils();
    }

    /** Sets the address NetUtils caches (and returns from getLocalHost()) to {@link #ADVERTISE}. */
    public static void pinNetUtils() {
        try {
            Field address = NetUtils.class.getDeclaredField("LOCAL_ADDRESS");
            address.setAccessible(true);
            address.set(null, InetAddress.getByName(ADVERTISE));
        } catch (ReflectiveOperationException | UnknownHostException e) {
            throw new IllegalStateException("cannot pin Dubbo's local host to " + ADVERTISE, e);
        }
        if (!ADVERTISE.equals(NetUtils.getLocalHost())) {
            throw new IllegalStateException("Dubbo's local host is " + NetUtils.getLocalHost() + ", not " + ADVERTISE);
        }
    }

    /** Exports the service; returns it (exported and registered). */
    static ServiceConfig<BenchService> start(Line line, int port, String registryAddress, String serialization,
            int threads) {
        ApplicationConfig application = new ApplicationConfig("rpclab-dubbo-" + line.name + "-provider");
        application.setQosEnable(false);

        RegistryConfig registry = new RegistryConfig(registryAddress);
        registry.setTimeout(30_000);

        ProtocolConfig protocol = new ProtocolConfig("dubbo", port);
        // A 127.x host Dubbo 2 replaces by its local host, pinned to the same.
        protocol.setHost(ADVERTISE);
        protocol.setSerialization(serialization);
        protocol.setThreadpool("fixed");
        protocol.setThreads(threads);
        protocol.setPayload(16 * 1024 * 1024);
        protocol.setServer(TRANSPORTER);
        Map<String, String> params = new HashMap<>();
        params.put("client", "netty");
        protocol.setParameters(params);

        return Dubbo2Export.contract(application, registry, protocol, url -> {
            if (!ADVERTISE.equals(url.getHost())) {
                throw new IllegalStateException("exported URL host is " + url.getHost() + ", not " + ADVERTISE + ": " + url);
            }
        });
    }

    /** The provider's main: serves until SIGTERM/SIGINT. */
    public static void serve(Line line) {
        // Before any Dubbo or InetAddress class initialises.
        System.setProperty("dubbo.application.logger", "slf4j");
        pinLocalHost();

        int port = Env.integer("RPCLAB_PORT", line.defaultPort, 1, 65535);
        String registry = Env.string("ZK_ADDRESS", DEFAULT_REGISTRY);
        int threads = Env.integer("DUBBO_THREADS", DEFAULT_THREADS, 1, 100_000);
        String serialization;
        try {
            serialization = serializationFromEnv(line);
        } catch (RuntimeException e) {
            Serving.refuse(e.getMessage());
            return;
        }

        ServiceConfig<BenchService> service = start(line, port, registry, serialization, threads);
        Serving.untilSignalled("rpclab server ready on " + Serving.where(port)
                + " (dubbo " + Version.getVersion() + ", serialization " + serialization
                + ", threads " + threads + ", registry " + registry + ")", () -> {
                    service.unexport();
                    // registries (unregister) and protocols (close the server)
                    line.destroyAll.run();
                });
    }
}
