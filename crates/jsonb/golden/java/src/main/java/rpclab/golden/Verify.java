package rpclab.golden;

import java.io.ByteArrayInputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

/**
 * Reads every args[0]/<case>.bin (written by Rust) with Dubbo's
 * FastJson2ObjectInput and checks it against the case; also requires that
 * the whole file is consumed. Prints "N passed, M failed" and exits non-zero
 * on any failure.
 */
public final class Verify {
    private Verify() {}

    public static void main(String[] args) throws Exception {
        Path dir = Path.of(args[0]);
        Map<String, List<Cases.Step>> all = Cases.all();
        int passed = 0;
        int failed = 0;
        try (var files = Files.list(dir)) {
            for (Path p : files.sorted().toList()) {
                String name = p.getFileName().toString();
                if (!name.endsWith(".bin")) continue;
                String c = name.substring(0, name.length() - 4);
                List<Cases.Step> steps = all.get(c);
                String err;
                if (steps == null) {
                    err = "unknown case";
                } else {
                    try {
                        ByteArrayInputStream bis = new ByteArrayInputStream(Files.readAllBytes(p));
                        err = Cases.check(Dubbo.input(bis), steps);
                        if (err == null && bis.available() != 0) err = bis.available() + " bytes left over";
                    } catch (Exception ex) {
                        err = ex.toString();
                    }
                }
                if (err == null) {
                    passed++;
                } else {
                    failed++;
                    System.out.println("FAIL " + c + ": " + err);
                }
            }
        }
        System.out.println(passed + " passed, " + failed + " failed");
        System.exit(failed > 0 ? 1 : 0);
    }
}
