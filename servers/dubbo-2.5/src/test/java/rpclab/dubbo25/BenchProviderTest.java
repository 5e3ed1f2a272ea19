package rpclab.dubbo25;

import com.alibaba.dubbo.common.Version;
import java.util.List;
import rpclab.shared.Dubbo2ProviderCases;

/**
 * The Dubbo 2 provider cases with Dubbo 2.5's serializations; Dubbo 2.5
 * registers its own version as the protocol's.
 */
class BenchProviderTest extends Dubbo2ProviderCases {
    BenchProviderTest() {
        super(BenchProvider.class, BenchProvider.SERIALIZATIONS.keySet(), List.of("kryo", "fastjson2"),
                Version.getVersion());
    }
}
