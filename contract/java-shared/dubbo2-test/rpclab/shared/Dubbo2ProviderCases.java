package rpclab.shared;

import com.alibaba.dubbo.config.ApplicationConfig;
import com.alibaba.dubbo.config.ReferenceConfig;
import com.alibaba.dubbo.config.RegistryConfig;
import java.util.Arrays;
import java.util.Collection;
import java.util.List;
import rpclab.contract.BenchService;

/**
 * {@link DubboProviderCases} for the providers of {@link Dubbo2Provider}
 * (Dubbo 2.5 and 2.6), with a stock Dubbo 2 consumer; a line's test gives
 * its provider, its serializations and the protocol version it registers
 * (the URL's `dubbo=`).
 */
public abstract class Dubbo2ProviderCases extends DubboProviderCases {
    /** The `dubbo=` parameter of the registered URL. */
    private final String protocolVersion;

    protected Dubbo2ProviderCases(Class<?> provider, Collection<String> served, List<String> refused,
            String protocolVersion) {
        super(provider, served, refused);
        this.protocolVersion = protocolVersion;
    }

    @Override
    protected void prepareConsumer() {
        System.setProperty("dubbo.application.logger", "slf4j");
        // A stock Dubbo consumer connects to NetUtils.filterLocalHost(host): a
        // 127.x provider address becomes the machine's LAN address, where the
        // loopback-only provider is not listening. Pin it as the provider does.
        Dubbo2Provider.pinNetUtils();
    }

    @Override
    protected List<String> urlParameters(String serialization) {
        return Arrays.asList("server=" + Dubbo2Provider.TRANSPORTER, "client=netty", "dubbo=" + protocolVersion);
    }

    @Override
    protected void callEveryMethodThrough(String registry) throws Exception {
        ApplicationConfig app = new ApplicationConfig("rpclab-test-consumer");
        app.setQosEnable(false);
        ReferenceConfig<BenchService> reference = new ReferenceConfig<>();
        reference.setApplication(app);
        reference.setRegistry(new RegistryConfig(registry));
        reference.setInterface(BenchService.class);
        reference.setTimeout(30_000);
        reference.setRetries(0);
        reference.setCheck(true);
        try {
            ContractCalls.callEveryMethod(reference.get());
        } finally {
            reference.destroy();
        }
    }
}
