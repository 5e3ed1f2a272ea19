package rpclab.golden;

import java.io.ByteArrayOutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

/** Writes every case with Dubbo's FastJson2ObjectOutput to args[0]/<case>.bin. */
public final class Generate {
    private Generate() {}

    public static void main(String[] args) throws Exception {
        Path dir = Path.of(args[0]);
        Files.createDirectories(dir);
        for (Map.Entry<String, List<Cases.Step>> e : Cases.all().entrySet()) {
            ByteArrayOutputStream bos = new ByteArrayOutputStream();
            Cases.write(Dubbo.output(bos), e.getValue());
            byte[] bytes = bos.toByteArray();
            // self-check: Dubbo's own reader gets the case back
            String err = Cases.check(Dubbo.input(new java.io.ByteArrayInputStream(bytes)), e.getValue());
            if (err != null) throw new IllegalStateException(e.getKey() + ": Java does not read its own bytes: " + err);
            Files.write(dir.resolve(e.getKey() + ".bin"), bytes);
        }
        System.out.println("wrote " + Cases.all().size() + " cases to " + dir + " with fastjson2 "
            + com.alibaba.fastjson2.JSON.VERSION + ", Dubbo " + org.apache.dubbo.common.Version.getVersion()
            + ", Java " + System.getProperty("java.version"));
        System.exit(0);
    }
}
