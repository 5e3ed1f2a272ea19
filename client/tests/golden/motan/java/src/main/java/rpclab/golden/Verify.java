package rpclab.golden;

import com.weibo.api.motan.protocol.v2motan.MotanV2Codec;
import com.weibo.api.motan.rpc.DefaultRequest;
import com.weibo.api.motan.rpc.Request;
import com.weibo.api.motan.serialize.DeserializableObject;
import com.weibo.api.motan.transport.support.DefaultRpcHeartbeatFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;
import java.util.stream.Stream;
import rpclab.contract.Order;
import rpclab.shared.ContractPayloads;

/**
 * Java reads what Rust writes: every {@code <serialization>-request-<case>.bin}
 * in the directory (written by the Rust test motan_golden.rs) is decoded by
 * Motan's own {@link MotanV2Codec} as a provider decodes a request, its
 * arguments deserialized for the method's parameter types, and compared with
 * the expected call. Prints one line per file; exits 1 if any failed.
 */
public final class Verify {
    public static void main(String[] args) throws Exception {
        Path dir = Path.of(args[0]);
        MotanV2Codec codec = new MotanV2Codec();
        int failed = 0;
        int checked = 0;
        List<Path> files;
        try (Stream<Path> s = Files.list(dir)) {
            files = s.filter(p -> p.toString().endsWith(".bin")).sorted().toList();
        }
        for (Path file : files) {
            String name = file.getFileName().toString().replace(".bin", "");
            String serialization = name.substring(0, name.indexOf('-'));
            String kind = name.substring(name.indexOf('-') + 1);
            checked++;
            try {
                Object decoded = codec.decode(MotanFrames.channel(serialization), "127.0.0.1", Files.readAllBytes(file));
                check(kind, decoded, "simple".equals(serialization) ? 6 : 0);
                System.out.println("OK   " + name);
            } catch (Throwable e) {
                failed++;
                System.out.println("FAIL " + name + ": " + e);
            }
        }
        System.out.println(checked + " checked, " + failed + " failed");
        if (checked == 0 || failed > 0) {
            System.exit(1);
        }
    }

    static void check(String kind, Object decoded, int serialization) throws Exception {
        if (kind.startsWith("heartbeat")) {
            if (!DefaultRpcHeartbeatFactory.isHeartbeatRequest(decoded)) {
                throw new AssertionError("not a heartbeat request: " + decoded);
            }
            return;
        }
        DefaultRequest req = (DefaultRequest) decoded;
        expect("interface", "rpclab.contract.BenchService", req.getInterfaceName());
        expect("group", "rpclab", req.getAttachments().get("group"));
        expect("version", "1.0", req.getAttachments().get("version"));
        expect("application", "rpclab-client", req.getAttachments().get("application"));
        expect("serialization", serialization, req.getSerializeNumber());
        String method;
        String desc;
        Class<?>[] types;
        Object[] expected;
        switch (kind) {
            case "request-hello" -> {
                method = "hello"; desc = "java.lang.String"; types = new Class<?>[] {String.class};
                expected = new Object[] {"aa"};
            }
            case "request-string-1k" -> {
                method = "echoString"; desc = "java.lang.String"; types = new Class<?>[] {String.class};
                expected = new Object[] {"x".repeat(1024)};
            }
            case "request-empty" -> {
                method = "empty"; desc = "void"; types = new Class<?>[0]; expected = null;
            }
            case "request-echo-order" -> {
                method = "echoOrder"; desc = "rpclab.contract.Order"; types = new Class<?>[] {Order.class};
                expected = new Object[] {ContractPayloads.sample(1, Order::new)};
            }
            case "request-echo-orders" -> {
                method = "echoOrders"; desc = "java.util.List"; types = new Class<?>[] {List.class};
                List<Order> orders = ContractPayloads.samples(100, Order::new);
                expected = new Object[] {orders};
            }
            default -> throw new AssertionError("unknown case " + kind);
        }
        expect("method", method, req.getMethodName());
        expect("parameter desc", desc, req.getParamtersDesc());
        Object[] got = req.getArguments();
        if (expected == null) {
            if (got != null) {
                throw new AssertionError("arguments for a method without parameters: " + Arrays.toString(got));
            }
            return;
        }
        if (got == null || got.length != 1 || !(got[0] instanceof DeserializableObject)) {
            throw new AssertionError("no body: " + Arrays.toString(got));
        }
        Object[] args = ((DeserializableObject) got[0]).deserializeMulti(types);
        if (!Arrays.deepEquals(expected, args)) {
            throw new AssertionError("arguments " + Arrays.deepToString(args) + " != " + Arrays.deepToString(expected));
        }
    }

    static void expect(String what, Object want, Object got) {
        if (!Objects.equals(want, got)) {
            throw new AssertionError(what + ": expected " + want + ", got " + got);
        }
    }
}
