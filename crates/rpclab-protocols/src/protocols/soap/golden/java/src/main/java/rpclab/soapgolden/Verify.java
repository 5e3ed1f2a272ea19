package rpclab.soapgolden;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;

/**
 * Posts every {@code <case>.request.xml} found in DIR (written by the Rust
 * client) to the service published in process by the JAX-WS implementation
 * on the classpath, and requires the reply to be byte for byte the golden
 * {@code <case>.response.xml} of GOLDEN_DIR: what the real endpoint answers
 * to the implementation's own client. Usage: Verify DIR GOLDEN_DIR.
 * Exit status 1 on any difference.
 */
public final class Verify {
    private Verify() {}

    public static void main(String[] args) throws Exception {
        Path dir = Path.of(args[0]);
        Path golden = Path.of(args[1]);
        AutoCloseable endpoint = Generate.publish();
        int checked = 0;
        int failed = 0;
        try {
            for (String name : Generate.cases().keySet()) {
                Path file = dir.resolve(name + ".request.xml");
                if (!Files.exists(file)) {
                    continue;
                }
                Generate.Reply reply = Generate.http("POST", "http://127.0.0.1:" + Generate.PORT + "/bench",
                        Files.readAllBytes(file), "\"\"");
                byte[] expected = Files.readAllBytes(golden.resolve(name + ".response.xml"));
                checked++;
                if (reply.status() != 200 || !Arrays.equals(reply.body(), expected)) {
                    failed++;
                    String body = new String(reply.body(), java.nio.charset.StandardCharsets.UTF_8);
                    System.out.println("FAIL " + name + ": HTTP " + reply.status() + ": "
                            + body.substring(0, Math.min(400, body.length())));
                }
            }
        } finally {
            endpoint.close();
        }
        System.out.println("checked " + checked + " requests, " + failed + " failed");
        System.exit(failed == 0 && checked > 0 ? 0 : 1);
    }
}
