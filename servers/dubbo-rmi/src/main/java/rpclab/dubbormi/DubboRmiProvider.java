package rpclab.dubbormi;

import com.alibaba.dubbo.common.Version;
import com.alibaba.dubbo.config.ApplicationConfig;
import com.alibaba.dubbo.config.ProtocolConfig;
import com.alibaba.dubbo.config.RegistryConfig;
import com.alibaba.dubbo.config.ServiceConfig;
import org.springframework.core.SpringVersion;
import rpclab.contract.BenchService;
import rpclab.shared.Dubbo2Export;
import rpclab.shared.Env;
import rpclab.shared.LoopbackSocketFactory;
import rpclab.shared.Serving;

/**
 * rpclab's Dubbo 2.6 provider on Dubbo's "rmi" protocol (seed 000 D/E):
 * com.alibaba.dubbo.rpc.protocol.rmi.RmiProtocol exports the service through
 * Spring's RmiServiceExporter, with an RMI registry on
 * RPCLAB_BIND:RPCLAB_PORT (default 127.0.0.1:1101; its stubs name
 * RPCLAB_ADVERTISE, see LoopbackSocketFactory) and the name rpclab.contract.BenchService (the service
 * path). Dubbo's RmiProtocol does not set a service port, so Spring exports
 * the object on an anonymous port; clients find it in the registry's stub.
 * No Dubbo registry ("N/A"): consumers address the RMI registry directly.
 *
 * <p>DUBBO_SERIALIZATION (default java) is set on the protocol as the seed
 * set it, and printed in the exported URL; RmiProtocol ignores it (RMI
 * always uses Java serialization). See NOTES.md.
 *
 * <p>Prints "rpclab server ready on BIND:PORT"; SIGTERM/SIGINT
 * unexport and exit with status 0.
 */
public final class DubboRmiProvider {
    static final int DEFAULT_PORT = 1101;

    private DubboRmiProvider() {}

    public static void main(String[] args) throws Exception {
        System.setProperty("dubbo.application.logger", "slf4j");
        LoopbackSocketFactory.install();
        int port = Serving.port(DEFAULT_PORT, 1);
        String serialization = Env.string("DUBBO_SERIALIZATION", "java");

        ApplicationConfig application = new ApplicationConfig("rpclab-dubbo-rmi-provider");
        application.setQosEnable(false);
        ProtocolConfig protocol = new ProtocolConfig("rmi", port);
        protocol.setSerialization(serialization);
        ServiceConfig<BenchService> service =
                Dubbo2Export.contract(application, new RegistryConfig(RegistryConfig.NO_AVAILABLE), protocol);

        Serving.untilSignalled("rpclab server ready on " + Serving.where(port)
                + " (dubbo " + Version.getVersion() + " rmi protocol, Spring " + SpringVersion.getVersion()
                + " RmiServiceExporter, serialization setting " + serialization + ")", () -> {
                    service.unexport();
                    com.alibaba.dubbo.config.DubboShutdownHook.getDubboShutdownHook().destroyAll();
                });
    }
}
