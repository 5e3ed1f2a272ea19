package rpclab.golden;

import com.alibaba.dubbo.common.serialize.support.dubbo.GenericObjectOutput;
import java.io.ByteArrayOutputStream;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import rpclab.shared.GoldenVectors;

/**
 * Writes every case with Dubbo 2.5's GenericObjectOutput to <dir>/<case>.bin.
 * response_exception.bin holds its exception's stack trace, and with it the
 * line of this file that calls Cases.all(): line 18, kept there.
 */
public final class Generate {
    public static void main(String[] args) throws Exception {
        Path dir = Path.of(args[0]);
        Map<String, List<Cases.Step>> cases = Cases.all();
        int n = GoldenVectors.writeAll(dir, cases, (name, steps) -> {
            ByteArrayOutputStream bytes = new ByteArrayOutputStream();
            // DubboSerialization.serialize: a GenericObjectOutput per body
            GenericObjectOutput out = new GenericObjectOutput(bytes);
            for (Cases.Step s : steps) {
                Cases.write(out, s);
            }
            out.flushBuffer();
            return bytes.toByteArray();
        });
        System.out.println("wrote " + n + " vectors to " + dir + " with dubbo "
                + com.alibaba.dubbo.common.Version.getVersion());
    }

    private Generate() {}
}
