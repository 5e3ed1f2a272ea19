package rpclab.golden;

import java.io.ByteArrayInputStream;
import java.nio.file.Path;

import rpclab.shared.GoldenVectors;

/** Writes every case with Dubbo's FastJson2ObjectOutput to args[0]/<case>.bin. */
public final class Generate {
    private Generate() {}

    public static void main(String[] args) throws Exception {
        Path dir = Path.of(args[0]);
        int written = GoldenVectors.writeStreams(dir, Cases.all(), (bytes, name, steps) -> {
            Cases.write(Dubbo.output(bytes), steps);
            // self-check: Dubbo's own reader gets the case back
            String err = Cases.check(Dubbo.input(new ByteArrayInputStream(bytes.toByteArray())), steps);
            if (err != null) throw new IllegalStateException(name + ": Java does not read its own bytes: " + err);
        });
        System.out.println("wrote " + written + " cases to " + dir + " with fastjson2 "
            + com.alibaba.fastjson2.JSON.VERSION + ", Dubbo " + org.apache.dubbo.common.Version.getVersion()
            + ", Java " + System.getProperty("java.version"));
        System.exit(0);
    }
}
