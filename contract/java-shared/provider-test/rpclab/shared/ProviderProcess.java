package rpclab.shared;

import static org.junit.jupiter.api.Assertions.fail;

import java.io.BufferedReader;
import java.io.File;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * A server's main class in a child JVM (this test JVM's class path), configured
 * by the environment exactly as in its container; its output is echoed and
 * scanned for the lab's ready line ("rpclab server ready on 127.0.0.1:PORT").
 * Test scope (JUnit): servers' poms add this folder with build-helper's
 * add-test-source.
 */
public final class ProviderProcess implements AutoCloseable {
    public final Process process;
    /** Every line the child printed so far. */
    public final List<String> all = Collections.synchronizedList(new ArrayList<>());
    private final Thread reader;
    private final BlockingQueue<String> lines = new LinkedBlockingQueue<>();

    public ProviderProcess(Class<?> main, List<String> jvmFlags, Map<String, String> env) throws Exception {
        List<String> cmd = new ArrayList<>();
        cmd.add(System.getProperty("java.home") + File.separator + "bin" + File.separator + "java");
        cmd.addAll(jvmFlags);
        cmd.add("-cp");
        cmd.add(System.getProperty("java.class.path"));
        cmd.add(main.getName());
        ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true);
        pb.environment().putAll(env);
        process = pb.start();
        reader = new Thread(() -> {
            try (BufferedReader r = new BufferedReader(
                    new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
                String line;
                while ((line = r.readLine()) != null) {
                    System.out.println("[provider] " + line);
                    all.add(line);
                    lines.add(line);
                }
            } catch (Exception ignored) {
                // process ended
            }
        });
        reader.setDaemon(true);
        reader.start();
    }

    /** Waits (90 s at most) for the ready line on `port`; fails if the child exits first. */
    public void awaitReady(int port) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(90);
        while (System.nanoTime() < deadline) {
            String line = lines.poll(200, TimeUnit.MILLISECONDS);
            if (line != null && line.startsWith("rpclab server ready on 127.0.0.1:" + port)) {
                return;
            }
            if (line == null && !process.isAlive()) {
                fail("provider exited with " + process.exitValue() + " before it was ready:\n" + String.join("\n", all));
            }
        }
        fail("provider not ready after 90 s:\n" + String.join("\n", all));
    }

    /** Sends SIGTERM, as docker stop does, and returns the exit status. */
    public int stop() throws Exception {
        // The handle's destroy() is SIGTERM and nothing else (Process.destroy()
        // would also close the pipes, losing the provider's last lines); no
        // `kill` program needed, which the build image does not have.
        if (!process.toHandle().destroy()) {
            fail("cannot send SIGTERM to the provider");
        }
        if (!process.waitFor(30, TimeUnit.SECONDS)) {
            process.destroyForcibly();
            fail("provider did not stop within 30 s of SIGTERM");
        }
        reader.join(5_000);
        return process.exitValue();
    }

    @Override
    public void close() {
        process.destroyForcibly();
    }

    /** A free TCP port on 127.0.0.1. */
    public static int freePort() throws Exception {
        try (java.net.ServerSocket s = new java.net.ServerSocket(0, 1, java.net.InetAddress.getByName("127.0.0.1"))) {
            return s.getLocalPort();
        }
    }
}
