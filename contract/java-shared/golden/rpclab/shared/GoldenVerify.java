package rpclab.shared;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

/**
 * The "Rust writes, Java reads" run of a codec's golden project: every
 * {@code <dir>/<case>.bin} (written by the Rust crate's test) is read with
 * the real Java implementation and compared with its case ({@link Check}).
 * Prints {@code FAIL <case>: <why>} per failure and a closing line
 * {@code <label><n> passed, <m> failed} (what the Rust test looks for, see
 * crates/java-interop), then exits: 1 when anything failed or no file was
 * found, else 0 (an explicit exit, as some libraries leave threads behind).
 */
public final class GoldenVerify {
    private GoldenVerify() {}

    /** Reads one file's bytes as its case; returns why they differ, or null. */
    @FunctionalInterface
    public interface Check<C> {
        String problem(String name, C testCase, byte[] bytes) throws Exception;
    }

    /** Checks every {@code .bin} file of {@code dir}, in name order, against {@code cases}. */
    public static <C> void run(String label, Path dir, Map<String, C> cases, Check<C> check) throws Exception {
        List<Path> files;
        try (Stream<Path> listing = Files.list(dir)) {
            files = listing.filter(p -> p.getFileName().toString().endsWith(".bin")).sorted().toList();
        }
        int passed = 0;
        int failed = 0;
        for (Path file : files) {
            String name = file.getFileName().toString();
            name = name.substring(0, name.length() - ".bin".length());
            String problem = problem(name, cases.get(name), Files.readAllBytes(file), check);
            if (problem == null) {
                passed++;
            } else {
                failed++;
                System.out.println("FAIL " + name + ": " + problem);
            }
        }
        System.out.println(label + passed + " passed, " + failed + " failed");
        System.exit(failed > 0 || passed == 0 ? 1 : 0);
    }

    private static <C> String problem(String name, C testCase, byte[] bytes, Check<C> check) {
        if (testCase == null) {
            return "no such case";
        }
        try {
            return check.problem(name, testCase, bytes);
        } catch (Exception | AssertionError e) {
            return e.toString();
        }
    }
}
