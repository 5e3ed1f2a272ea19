package rpclab.golden;

import java.io.ByteArrayInputStream;
import java.nio.file.Path;

import rpclab.shared.GoldenVerify;

/**
 * Reads every args[0]/<case>.bin (written by Rust) with Dubbo's
 * FastJson2ObjectInput and checks it against the case; also requires that
 * the whole file is consumed. Prints "N passed, M failed" and exits non-zero
 * on any failure.
 */
public final class Verify {
    private Verify() {}

    public static void main(String[] args) throws Exception {
        GoldenVerify.run("", Path.of(args[0]), Cases.all(), (name, steps, bytes) -> {
            ByteArrayInputStream bis = new ByteArrayInputStream(bytes);
            String err = Cases.check(Dubbo.input(bis), steps);
            return err == null && bis.available() != 0 ? bis.available() + " bytes left over" : err;
        });
    }
}
