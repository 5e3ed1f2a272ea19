package rpclab.hessiangolden;

import com.caucho.hessian.io.Hessian2Input;
import java.io.ByteArrayInputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Objects;

/**
 * Reads every {@code <case>.call.bin} in a directory (written by the Rust
 * client) as HessianSkeleton reads a call (version header, readCall,
 * readMethod, readMethodArgLength, readObject per argument, completeCall)
 * and compares method and arguments with the case; then runs the real
 * skeleton on it and requires the reply Java gives to its own call.
 * Usage: Verify DIR. Exit status 1 on any difference.
 */
public final class Verify {
    private Verify() {}

    public static void main(String[] args) throws Exception {
        Path dir = Path.of(args[0]);
        int checked = 0;
        int failed = 0;
        for (Cases.Case c : Cases.all().values()) {
            Path file = dir.resolve(c.name() + ".call.bin");
            if (!Files.exists(file)) {
                continue;
            }
            byte[] call = Files.readAllBytes(file);
            String problem = check(c, call);
            if (problem == null && !Arrays.equals(Generate.reply(call), Generate.reply(Generate.call(c)))) {
                problem = "the skeleton's reply differs from its reply to Java's own call";
            }
            checked++;
            if (problem != null) {
                failed++;
                System.out.println("FAIL " + c.name() + ": " + problem);
            }
        }
        System.out.println("checked " + checked + " calls, " + failed + " failed");
        System.exit(failed == 0 && checked > 0 ? 0 : 1);
    }

    static String check(Cases.Case c, byte[] call) throws Exception {
        ByteArrayInputStream is = new ByteArrayInputStream(call);
        if (is.read() != 'H' || is.read() != 2 || is.read() != 0) {
            return "no Hessian 2 version header";
        }
        Hessian2Input in = new Hessian2Input(is);
        in.readCall();
        String method = in.readMethod();
        if (!c.method().equals(method)) {
            return "method " + method + ", expected " + c.method();
        }
        int argc = in.readMethodArgLength();
        Object[] expected = c.args() == null ? new Object[0] : c.args();
        if (argc != expected.length) {
            return argc + " arguments, expected " + expected.length;
        }
        for (int i = 0; i < argc; i++) {
            Object arg = in.readObject(expected[i].getClass() == String.class ? String.class : null);
            if (!Objects.equals(arg, expected[i])) {
                return "argument " + i + " is " + arg + ", expected " + expected[i];
            }
        }
        in.completeCall();
        if (is.available() != 0) {
            return is.available() + " bytes after the call";
        }
        return null;
    }
}
