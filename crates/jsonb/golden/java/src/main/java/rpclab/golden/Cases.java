package rpclab.golden;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

import org.apache.dubbo.common.serialize.ObjectInput;
import org.apache.dubbo.common.serialize.ObjectOutput;

import rpclab.contract.Order;

/**
 * The golden cases: each is a sequence of Dubbo ObjectOutput calls (what the
 * dubbo codec makes of a request or a response body), read back with the
 * ObjectInput call Dubbo's codec uses for it. Shared by Generate (Java writes)
 * and Verify (Java reads what Rust wrote).
 */
final class Cases {
    private Cases() {}

    /** How a step is written and read. */
    enum Kind { UTF, BYTE, OBJECT, ATTACHMENTS, THROWABLE }

    /** One ObjectOutput call: the value, and the class Dubbo reads it as. */
    record Step(Kind kind, Object value, Class<?> readAs) {}

    static Step utf(String s) { return new Step(Kind.UTF, s, String.class); }
    static Step b(int v) { return new Step(Kind.BYTE, (byte) v, byte.class); }
    static Step obj(Object v, Class<?> readAs) { return new Step(Kind.OBJECT, v, readAs); }
    static Step att(Map<String, Object> m) { return new Step(Kind.ATTACHMENTS, m, Map.class); }
    static Step thr(Throwable t) { return new Step(Kind.THROWABLE, t, Throwable.class); }

    static Order typical() {
        return new Order(1234567890123L, "13800138000", "rpclab", "ORD-2026-0001", 20261129, 2, 99.5, 1);
    }

    static String repeat(String s, int n) { return s.repeat(n); }

