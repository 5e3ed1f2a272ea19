package rpclab.golden;

import java.io.ByteArrayInputStream;
import java.io.ObjectInputStream;
import java.nio.file.Path;

import rpclab.shared.GoldenVerify;

/**
 * Reads every args[0]/<case>.bin (written by Rust) with
 * java.io.ObjectInputStream and checks it against the case. Prints
 * "N passed, M failed" and exits non-zero on any failure.
 */
public final class Verify {
    private Verify() {}

    public static void main(String[] args) throws Exception {
        GoldenVerify.run("", Path.of(args[0]), Cases.all(), (name, steps, bytes) -> {
            try (ObjectInputStream in = new ObjectInputStream(new ByteArrayInputStream(bytes))) {
                return Cases.check(in, steps);
            }
        });
    }
}
