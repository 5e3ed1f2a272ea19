package rpclab.dubbo25;

import com.alibaba.dubbo.common.Version;
import java.util.List;
import rpclab.shared.Dubbo2ProviderCases;

/** The Dubbo 2 provider cases with Dubbo 2.5's serializations. */
class BenchProviderTest extends Dubbo2ProviderCases {
    @Override
    protected Class<?> provider() {
        return BenchProvider.class;
    }

    @Override
    protected List<String> served() {
        return List.copyOf(BenchProvider.SERIALIZATIONS.keySet());
    }

    @Override
    protected List<String> refused() {
        return List.of("kryo", "fastjson2");
    }

    /** Dubbo 2.5 registers its own version as the protocol's. */
    @Override
    protected String protocolVersion() {
        return Version.getVersion();
    }
}
