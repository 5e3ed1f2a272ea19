package rpclab.golden;

import java.io.ObjectOutputStream;
import java.nio.file.Path;

import rpclab.shared.GoldenVectors;

/** Writes every case with java.io.ObjectOutputStream to args[0]/<case>.bin. */
public final class Generate {
    private Generate() {}

    public static void main(String[] args) throws Exception {
        Path dir = Path.of(args[0]);
        int written = GoldenVectors.writeStreams(dir, Cases.all(), (bytes, name, steps) -> {
            try (ObjectOutputStream out = new ObjectOutputStream(bytes)) {
                Cases.write(out, steps);
            }
        });
        System.out.println("wrote " + written + " cases to " + dir + " with Java "
            + System.getProperty("java.version"));
    }
}
