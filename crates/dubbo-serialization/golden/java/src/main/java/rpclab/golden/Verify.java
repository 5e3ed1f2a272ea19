package rpclab.golden;

import com.alibaba.dubbo.common.serialize.support.dubbo.GenericObjectInput;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import rpclab.shared.GoldenVerify;

/**
 * Reads every Rust-written <dir>/<case>.bin with Dubbo 2.5's
 * GenericObjectInput, compares each value with the case, and requires every
 * byte to be consumed. Prints "N passed, M failed"; exits 1 on any failure.
 */
public final class Verify {
    private Verify() {}

    public static void main(String[] args) throws Exception {
        GoldenVerify.run("", Path.of(args[0]), Cases.all(), (name, steps, bytes) -> verify(steps, bytes));
    }

    static String verify(List<Cases.Step> steps, byte[] bytes) {
        ByteArrayInputStream stream = new ByteArrayInputStream(bytes);
        GenericObjectInput in = new GenericObjectInput(stream);
        try {
            for (int k = 0; k < steps.size(); k++) {
                String why = Cases.readAndCompare(in, steps.get(k));
                if (why != null) {
                    return "step " + k + ": " + why;
                }
            }
        } catch (IOException | RuntimeException e) {
            return "read failed: " + e;
        }
        try {
            byte extra = in.readByte();
            return "bytes left over after the last step (next reads as " + extra + ")";
        } catch (IOException expected) {
            return null;
        }
    }
}
