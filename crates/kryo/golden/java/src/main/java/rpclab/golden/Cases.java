package rpclab.golden;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import rpclab.contract.Order;

/**
 * The golden cases. A case is a sequence of steps; each step is one call of
 * Dubbo's ObjectOutput (writeUTF, writeObject, writeByte, ...) or, for the
 * cases named raw_*, one call of the raw Kryo Output (varints). Generate
 * replays them on Dubbo's KryoObjectOutput; Verify replays the matching
 * reads on Dubbo's KryoObjectInput and compares.
 *
 * Mirrored, case for case, by crates/kryo/tests/common/mod.rs.
 */
final class Cases {
    private Cases() {}

    /** One step: a kind (bool, byte, short, int, long, float, double, bytes, utf, object,
     *  varint+, varint-, varlong+, varlong-) and its value. */
    record Step(String kind, Object value) {}

    static Step p(String kind, Object v) { return new Step(kind, v); }
    static Step utf(String v) { return new Step("utf", v); }
    static Step obj(Object v) { return new Step("object", v); }

    /** The phone is a literal: one String instance shared by every order. */
    static Order order(long id) {
        return new Order(id, "13800138000", "n\u00e4me-" + id, "ORD-" + id, 20240131, 2, 99.5 + id, 1);
    }

    /** Printable ASCII text of n chars (the contract's payload shape). */
    static String ascii(int n) {
        StringBuilder b = new StringBuilder(n);
        for (int i = 0; i < n; i++) b.append((char) (' ' + 1 + i % 94));
        return b.toString();
    }

    /** An exception with a fixed stack trace, so the vectors do not depend on this file's lines. */
    static <T extends Throwable> T fixed(T t) {
        t.setStackTrace(new StackTraceElement[] {
            new StackTraceElement("rpclab.golden.Bench", "echo", "Bench.java", 42)});
        return t;
    }

    static Map<String, String> attachments() {
        Map<String, String> m = new HashMap<>();
        m.put("path", "rpclab.contract.BenchService");
        m.put("interface", "rpclab.contract.BenchService");
        m.put("version", "0.0.0");
        m.put("timeout", "3000");
        return m;
    }

    static Map<String, String> responseAttachments() {
        Map<String, String> m = new HashMap<>();
        m.put("dubbo", "2.0.2");
        return m;
    }

