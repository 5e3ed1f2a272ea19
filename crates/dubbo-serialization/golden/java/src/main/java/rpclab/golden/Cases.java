package rpclab.golden;

import com.alibaba.dubbo.common.serialize.support.dubbo.GenericObjectInput;
import com.alibaba.dubbo.common.serialize.support.dubbo.GenericObjectOutput;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import rpclab.contract.Order;

/**
 * The golden cases: each is a sequence of calls on Dubbo 2.5's
 * GenericObjectOutput (what DubboCodec makes of a request or response body,
 * and the primitive forms on their own), read back with the
 * GenericObjectInput call Dubbo uses for each. Shared by Generate (Java
 * writes) and Verify (Java reads what Rust wrote). The Rust side
 * (tests/common/mod.rs) has the same names and values.
 */
final class Cases {
    private Cases() {}

    enum Kind { UTF, BYTE, INT, LONG, DOUBLE, BOOL, OBJECT, THROWABLE }

    record Step(Kind kind, Object value) {}

    static Step utf(String s) { return new Step(Kind.UTF, s); }
    static Step b(int v) { return new Step(Kind.BYTE, (byte) v); }
    static Step i(int v) { return new Step(Kind.INT, v); }
    static Step l(long v) { return new Step(Kind.LONG, v); }
    static Step d(double v) { return new Step(Kind.DOUBLE, v); }
    static Step bool(boolean v) { return new Step(Kind.BOOL, v); }
    static Step obj(Object v) { return new Step(Kind.OBJECT, v); }
    static Step thr(Throwable t) { return new Step(Kind.THROWABLE, t); }

    static Order typical() {
        return new Order(1234567890123L, "13800138000", "rpclab", "ORD-2026-0001", 20261129, 2, 99.5, 1);
    }

    /** Same shape as rpclab_model's Order::sample(i). */
    static Order sample(int i) {
        return new Order(1_000_000_000_000L + i, "1380013" + String.format("%04d", i), "name-" + i,
                "ORD-" + i, 20150101 + i, i % 3, 99.5 + i, i % 5);
    }

    static <T> ArrayList<T> list(T... items) {
        return new ArrayList<>(Arrays.asList(items));
    }

    static HashMap<String, String> map(String... kv) {
        HashMap<String, String> m = new HashMap<>();
        for (int k = 0; k < kv.length; k += 2) {
            m.put(kv[k], kv[k + 1]);
        }
        return m;
    }

