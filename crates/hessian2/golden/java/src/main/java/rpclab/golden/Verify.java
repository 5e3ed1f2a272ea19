package rpclab.golden;

import java.nio.file.Paths;

import rpclab.shared.GoldenVerify;

/**
 * Reads every {@code <case>.bin} of a directory written by the Rust encoder
 * with one real Java implementation and compares what it reads with the
 * case's expected Java values from {@link Cases}.
 *
 * <p>Usage: {@code Verify caucho|lite <dir>}. Prints one line per failure and
 * a closing "N passed, M failed" line; exits 1 when anything failed or no file
 * was found.
 */
public final class Verify {
    public static void main(String[] args) throws Exception {
        Impl impl = Impl.fromArgs("Verify", "<dir>", args);
        GoldenVerify.run("hessian2 golden verify with " + impl.artifact() + ": ", Paths.get(args[1]),
                Cases.byName(), (name, c, bytes) ->
                        DeepEquals.diff(Cases.decoded(c, impl), impl.decode(bytes, c.written.length)));
    }
}
