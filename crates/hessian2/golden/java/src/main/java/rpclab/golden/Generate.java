package rpclab.golden;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.stream.Stream;

/**
 * Writes every case of {@link Cases} with one real Java implementation:
 * {@code <out>/<impl>/<case>.bin} and {@code <out>/<impl>/manifest.json}.
 *
 * <p>Usage: {@code Generate caucho|lite <out-dir>}. Cases marked caucho-only
 * (the 1 MiB string) are written by the Caucho run alone, to keep the
 * checked-in vectors small. Each case is also read back with the same
 * implementation and compared with its expected Java value; a mismatch is
 * recorded in the manifest ("java_roundtrip": false) rather than hidden.
 */
public final class Generate {
    public static void main(String[] args) throws Exception {
        Impl impl = Impl.fromArgs("Generate", "<out-dir>", args);
        Path dir = Paths.get(args[1]).resolve(impl.name());
        Files.createDirectories(dir);
        try (Stream<Path> old = Files.list(dir)) {
            for (Path p : (Iterable<Path>) old::iterator) {
                if (p.getFileName().toString().endsWith(".bin")) {
                    Files.delete(p);
                }
            }
        }

        StringBuilder m = new StringBuilder();
        m.append("{\n");
        m.append("  \"impl\": ").append(Describe.quote(impl.name())).append(",\n");
        m.append("  \"artifact\": ").append(Describe.quote(impl.artifact())).append(",\n");
        m.append("  \"generator\": \"crates/hessian2/golden/java rpclab.golden.Generate\",\n");
        m.append("  \"cases\": [\n");
        int count = 0;
        int roundtripFailures = 0;
        boolean first = true;
        for (Cases.Case c : Cases.all()) {
            if (c.cauchoOnly && !impl.name().equals("caucho")) {
                continue;
            }
            byte[] bytes = impl.encode(c.written);
            String file = c.name + ".bin";
            Files.write(dir.resolve(file), bytes);

            String roundtrip = null;
            try {
                Object[] back = impl.decode(bytes, c.written.length);
                roundtrip = DeepEquals.diff(Cases.decoded(c, impl), back);
            } catch (IOException | RuntimeException e) {
                roundtrip = e.toString();
            }
            if (roundtrip != null) {
                roundtripFailures++;
                System.err.println(impl.name() + ": " + c.name + " does not read back: " + roundtrip);
            }

            String values = c.rustValueJson != null ? "[" + c.rustValueJson + "]" : Describe.values(impl, Cases.decoded(c, impl));
            if (!first) {
                m.append(",\n");
            }
            first = false;
            m.append("    {\"name\": ").append(Describe.quote(c.name))
                    .append(", \"file\": ").append(Describe.quote(file))
                    .append(", \"size\": ").append(bytes.length)
                    .append(", \"sha256\": \"").append(sha256(bytes)).append('"')
                    .append(", \"rust_writes\": ").append(c.rustWrites)
                    .append(", \"java_roundtrip\": ").append(roundtrip == null);
            if (!c.note.isEmpty()) {
                m.append(", \"note\": ").append(Describe.quote(c.note));
            }
            m.append(",\n     \"values\": ").append(values).append('}');
            count++;
        }
        m.append("\n  ]\n}\n");
        Files.write(dir.resolve("manifest.json"), m.toString().getBytes(StandardCharsets.UTF_8));
        System.out.println(impl.artifact() + ": wrote " + count + " cases to " + dir
                + (roundtripFailures > 0 ? " (" + roundtripFailures + " do not read back in Java)" : ""));
    }

    static String sha256(byte[] b) throws NoSuchAlgorithmException {
        StringBuilder sb = new StringBuilder();
        for (byte x : MessageDigest.getInstance("SHA-256").digest(b)) {
            sb.append(String.format("%02x", x & 0xff));
        }
        return sb.toString();
    }
}