    static Map<String, List<Step>> all() {
        Map<String, List<Step>> m = new LinkedHashMap<>();
        // strings: writeUTF and writeObject(String) are the same call in Dubbo
        m.put("string_empty", List.of(utf("")));
        m.put("string_ascii", List.of(utf("hello")));
        m.put("string_fix_max", List.of(utf(repeat("a", 47))));
        m.put("string_fix_over", List.of(utf(repeat("a", 48))));
        m.put("string_ascii_1k", List.of(utf(repeat("0123456789abcdef", 64))));
        m.put("string_ascii_100k", List.of(utf(repeat("x", 100 * 1024))));
        m.put("string_latin1", List.of(utf("caf\u00e9 \u00fcber \u00ff")));
        m.put("string_cjk", List.of(utf("\u4f60\u597d\uff0c\u4e16\u754c")));
        m.put("string_mixed", List.of(utf("order \u2116 42 \u2014 \u00e9t\u00e9")));
        m.put("string_emoji", List.of(utf("rocket \ud83d\ude80!")));
        m.put("string_cjk_long", List.of(utf(repeat("\u6570\u636e", 600))));
        m.put("string_control", List.of(utf("tab\tnl\nnul\u0000del\u007f")));
        // the request head as DubboCodec writes it with fastjson2
        m.put("request_head", List.of(utf("2.0.2"), utf("rpclab.contract.BenchService"), utf("0.0.0"),
            utf("echoOrder"), utf("Lrpclab/contract/Order;")));
        m.put("descriptor_empty", List.of(utf("")));
        // the response type byte (writeByte = writeObject(Byte))
        m.put("byte_values", List.of(b(0), b(1), b(2), b(3), b(4), b(5), b(-1), b(127), b(-128)));
        // numbers and scalars (generic edge cases)
        m.put("int_values", List.of(obj(0, Integer.class), obj(1, Integer.class), obj(-1, Integer.class),
            obj(-16, Integer.class), obj(47, Integer.class), obj(48, Integer.class), obj(-17, Integer.class),
            obj(-2048, Integer.class), obj(2047, Integer.class), obj(2048, Integer.class),
            obj(-2049, Integer.class), obj(262143, Integer.class), obj(-262144, Integer.class),
            obj(262144, Integer.class), obj(Integer.MAX_VALUE, Integer.class), obj(Integer.MIN_VALUE, Integer.class)));
        m.put("long_values", List.of(obj(0L, Long.class), obj(15L, Long.class), obj(-8L, Long.class),
            obj(16L, Long.class), obj(-9L, Long.class), obj(2047L, Long.class), obj(-2048L, Long.class),
            obj(2048L, Long.class), obj(262143L, Long.class), obj(-262144L, Long.class), obj(262144L, Long.class),
            obj((long) Integer.MAX_VALUE, Long.class), obj((long) Integer.MIN_VALUE, Long.class),
            obj(1L + Integer.MAX_VALUE, Long.class), obj(Long.MAX_VALUE, Long.class), obj(Long.MIN_VALUE, Long.class)));
        m.put("double_values", List.of(obj(0.0, Double.class), obj(1.0, Double.class), obj(-1.0, Double.class),
            obj(2.0, Double.class), obj(99.5, Double.class), obj(1e300, Double.class),
            // (-0.0 is not a case: fastjson2 2.0.56 writes it as 0.0, BC_DOUBLE_NUM_0)
            obj(123456789.0, Double.class), obj(1e18, Double.class), obj(Double.MAX_VALUE, Double.class),
            obj(Double.MIN_VALUE, Double.class), obj(Double.NaN, Double.class),
            obj(Double.POSITIVE_INFINITY, Double.class), obj(0.1, Double.class)));
        m.put("bool_values", List.of(obj(true, Boolean.class), obj(false, Boolean.class)));
        m.put("null", List.of(obj(null, Object.class)));
        // the contract's POJO
        m.put("order_typical", List.of(obj(typical(), Order.class)));
        m.put("order_default", List.of(obj(new Order(), Order.class)));
        m.put("order_empty_strings", List.of(obj(new Order(0, "", "", "", 0, 0, 0.0, 0), Order.class)));
        m.put("order_extremes", List.of(obj(new Order(Long.MIN_VALUE, "\u00e9\u4e16\ud83d\ude80", repeat("n", 300),
            "x", Integer.MIN_VALUE, Integer.MAX_VALUE, -1.25e-7, -1), Order.class)));
        m.put("order_max", List.of(obj(new Order(Long.MAX_VALUE, "1", null, "o", 1, -1, Double.MAX_VALUE,
            Integer.MIN_VALUE), Order.class)));
        // List<Order> (an ArrayList)
        m.put("orders_empty", List.of(obj(new ArrayList<Order>(), List.class)));
        m.put("orders_one", List.of(obj(new ArrayList<>(List.of(typical())), List.class)));
        List<Order> several = new ArrayList<>();
        for (int i = 0; i < 20; i++) {
            several.add(new Order(1000L + i, "1380013" + i, "name" + i, "ORD-" + i, 20260000 + i, i % 3,
                i * 1.5, i % 4));
        }
        m.put("orders_twenty", List.of(obj(several, List.class)));
        List<Order> withNull = new ArrayList<>();
        withNull.add(typical());
        withNull.add(null);
        withNull.add(new Order());
        m.put("orders_with_null", List.of(obj(withNull, List.class)));
        Order shared = typical();
        List<Order> sharedList = new ArrayList<>(List.of(shared, shared));
        m.put("orders_shared", List.of(obj(sharedList, List.class)));
        // attachments (a HashMap<String, Object> of strings)
        m.put("attachments_empty", List.of(att(new HashMap<>())));
        Map<String, Object> a = new HashMap<>();
        a.put("path", "rpclab.contract.BenchService");
        a.put("interface", "rpclab.contract.BenchService");
        a.put("version", "0.0.0");
        m.put("attachments", List.of(att(a)));
        Map<String, Object> many = new HashMap<>();
        for (int i = 0; i < 40; i++) {
            many.put("key" + i, "value " + i + " \u00e9");
        }
        m.put("attachments_many", List.of(att(many)));
        // whole bodies: a request for each operation, a response with attachments
        Map<String, Object> reqAtt = new HashMap<>();
        reqAtt.put("path", "rpclab.contract.BenchService");
        reqAtt.put("interface", "rpclab.contract.BenchService");
        m.put("request_echo_order", List.of(utf("2.0.2"), utf("rpclab.contract.BenchService"), utf("0.0.0"),
            utf("echoOrder"), utf("Lrpclab/contract/Order;"), obj(typical(), Order.class), att(reqAtt)));
        m.put("request_echo_orders", List.of(utf("2.0.2"), utf("rpclab.contract.BenchService"), utf("0.0.0"),
            utf("echoOrders"), utf("Ljava/util/List;"), obj(several, List.class), att(reqAtt)));
        m.put("request_empty", List.of(utf("2.0.2"), utf("rpclab.contract.BenchService"), utf("0.0.0"),
            utf("empty"), utf(""), att(reqAtt)));
        Map<String, Object> respAtt = new HashMap<>();
        respAtt.put("dubbo", "2.0.2");
        m.put("response_value", List.of(b(4), obj("hello", String.class), att(respAtt)));
        m.put("response_null", List.of(b(5), att(respAtt)));
        m.put("response_order", List.of(b(4), obj(typical(), Order.class), att(respAtt)));
        // exceptions from the provider
        RuntimeException plain = new IllegalStateException("order 42 not found");
        plain.setStackTrace(new StackTraceElement[0]);
        m.put("throwable_plain", List.of(b(3), thr(plain), att(respAtt)));
        RuntimeException traced = new IllegalArgumentException("bad \u00e9 input");
        traced.setStackTrace(new StackTraceElement[] {
            new StackTraceElement("rpclab.contract.BenchServiceImpl", "echoOrder", "BenchServiceImpl.java", 42),
            new StackTraceElement("org.apache.dubbo.rpc.proxy.AbstractProxyInvoker", "invoke", null, -1),
        });
        m.put("throwable_traced", List.of(thr(traced)));
        RuntimeException noMessage = new IllegalStateException();
        noMessage.setStackTrace(new StackTraceElement[0]);
        m.put("throwable_no_message", List.of(thr(noMessage)));
        Exception cause = new IllegalArgumentException("disk");
        cause.setStackTrace(new StackTraceElement[0]);
        RuntimeException wrapped = new RuntimeException("wrapped", cause);
        wrapped.setStackTrace(new StackTraceElement[0]);
        m.put("throwable_cause", List.of(thr(wrapped)));
        return m;
    }

