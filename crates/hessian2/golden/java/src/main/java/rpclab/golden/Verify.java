package rpclab.golden;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

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
        if (args.length != 2) {
            System.err.println("usage: Verify caucho|lite <dir>");
            System.exit(2);
        }
        Impl impl = Impl.named(args[0]);
        Path dir = Paths.get(args[1]);
        List<Path> files = new ArrayList<>();
        try (Stream<Path> s = Files.list(dir)) {
            s.filter(p -> p.getFileName().toString().endsWith(".bin")).sorted().forEach(files::add);
        }
        int passed = 0;
        int failed = 0;
        for (Path p : files) {
            String name = p.getFileName().toString();
            name = name.substring(0, name.length() - ".bin".length());
            Cases.Case c = Cases.named(name);
            String problem;
            if (c == null) {
                problem = "no such case in rpclab.golden.Cases";
            } else {
                try {
                    Object[] got = impl.decode(Files.readAllBytes(p), c.written.length);
                    problem = DeepEquals.diff(Cases.decoded(c, impl), got);
                } catch (Exception e) {
                    problem = e.toString();
                }
            }
            if (problem == null) {
                passed++;
            } else {
                failed++;
                System.out.println("FAIL " + impl.artifact() + " " + name + ": " + problem);
            }
        }
        System.out.println("hessian2 golden verify with " + impl.artifact() + ": " + passed + " passed, "
                + failed + " failed");
        System.exit(failed > 0 || passed == 0 ? 1 : 0);
    }
}
