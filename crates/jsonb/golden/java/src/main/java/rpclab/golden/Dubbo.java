package rpclab.golden;

import java.io.InputStream;
import java.io.OutputStream;

import org.apache.dubbo.common.URL;
import org.apache.dubbo.common.serialize.ObjectInput;
import org.apache.dubbo.common.serialize.ObjectOutput;
import org.apache.dubbo.common.serialize.Serialization;
import org.apache.dubbo.config.ApplicationConfig;
import org.apache.dubbo.rpc.model.ApplicationModel;
import org.apache.dubbo.rpc.model.FrameworkModel;

/**
 * Dubbo's own fastjson2 Serialization extension, configured like the
 * dubbo-3.3 provider (STRICT serialization check, no auto-trust, the contract
 * allowed by security/serialize.allowlist, check.serializable on).
 */
final class Dubbo {
    private Dubbo() {}

    private static Serialization serialization;

    static synchronized Serialization fastjson2() {
        if (serialization == null) {
            FrameworkModel fm = FrameworkModel.defaultModel();
            ApplicationModel am = fm.newApplication();
            ApplicationConfig app = new ApplicationConfig("rpclab-jsonb-golden");
            app.setSerializeCheckStatus("STRICT");
            app.setAutoTrustSerializeClass(false);
            app.setCheckSerializable(true);
            am.getApplicationConfigManager().setApplication(app);
            serialization = fm.getExtensionLoader(Serialization.class).getExtension("fastjson2");
            if (serialization.getContentTypeId() != 23) {
                throw new IllegalStateException("fastjson2 serialization id " + serialization.getContentTypeId());
            }
        }
        return serialization;
    }

    static final URL URL_ = URL.valueOf("dubbo://127.0.0.1:20880/rpclab.contract.BenchService?serialization=fastjson2");

    static ObjectOutput output(OutputStream os) throws Exception {
        return fastjson2().serialize(URL_, os);
    }

    static ObjectInput input(InputStream is) throws Exception {
        return fastjson2().deserialize(URL_, is);
    }
}
