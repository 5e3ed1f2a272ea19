package rpclab.dubbo33;

import java.util.List;
import org.apache.dubbo.config.ApplicationConfig;
import org.apache.dubbo.config.ReferenceConfig;
import org.apache.dubbo.config.RegistryConfig;
import org.apache.dubbo.config.bootstrap.DubboBootstrap;
import org.apache.dubbo.rpc.model.FrameworkModel;
import rpclab.contract.BenchService;
import rpclab.shared.ContractCalls;
import rpclab.shared.DubboProviderCases;

/** {@link DubboProviderCases} with Dubbo 3.3's serializations and a Dubbo 3.3 consumer of its own framework model. */
class BenchProviderTest extends DubboProviderCases {
    BenchProviderTest() {
        super(BenchProvider.class, BenchProvider.SERIALIZATIONS.keySet(), List.of("dubbo", "fst"));
    }

    @Override
    protected void prepareConsumer() {
        System.setProperty("dubbo.application.service-discovery.migration", "FORCE_INTERFACE");
        // A stock Dubbo consumer connects to NetUtils.filterLocalHost(host): a
        // 127.x provider address becomes the machine's LAN address, where the
        // loopback-only provider is not listening. Pin it as the provider does.
        BenchProvider.pinLocalHost();
    }

    @Override
    protected List<String> urlParameters(String serialization) {
        return List.of("prefer.serialization=" + serialization, "dubbo=2.0.2");
    }

    @Override
    protected void callEveryMethodThrough(String registryAddress) throws Exception {
        FrameworkModel framework = new FrameworkModel();
        try {
            ApplicationConfig app = new ApplicationConfig("rpclab-test-consumer");
            app.setQosEnable(false);
            app.setRegisterMode("interface");
            app.setEnableFileCache(false);
            RegistryConfig registry = new RegistryConfig(registryAddress);
            registry.setUseAsConfigCenter(false);
            registry.setUseAsMetadataCenter(false);
            ReferenceConfig<BenchService> reference = new ReferenceConfig<>();
            reference.setInterface(BenchService.class);
            reference.setTimeout(30_000);
            reference.setRetries(0);
            reference.setCheck(true);
            DubboBootstrap consumer = DubboBootstrap.newInstance(framework)
                    .application(app)
                    .registry(registry)
                    .reference(reference);
            consumer.start();
            ContractCalls.callEveryMethod(reference.get());
        } finally {
            framework.destroy();
        }
    }
}
