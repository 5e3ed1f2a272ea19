package rpclab.dubbo26;

import com.alibaba.dubbo.config.DubboShutdownHook;
import java.util.LinkedHashMap;
import java.util.Map;
import rpclab.shared.Dubbo2Provider;

/**
 * rpclab Dubbo 2.6 provider (com.alibaba:dubbo): the Dubbo 2 provider of
 * contract/java-shared/dubbo2 ({@link Dubbo2Provider}, which says what it
 * does) with what is Dubbo 2.6's own: its port (RPCLAB_PORT default 20881),
 * its serializations and its shutdown.
 */
public final class BenchProvider {
    static final int DEFAULT_PORT = 20881;

    /** Serializations this provider serves (DUBBO_SERIALIZATION), each verified by BenchProviderTest. */
    static final Map<String, String> SERIALIZATIONS = new LinkedHashMap<>();

    static {
        SERIALIZATIONS.put("hessian2", "hessian-lite (bundled), the default");
        SERIALIZATIONS.put("java", "java.io object streams with Dubbo's framing");
        SERIALIZATIONS.put("compactedjava", "java.io object streams, compacted class descriptors");
        SERIALIZATIONS.put("nativejava", "plain java.io object streams");
        SERIALIZATIONS.put("fastjson", "fastjson 1.2.70");
        SERIALIZATIONS.put("kryo", "Kryo 4.0.1 + kryo-serializers 0.42");
        SERIALIZATIONS.put("fst", "FST 2.48-jdk-6 (needs the --add-opens of server.toml on Java 17)");
    }

    private BenchProvider() {}

    public static void main(String[] args) {
        Dubbo2Provider.serve(new Dubbo2Provider.Line("2.6", DEFAULT_PORT, SERIALIZATIONS,
                " (the old \"dubbo\" serialization is not in Dubbo 2.6.x)",
                () -> DubboShutdownHook.getDubboShutdownHook().destroyAll()));
    }
}