    static Map<String, List<Step>> all() {
        Map<String, List<Step>> m = new LinkedHashMap<>();
        m.put("utf_null", List.of(utf(null)));
        m.put("utf_empty", List.of(utf("")));
        m.put("utf_ascii", List.of(utf("hello")));
        m.put("utf_unicode", List.of(utf("caf\u00e9 \u4f60\u597d \ud83d\ude80 \u00ff")));
        m.put("utf_control", List.of(utf("tab\tnl\nnul\u0000del\u007f")));
        m.put("utf_127_128", List.of(utf("a".repeat(127)), utf("b".repeat(128))));
        m.put("utf_1k", List.of(utf("0123456789abcdef".repeat(64))));
        m.put("utf_100k", List.of(utf("x".repeat(100 * 1024))));
        m.put("utf_1m", List.of(utf("y".repeat(1024 * 1024))));
        m.put("bytes", List.of(b(0), b(31), b(32), b(-1), b(127), b(-128)));
        m.put("ints", List.of(i(0), i(-15), i(31), i(32), i(-16), i(127), i(128), i(-129), i(65535),
                i(-65536), i(Integer.MAX_VALUE), i(Integer.MIN_VALUE)));
        m.put("longs", List.of(l(0), l(-1), l(1L << 31), l(-(1L << 31) - 1), l(1L << 40), l(-(1L << 47)),
                l(1L << 55), l(Long.MAX_VALUE), l(Long.MIN_VALUE), l(1234567890123L)));
        m.put("doubles", List.of(d(0.0), d(-0.0), d(99.5), d(1.0), d(-2.5), d(Double.MAX_VALUE),
                d(Double.MIN_VALUE), d(Double.NaN), d(Double.POSITIVE_INFINITY)));
        m.put("bools", List.of(bool(true), bool(false)));
        m.put("object_null", List.of(obj(null)));
        m.put("object_string", List.of(obj("hello")));
        m.put("object_string_empty", List.of(obj("")));
        m.put("object_string_unicode", List.of(obj("\u6570\u636e \u2014 \ud83d\ude80")));
        m.put("order", List.of(obj(typical())));
        m.put("order_nulls", List.of(obj(new Order(-7L, null, null, null, -1, 0, -0.5, 40))));
        m.put("order_empty_strings", List.of(obj(new Order(0L, "", "", "", 0, 0, 0.0, 0))));
        m.put("order_unicode", List.of(obj(new Order(Long.MIN_VALUE, "\u260e 138", "\u674e\u56db",
                "\ud83d\udce6-1", Integer.MAX_VALUE, Integer.MIN_VALUE, Double.MAX_VALUE, 31))));
        m.put("orders_empty", List.of(obj(new ArrayList<Order>())));
        m.put("orders_two", List.of(obj(list(sample(0), sample(1)))));
        m.put("orders_with_null", List.of(obj(list(sample(2), null, sample(3)))));
        // equal orders: the second and fourth are back-references (Dubbo's refs go by equals)
        m.put("orders_repeated", List.of(obj(list(sample(5), sample(5), sample(6), sample(5)))));
        List<Order> hundred = new ArrayList<>();
        for (int k = 0; k < 100; k++) {
            hundred.add(sample(k));
        }
        m.put("orders_100", List.of(obj(new ArrayList<>(hundred))));
        m.put("map_empty", List.of(obj(new HashMap<String, String>())));
        m.put("map_one", List.of(obj(map("path", "rpclab.contract.BenchService"))));
        m.put("boxed", List.of(obj(42), obj(-3_000_000_000L), obj(2.25), obj(Boolean.TRUE), obj(Boolean.FALSE)));
        // bodies as DubboCodec 2.5.3 writes them (request: version, path, version,
        // method, parameter descriptor, arguments, attachments; response: type, value)
        m.put("request_echo_order", List.of(utf("2.0.0"), utf("rpclab.contract.BenchService"), utf("0.0.0"),
                utf("echoOrder"), utf("Lrpclab/contract/Order;"), obj(typical()),
                obj(map("path", "rpclab.contract.BenchService"))));
        m.put("request_echo_orders", List.of(utf("2.0.0"), utf("rpclab.contract.BenchService"), utf("0.0.0"),
                utf("echoOrders"), utf("Ljava/util/List;"), obj(list(sample(0), sample(1), sample(2))),
                obj(map("path", "rpclab.contract.BenchService"))));
        m.put("request_empty", List.of(utf("2.0.0"), utf("rpclab.contract.BenchService"), utf("0.0.0"),
                utf("empty"), utf(""), obj(map("path", "rpclab.contract.BenchService"))));
        m.put("response_order", List.of(b(1), obj(typical())));
        m.put("response_string", List.of(b(1), obj("hello rpclab")));
        m.put("response_orders", List.of(b(1), obj(list(sample(7), sample(8)))));
        m.put("response_null", List.of(b(2)));
        m.put("response_exception", List.of(b(0), thr(new IllegalStateException("boom"))));
        return m;
    }

    static void write(GenericObjectOutput out, Step s) throws IOException {
        switch (s.kind()) {
            case UTF -> out.writeUTF((String) s.value());
            case BYTE -> out.writeByte((Byte) s.value());
            case INT -> out.writeInt((Integer) s.value());
            case LONG -> out.writeLong((Long) s.value());
            case DOUBLE -> out.writeDouble((Double) s.value());
            case BOOL -> out.writeBool((Boolean) s.value());
            case OBJECT, THROWABLE -> out.writeObject(s.value());
            default -> throw new IllegalStateException(String.valueOf(s.kind()));
        }
    }

    /** Reads the step and returns why it differs, or null. */
    static String readAndCompare(GenericObjectInput in, Step s) throws IOException {
        Object got = switch (s.kind()) {
            case UTF -> in.readUTF();
            case BYTE -> in.readByte();
            case INT -> in.readInt();
            case LONG -> in.readLong();
            case DOUBLE -> in.readDouble();
            case BOOL -> in.readBool();
            case OBJECT, THROWABLE -> in.readObject();
        };
        if (s.kind() == Kind.THROWABLE) {
            Throwable want = (Throwable) s.value();
            if (!(got instanceof Throwable t) || t.getClass() != want.getClass()
                    || !Objects.equals(t.getMessage(), want.getMessage())) {
                return "expected " + want + ", read " + got;
            }
            return null;
        }
        if (s.kind() == Kind.DOUBLE) {
            return Double.doubleToRawLongBits((Double) got) == Double.doubleToRawLongBits((Double) s.value())
                    ? null : "expected " + s.value() + ", read " + got;
        }
        return Objects.equals(got, s.value()) ? null : "expected " + s.value() + ", read " + got;
    }
}
