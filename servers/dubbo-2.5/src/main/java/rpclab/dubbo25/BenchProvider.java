package rpclab.dubbo25;

import com.alibaba.dubbo.config.ProtocolConfig;
import java.util.LinkedHashMap;
import java.util.Map;
import rpclab.shared.Dubbo2Provider;

/**
 * rpclab Dubbo 2.5 provider (com.alibaba:dubbo 2.5.x): the Dubbo 2 provider
 * of contract/java-shared/dubbo2 ({@link Dubbo2Provider}, which says what it
 * does) with what is Dubbo 2.5's own: its port (RPCLAB_PORT default 20882),
 * its serializations (the old "dubbo" one among them) and its shutdown.
 */
public final class BenchProvider {
    static final int DEFAULT_PORT = 20882;

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

    public static void main(String[] args) {
        Dubbo2Provider.serve(new Dubbo2Provider.Line("2.5", DEFAULT_PORT, SERIALIZATIONS, "",
                ProtocolConfig::destroyAll));
    }
}