    static void write(ObjectOutput out, List<Step> steps) throws Exception {
        for (Step s : steps) {
            switch (s.kind()) {
                case UTF -> out.writeUTF((String) s.value());
                case BYTE -> out.writeByte((Byte) s.value());
                case OBJECT -> out.writeObject(s.value());
                case ATTACHMENTS -> {
                    @SuppressWarnings("unchecked")
                    Map<String, Object> map = (Map<String, Object>) s.value();
                    out.writeAttachments(map);
                }
                case THROWABLE -> out.writeThrowable((Throwable) s.value());
            }
        }
        out.flushBuffer();
    }

    /** Reads the steps back; null when all match, else what differs. */
    static String check(ObjectInput in, List<Step> steps) throws Exception {
        int i = 0;
        for (Step s : steps) {
            Object got;
            switch (s.kind()) {
                case UTF -> got = in.readUTF();
                case BYTE -> got = in.readByte();
                case ATTACHMENTS -> got = in.readAttachments();
                case THROWABLE -> got = in.readThrowable();
                default -> got = in.readObject(s.readAs());
            }
            String err = same(s.value(), got);
            if (err != null) return "step " + i + ": " + err;
            i++;
        }
        return null;
    }

    static String same(Object want, Object got) {
        if (want instanceof Throwable w) {
            if (!(got instanceof Throwable g)) return "want " + w + ", got " + got;
            if (w.getClass() != g.getClass()) return "class " + g.getClass() + " != " + w.getClass();
            if (!Objects.equals(w.getMessage(), g.getMessage())) return "message " + g.getMessage() + " != " + w.getMessage();
            if (!Arrays.equals(w.getStackTrace(), g.getStackTrace())) return "stack trace differs";
            if ((w.getCause() == null) != (g.getCause() == null)) return "cause differs";
            return w.getCause() == null ? null : same(w.getCause(), g.getCause());
        }
        if (want instanceof Double d && got instanceof Double e) {
            return Double.compare(d, e) == 0 ? null : "want " + d + ", got " + e;
        }
        return Objects.equals(want, got) ? null : "want " + abbreviate(want) + ", got " + abbreviate(got)
            + (got == null ? "" : " (" + got.getClass().getName() + ")");
    }

    static String abbreviate(Object o) {
        String s = String.valueOf(o);
        return s.length() > 200 ? s.substring(0, 200) + "..." : s;
    }
}
