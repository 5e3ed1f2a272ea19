package rpclab.dubbo26;

import java.util.List;
import rpclab.shared.Dubbo2ProviderCases;

/** The Dubbo 2 provider cases with Dubbo 2.6's serializations. */
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
        return List.of("dubbo", "fastjson2");
    }

    @Override
    protected String protocolVersion() {
        return "2.0.2";
    }
}