    static Map<String, List<Step>> all() {
        Map<String, List<Step>> m = new LinkedHashMap<>();
        m.put("prims", List.of(
            p("bool", true), p("bool", false), p("byte", (byte) -2), p("short", (short) -12345),
            p("int", 0x01020304), p("int", -7), p("long", 0x0102030405060708L), p("float", 1.5f),
            p("double", -0.25), p("bytes", new byte[] {1, 2, (byte) 0xff}), p("bytes", new byte[0])));
        m.put("utf_null", Arrays.asList(utf(null)));
        m.put("utf_short", List.of(utf(""), utf("a"), utf("ab"), utf("hello"), utf("2.0.2")));
        List<Step> lengths = new ArrayList<>();
        for (int n : new int[] {31, 32, 33, 63, 64, 65, 127, 128, 8190, 8191, 8192}) lengths.add(utf(ascii(n)));
        m.put("utf_lengths", lengths);
        m.put("utf_unicode", List.of(utf("h\u00e9llo \0 \u20ac \ud83d\ude00"), utf("\u00e9"),
            utf("\u4e2d\u6587\u5b57\u7b26"), utf("x\u07ff\u0800\uffff")));
        m.put("utf_70000", List.of(utf(ascii(70000))));
        m.put("utf_1m", List.of(utf(ascii(1048576))));
        m.put("object_null", Arrays.asList(obj(null)));
        m.put("object_string", List.of(obj("hello aa")));
        m.put("object_string_empty", List.of(obj("")));
        m.put("object_string_unicode", List.of(obj("n\u00e4me \ud83d\ude00")));
        m.put("object_string_1k", List.of(obj(ascii(1024))));
        m.put("boxed", List.of(obj(-123456), obj(Long.MIN_VALUE), obj(3.25d), obj(true), obj(7L)));
        m.put("order", List.of(obj(order(1))));
        m.put("order_nulls", List.of(obj(new Order(Long.MAX_VALUE, null, null, null,
            Integer.MIN_VALUE, -1, -0.0, Integer.MAX_VALUE))));
        m.put("order_unicode", List.of(obj(new Order(-1, "\u260e 138", "\u5f20\u4e09", "", 0, 0, Double.NaN, 0))));
        m.put("orders_two", List.of(obj(new ArrayList<>(List.of(order(1), order(2))))));
        m.put("orders_empty", List.of(obj(new ArrayList<Order>())));
        List<Order> hundred = new ArrayList<>();
        for (int i = 0; i < 100; i++) hundred.add(order(i));
        m.put("orders_100", List.of(obj(hundred)));
        m.put("orders_with_null", List.of(obj(new ArrayList<>(Arrays.asList(order(1), null)))));
        String shared = new String("shared");
        m.put("list_mixed", List.of(obj(new ArrayList<>(Arrays.asList("a", 1, null, shared, shared)))));
        m.put("map_empty", List.of(obj(new HashMap<String, String>())));
        m.put("map_attachments", List.of(obj(attachments())));
        Map<String, String> thirteen = new HashMap<>();
        for (int i = 0; i < 13; i++) thirteen.put("k" + i, "v" + i);
        m.put("map_13", List.of(obj(thirteen)));
        m.put("request_echo_order", List.of(utf("2.0.2"), utf("rpclab.contract.BenchService"), utf("0.0.0"),
            utf("echoOrder"), utf("Lrpclab/contract/Order;"), obj(order(1)), obj(attachments())));
        m.put("request_echo_orders", List.of(utf("2.0.2"), utf("rpclab.contract.BenchService"), utf("0.0.0"),
            utf("echoOrders"), utf("Ljava/util/List;"), obj(new ArrayList<>(List.of(order(1), order(2)))),
            obj(attachments())));
        m.put("request_empty", List.of(utf("2.0.2"), utf("rpclab.contract.BenchService"), utf("0.0.0"),
            utf("empty"), utf(""), obj(attachments())));
        m.put("response_order", List.of(p("byte", (byte) 4), obj(order(1)), obj(responseAttachments())));
        m.put("response_string", List.of(p("byte", (byte) 4), obj("hello aa"), obj(responseAttachments())));
        m.put("response_null", List.of(p("byte", (byte) 5), obj(responseAttachments())));
        m.put("response_exception", List.of(p("byte", (byte) 3), obj(fixed(new RuntimeException("boom"))),
            obj(responseAttachments())));
        m.put("exception_cause", List.of(obj(fixed(new IllegalStateException("outer",
            fixed(new IllegalArgumentException("inner")))))));
        m.put("exception_no_message", List.of(obj(fixed(new UnsupportedOperationException()))));
        List<Step> varints = new ArrayList<>();
        for (int v : new int[] {0, 1, -1, 63, 64, 127, 128, 8191, 8192, 16383, 16384, (1 << 21) - 1, 1 << 21,
                (1 << 28) - 1, 1 << 28, Integer.MAX_VALUE, Integer.MIN_VALUE}) {
            varints.add(p("varint+", v));
            varints.add(p("varint-", v));
        }
        for (long v : new long[] {0, 1, -1, 127, 128, 1L << 35, (1L << 42) - 1, 1L << 49, (1L << 56) - 1, 1L << 56,
                Long.MAX_VALUE, Long.MIN_VALUE}) {
            varints.add(p("varlong+", v));
            varints.add(p("varlong-", v));
        }
        m.put("raw_varints", varints);
        return m;
    }
}
