package rpclab.shared;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;

/**
 * Writes a codec's golden vectors: one {@code <dir>/<case>.bin} per case,
 * the bytes the real Java implementation makes of it. The generators differ
 * only in how a case becomes bytes ({@link Encoder}); the folder, the file
 * names and the order of the cases are the same for all.
 */
public final class GoldenVectors {
    private GoldenVectors() {}

    /** What a generator's Java implementation makes of one case. */
    @FunctionalInterface
    public interface Encoder<C> {
        byte[] encode(String name, C testCase) throws Exception;
    }

    /** What a generator's Java implementation writes of one case to a stream of its own. */
    @FunctionalInterface
    public interface StreamEncoder<C> {
        void encode(ByteArrayOutputStream out, String name, C testCase) throws Exception;
    }

    /**
     * {@link #writeAll} for a generator that writes each case to a stream:
     * the file holds what {@code encoder} wrote to a fresh one.
     */
    public static <C> int writeStreams(Path dir, Map<String, C> cases, StreamEncoder<C> encoder) throws Exception {
        return writeAll(dir, cases, (name, testCase) -> {
            ByteArrayOutputStream out = new ByteArrayOutputStream();
            encoder.encode(out, name, testCase);
            return out.toByteArray();
        });
    }

    /**
     * Encodes every case of {@code cases} (in their order) and writes it to
     * {@code <dir>/<name>.bin}, creating {@code dir}; returns how many it wrote.
     */
    public static <C> int writeAll(Path dir, Map<String, C> cases, Encoder<C> encoder) throws Exception {
        Files.createDirectories(dir);
        for (Map.Entry<String, C> c : cases.entrySet()) {
            write(dir, c.getKey(), encoder.encode(c.getKey(), c.getValue()));
        }
        return cases.size();
    }

    /** Writes {@code bytes} to {@code <dir>/<name>.bin}. */
    public static void write(Path dir, String name, byte[] bytes) throws IOException {
        Files.write(dir.resolve(name + ".bin"), bytes);
    }
}
