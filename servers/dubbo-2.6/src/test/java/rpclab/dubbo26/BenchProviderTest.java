package rpclab.dubbo26;

import java.util.List;
import rpclab.shared.Dubbo2ProviderCases;

/** The Dubbo 2 provider cases with Dubbo 2.6's serializations. */
class BenchProviderTest extends Dubbo2ProviderCases {
    BenchProviderTest() {
        super(BenchProvider.class, BenchProvider.SERIALIZATIONS.keySet(), List.of("dubbo", "fastjson2"), "2.0.2");
    }
}
