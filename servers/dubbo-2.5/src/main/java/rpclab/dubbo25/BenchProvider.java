package rpclab.dubbo25;

import rpclab.contract.BenchServiceImpl;
import com.alibaba.dubbo.common.URL;
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
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import rpclab.contract.BenchService;
import sun.misc.Signal;

/**
 * rpclab Dubbo 2.5 provider (com.alibaba:dubbo 2.5.x): exports
 * rpclab.contract.BenchService over the dubbo protocol on
 * 127.0.0.1:RPCLAB_PORT (default 20882) and registers it under
 * /dubbo/rpclab.contract.BenchService/providers in the ZooKeeper at ZK_ADDRESS
 * (default zookeeper://127.0.0.1:2181).
 *
 * <p>Environment: DUBBO_SERIALIZATION (default hessian2; see SERIALIZATIONS),
 * DUBBO_THREADS (fixed business thread pool, default 200). Configured with the
 * ServiceConfig/ProtocolConfig/RegistryConfig API; the seed used the
 * equivalent Spring XML (dubbo:application, dubbo:registry,
 * dubbo:protocol threads="200", dubbo:service).
 *
 * <p>Prints "rpclab server ready on 127.0.0.1:PORT" once exported and
 * registered; SIGTERM/SIGINT unregister, stop and exit with status 0.
 */
public final class BenchProvider {
    public static final String HOST = "127.0.0.1";
    static final int DEFAULT_PORT = 20882;
    static final String DEFAULT_REGISTRY = "zookeeper://127.0.0.1:2181";
    static final String DEFAULT_SERIALIZATION = "hessian2";
    static final int DEFAULT_THREADS = 200;

    /** Serializations this provider serves (DUBBO_SERIALIZATION), each verified by BenchProviderTest. */
    static final Map<String, String> SERIALIZATIONS = new LinkedHashMap<>();

    static {
        SERIALIZATIONS.put("hessian2", "hessian-lite (bundled), the default");
        SERIALIZATIONS.put("dubbo", "Dubbo's own GenericObjectOutput/Builder format (2.5.x only)");
        SERIALIZATIONS.put("java", "java.io object streams with Dubbo's framing");
        SERIALIZATIONS.put("compactedjava", "java.io object streams, compacted class descriptors");
        SERIALIZATIONS.put("nativejava", "plain java.io object streams");
    }

    private BenchProvider() {}

    static String env(String name, String dflt) {
        String v = System.getenv(name);
        return v == null || v.trim().isEmpty() ? dflt : v.trim();
    }

    static int intEnv(String name, int dflt, int min, int max) {
        String v = env(name, null);
        if (v == null) {
            return dflt;
        }
        try {
            int n = Integer.parseInt(v);
            if (n < min || n > max) {
                throw new NumberFormatException("out of range");
            }
            return n;
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(name + " must be an integer in " + min + ".." + max + ", got: " + v, e);
        }
    }

    static String serializationFromEnv() {
        String s = env("DUBBO_SERIALIZATION", DEFAULT_SERIALIZATION);
        if (!SERIALIZATIONS.containsKey(s)) {
            throw new IllegalArgumentException("DUBBO_SERIALIZATION=" + s + " is not served by this Dubbo "
                    + Version.getVersion() + " provider; use one of " + SERIALIZATIONS.keySet()
                   );
        }
        if (!ExtensionLoader.getExtensionLoader(Serialization.class).hasExtension(s)) {
            throw new IllegalStateException("serialization extension '" + s + "' is not on the classpath");
        }
        return s;
    }

    /**
     * Makes Dubbo's idea of "the local host" 127.0.0.1, so that the URL it
     * registers says 127.0.0.1, never a container/LAN/bridge address.
     *
     * <p>Dubbo 2.5 refuses 127.x wherever a provider address can be configured
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
     * while the socket is bound to 127.0.0.1 only (LoopbackNettyTransporter).
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

    /** Sets the address NetUtils caches (and returns from getLocalHost()) to 127.0.0.1. */
    public static void pinNetUtils() {
        try {
            Field address = NetUtils.class.getDeclaredField("LOCAL_ADDRESS");
            address.setAccessible(true);
            address.set(null, InetAddress.getByName(HOST));
        } catch (ReflectiveOperationException | UnknownHostException e) {
            throw new IllegalStateException("cannot pin Dubbo's local host to " + HOST, e);
        }
        if (!HOST.equals(NetUtils.getLocalHost())) {
            throw new IllegalStateException("Dubbo's local host is " + NetUtils.getLocalHost() + ", not " + HOST);
        }
    }

    /** Exports the service; returns it (exported and registered). */
    static ServiceConfig<BenchService> start(int port, String registryAddress, String serialization, int threads) {
        ApplicationConfig application = new ApplicationConfig("rpclab-dubbo-2.5-provider");
        application.setQosEnable(false);

        RegistryConfig registry = new RegistryConfig(registryAddress);
        registry.setTimeout(30_000);

        ProtocolConfig protocol = new ProtocolConfig("dubbo", port);
        protocol.setHost(HOST);
        protocol.setSerialization(serialization);
        protocol.setThreadpool("fixed");
        protocol.setThreads(threads);
        protocol.setPayload(16 * 1024 * 1024);
        protocol.setServer(LoopbackNettyTransporter.NAME);
        Map<String, String> params = new HashMap<>();
        params.put("client", "netty");
        protocol.setParameters(params);

        ServiceConfig<BenchService> service = new ServiceConfig<>();
        service.setApplication(application);
        service.setRegistry(registry);
        service.setProtocol(protocol);
        service.setInterface(BenchService.class);
        service.setRef(new BenchServiceImpl());
        service.export();
        for (URL url : service.getExportedUrls()) {
            System.out.println("rpclab dubbo exported " + url.toFullString());
            if (!HOST.equals(url.getHost())) {
                throw new IllegalStateException("exported URL host is " + url.getHost() + ", not " + HOST + ": " + url);
            }
        }
        return service;
    }

    public static void main(String[] args) {
        // Before any Dubbo or InetAddress class initialises.
        System.setProperty("dubbo.application.logger", "slf4j");
        pinLocalHost();

        int port = intEnv("RPCLAB_PORT", DEFAULT_PORT, 1, 65535);
        String registry = env("ZK_ADDRESS", DEFAULT_REGISTRY);
        int threads = intEnv("DUBBO_THREADS", DEFAULT_THREADS, 1, 100_000);
        String serialization;
        try {
            serialization = serializationFromEnv();
        } catch (RuntimeException e) {
            System.err.println("rpclab: " + e.getMessage());
            System.exit(2);
            return;
        }

        ServiceConfig<BenchService> service = start(port, registry, serialization, threads);

        CountDownLatch stopped = new CountDownLatch(1);
        Runnable stop = () -> {
            try {
                service.unexport();
                // registries (unregister) and protocols (close the server)
                com.alibaba.dubbo.config.ProtocolConfig.destroyAll();
            } catch (RuntimeException e) {
                System.err.println("rpclab: stop failed: " + e);
            } finally {
                stopped.countDown();
            }
        };
        for (String name : new String[] {"TERM", "INT"}) {
            Signal.handle(new Signal(name), s -> new Thread(stop, "rpclab-stop").start());
        }
        System.out.println("rpclab server ready on " + HOST + ":" + port
                + " (dubbo " + Version.getVersion() + ", serialization " + serialization
                + ", threads " + threads + ", registry " + registry + ")");
        System.out.flush();
        try {
            stopped.await();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        System.out.println("rpclab server stopped");
        System.out.flush();
        System.exit(0);
    }
}
