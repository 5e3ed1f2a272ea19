package rpclab.golden;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import rpclab.contract.Order;

/**
 * The frames every Dubbo line writes for the Rust client's tests, written
 * through that line's own {@code DubboCodec} by a subclass (one per Dubbo
 * line: its packages differ, the cases do not). Files:
 * {@code <out>/<serialization>-<case>.bin}.
 */
public abstract class Cases {
    public static final String SERVICE = "rpclab.contract.BenchService";

    private final Path out;

    protected Cases(Path out) throws IOException {
        this.out = out;
        Files.createDirectories(out);
    }

    /** A provider's reply carrying {@code value} ({@code null}: a void method). */
    protected abstract byte[] value(String serialization, long id, Object value) throws IOException;

    /** A provider's reply carrying a thrown exception. */
    protected abstract byte[] exception(String serialization, long id, Throwable t) throws IOException;

    /** A reply with status SERVICE_NOT_FOUND (60) and an error message. */
    protected abstract byte[] notFound(String serialization, long id, String message) throws IOException;

    /** A heartbeat request ({@code response} false) or its answer. */
    protected abstract byte[] heartbeat(String serialization, long id, boolean response) throws IOException;

    /** A consumer's request calling {@code echoOrder(order)} with the attachments the Rust client sends. */
    protected abstract byte[] echoOrderRequest(String serialization, long id, Order order) throws IOException;

    /** The line's RpcException, wrapping {@code cause}. */
    protected abstract RuntimeException rpcException(String message, Throwable cause);

    /** Writes every case in {@code serialization}. */
    public final void write(String serialization) throws IOException {
        save(serialization, "order", value(serialization, 1, sample(1)));
        List<Order> orders = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            orders.add(sample(i));
        }
        save(serialization, "orders", value(serialization, 2, orders));
        save(serialization, "hello", value(serialization, 3, "hello aa"));
        save(serialization, "long-string", value(serialization, 4, "x".repeat(70_000)));
        save(serialization, "unicode-string",
                value(serialization, 5, "h\u00e9llo \u4e16\u754c \ud83d\ude00 \u0000"));
        save(serialization, "void", value(serialization, 6, null));
        // Exception classes a provider's STRICT serialization check lets through.
        save(serialization, "exception", exception(serialization, 7,
                rpcException("boom", new IllegalArgumentException("bad input"))));
        save(serialization, "exception-no-message", exception(serialization, 8, new IllegalStateException()));
        save(serialization, "service-not-found", notFound(serialization, 9,
                "Not found exported service: rpclab.contract.Nope:20880"));
        save(serialization, "heartbeat-request", heartbeat(serialization, 10, false));
        save(serialization, "heartbeat-response", heartbeat(serialization, 10, true));
        save(serialization, "request-echo-order", echoOrderRequest(serialization, 11, sample(1)));
    }

    private void save(String serialization, String name, byte[] bytes) throws IOException {
        if (bytes.length == 0) {
            throw new IllegalStateException(serialization + "-" + name + ": nothing encoded");
        }
        Files.write(out.resolve(serialization + "-" + name + ".bin"), bytes);
    }

    /**
     * The contract's {@code Order::sample(i)}. (At the end of the file: the
     * exception frames carry this file's line numbers.)
     */
    public static Order sample(int i) {
        return rpclab.shared.ContractPayloads.sample(i, Order::new);
    }
}
