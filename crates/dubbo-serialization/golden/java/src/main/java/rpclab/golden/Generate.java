package rpclab.golden;

import com.alibaba.dubbo.common.serialize.support.dubbo.GenericObjectOutput;
import java.io.ByteArrayOutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

/** Writes every case with Dubbo 2.5's GenericObjectOutput to <dir>/<case>.bin. */
public final class Generate {
    private Generate() {}

    public static void main(String[] args) throws Exception {
        Path dir = Path.of(args[0]);
        Files.createDirectories(dir);
        int n = 0;
        for (Map.Entry<String, List<Cases.Step>> c : Cases.all().entrySet()) {
            ByteArrayOutputStream bytes = new ByteArrayOutputStream();
            // DubboSerialization.serialize: a GenericObjectOutput per body
            GenericObjectOutput out = new GenericObjectOutput(bytes);
            for (Cases.Step s : c.getValue()) {
                Cases.write(out, s);
            }
            out.flushBuffer();
            Files.write(dir.resolve(c.getKey() + ".bin"), bytes.toByteArray());
            n++;
        }
        System.out.println("wrote " + n + " vectors to " + dir + " with dubbo "
                + com.alibaba.dubbo.common.Version.getVersion());
    }
}
