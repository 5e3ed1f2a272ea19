package rpclab.golden;

import java.io.ByteArrayOutputStream;
import java.io.ObjectOutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

/** Writes every case with java.io.ObjectOutputStream to args[0]/<case>.bin. */
public final class Generate {
    private Generate() {}

    public static void main(String[] args) throws Exception {
        Path dir = Path.of(args[0]);
        Files.createDirectories(dir);
        for (Map.Entry<String, List<Cases.Step>> e : Cases.all().entrySet()) {
            ByteArrayOutputStream bos = new ByteArrayOutputStream();
            try (ObjectOutputStream out = new ObjectOutputStream(bos)) {
                Cases.write(out, e.getValue());
            }
            Files.write(dir.resolve(e.getKey() + ".bin"), bos.toByteArray());
        }
        System.out.println("wrote " + Cases.all().size() + " cases to " + dir + " with Java "
            + System.getProperty("java.version"));
    }
}
