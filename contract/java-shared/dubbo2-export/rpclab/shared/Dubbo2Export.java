package rpclab.shared;

import com.alibaba.dubbo.common.URL;
import com.alibaba.dubbo.config.ApplicationConfig;
import com.alibaba.dubbo.config.ProtocolConfig;
import com.alibaba.dubbo.config.RegistryConfig;
import com.alibaba.dubbo.config.ServiceConfig;
import java.util.function.Consumer;
import rpclab.contract.BenchService;
import rpclab.contract.BenchServiceImpl;

/**
 * The contract's one implementation exported through Dubbo 2 (com.alibaba)
 * on whatever protocol a provider configured: the dubbo protocol of
 * dubbo-2.5 and dubbo-2.6, hessian and http of dubbo-hessian, rmi of
 * dubbo-rmi. Their providers differ in the protocol and registry they set up;
 * the export itself and the "rpclab dubbo exported" line each URL gets (what
 * a test or a reader of the log looks for) are the same, so they are here.
 */
public final class Dubbo2Export {
    private Dubbo2Export() {}

    /**
     * Exports BenchServiceImpl as BenchService with these configurations,
     * prints each exported URL, and hands it to {@code check} right after
     * (a provider that must serve on loopback throws on one that does not).
     */
    public static ServiceConfig<BenchService> contract(ApplicationConfig application, RegistryConfig registry,
            ProtocolConfig protocol, Consumer<URL> check) {
        ServiceConfig<BenchService> service = new ServiceConfig<>();
        service.setApplication(application);
        service.setRegistry(registry);
        service.setProtocol(protocol);
        service.setInterface(BenchService.class);
        service.setRef(new BenchServiceImpl());
        service.export();
        for (URL url : service.getExportedUrls()) {
            System.out.println("rpclab dubbo exported " + url.toFullString());
            check.accept(url);
        }
        return service;
    }

    /** {@link #contract(ApplicationConfig, RegistryConfig, ProtocolConfig, Consumer)} with no check. */
    public static ServiceConfig<BenchService> contract(ApplicationConfig application, RegistryConfig registry,
            ProtocolConfig protocol) {
        return contract(application, registry, protocol, url -> {});
    }
}
