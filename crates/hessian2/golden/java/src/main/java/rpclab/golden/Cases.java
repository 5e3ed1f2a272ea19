package rpclab.golden;

import java.io.Serializable;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Date;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.LinkedList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import rpclab.Order;
import rpclab.shared.ContractPayloads;

/**
 * The golden cases: each is a named sequence of Java values written with one
 * Hessian2Output, and the values Java reads back (which differ from the
 * written ones only where Hessian widens a type: short to int, float to
 * double, char to string, -0.0 to 0.0).
 *
 * Both Generate (Java writes, Rust reads) and Verify (Rust writes, Java reads)
 * use this one table, so the Rust side never has to agree with the Java side on
 * anything but the case names and the manifest.
 */
final class Cases {
    private Cases() {}

    static final class Case {
        final String name;
        final Object[] written;
        final Object[] decoded;
        /** Whether only one implementation's directory keeps this (large) case. */
        boolean cauchoOnly;
        /** Manifest override of the expected Rust value, when Rust cannot represent the Java one. */
        String rustValueJson;
        /** Whether the Rust encoder can write this case for Java to verify. */
        boolean rustWrites = true;
        String note = "";
        /** Whether what Java reads back depends on the implementation ({@link Impl#widen}). */
        boolean widened;

        Case(String name, Object[] written, Object[] decoded) {
            this.name = name;
            this.written = written;
            this.decoded = decoded;
        }
    }

    /** Binary test pattern: byte i is (i * 7 + 3) mod 256. */
    static byte[] pattern(int len) {
        byte[] b = new byte[len];
        for (int i = 0; i < len; i++) {
            b[i] = (byte) (i * 7 + 3);
        }
        return b;
    }

    static String repeat(String s, int n) {
        return s.repeat(n);
    }

    // ---- POJOs beyond rpclab.Order ----------------------------------------

    /** A class whose fields show the serializers' field order (java.lang.* and primitives first). */
    public static class Mixed implements Serializable {
        private static final long serialVersionUID = 1L;
        static int ignoredStatic = 7;
        List<Object> tags;
        int a;
        String s;
        Order child;
        long b;
        Integer boxed;
        byte[] data;
        Date when;
        Map<String, Object> attrs;
        double d;
        boolean flag;
        transient int ignoredTransient = 9;
    }

    /** A linked node for shared and cyclic graphs. */
    public static class Node implements Serializable {
        private static final long serialVersionUID = 1L;
        String name;
        Node next;

        Node() {}

        Node(String name) {
            this.name = name;
        }
    }

    /** A subclass: its own fields come before the superclass's. */
    public static class Base implements Serializable {
        private static final long serialVersionUID = 1L;
        int baseId;
        String baseName;
    }

    public static class Derived extends Base {
        private static final long serialVersionUID = 1L;
        int derivedId;
        List<Object> items;
    }

    /** Seventeen distinct classes: the 17th definition needs the 'O' form instead of 0x60-0x6f. */
    public static class K0 implements Serializable { int v; K0(int v) { this.v = v; } K0() {} }
    public static class K1 implements Serializable { int v; K1(int v) { this.v = v; } K1() {} }
    public static class K2 implements Serializable { int v; K2(int v) { this.v = v; } K2() {} }
    public static class K3 implements Serializable { int v; K3(int v) { this.v = v; } K3() {} }
    public static class K4 implements Serializable { int v; K4(int v) { this.v = v; } K4() {} }
    public static class K5 implements Serializable { int v; K5(int v) { this.v = v; } K5() {} }
    public static class K6 implements Serializable { int v; K6(int v) { this.v = v; } K6() {} }
    public static class K7 implements Serializable { int v; K7(int v) { this.v = v; } K7() {} }
    public static class K8 implements Serializable { int v; K8(int v) { this.v = v; } K8() {} }
    public static class K9 implements Serializable { int v; K9(int v) { this.v = v; } K9() {} }
    public static class K10 implements Serializable { int v; K10(int v) { this.v = v; } K10() {} }
    public static class K11 implements Serializable { int v; K11(int v) { this.v = v; } K11() {} }
    public static class K12 implements Serializable { int v; K12(int v) { this.v = v; } K12() {} }
    public static class K13 implements Serializable { int v; K13(int v) { this.v = v; } K13() {} }
    public static class K14 implements Serializable { int v; K14(int v) { this.v = v; } K14() {} }
    public static class K15 implements Serializable { int v; K15(int v) { this.v = v; } K15() {} }
    public static class K16 implements Serializable { int v; K16(int v) { this.v = v; } K16() {} }

    // ---- the table ----------------------------------------------------------

    private static final List<Case> ALL = new ArrayList<>();

    private static Case add(String name, Object written) {
        return add(name, written, written);
    }

    private static Case add(String name, Object written, Object decoded) {
        Case c = new Case(name, new Object[] {written}, new Object[] {decoded});
        ALL.add(c);
        return c;
    }

    private static void widened(String name, Object written) {
        Case c = add(name, written);
        c.widened = true;
        c.note = "Caucho sends java.lang.Short/Byte/Float as a com.caucho.hessian.io.*Handle object;"
                + " hessian-lite sends an int, or a double parsed from Float.toString";
    }

    /** The values Java should read back for this case with this implementation. */
    static Object[] decoded(Case c, Impl impl) {
        if (!c.widened) {
            return c.decoded;
        }
        Object[] out = new Object[c.written.length];
        for (int i = 0; i < out.length; i++) {
            out[i] = impl.widen(c.written[i]);
        }
        return out;
    }

    private static Case stream(String name, Object... values) {
        Case c = new Case(name, values, values);
        ALL.add(c);
        return c;
    }

    static List<Case> all() {
        if (!ALL.isEmpty()) {
            return ALL;
        }
        // null and booleans
        add("null", null);
        add("true", Boolean.TRUE);
        add("false", Boolean.FALSE);

        // int: each compact range's edges and the values just outside
        int[] ints = {0, 1, -1, -16, 47, -17, 48, -2048, 2047, -2049, 2048, -262144, 262143,
                -262145, 262144, Integer.MIN_VALUE, Integer.MAX_VALUE, 1_000_000};
        for (int v : ints) {
            add("int_" + signed(v), v);
        }
        widened("short_1000", (short) 1000);
        widened("byte_-5", (byte) -5);

        // long
        long[] longs = {0, 1, -8, 15, -9, 16, -2048, 2047, -2049, 2048, -262144, 262143, -262145,
                262144, Integer.MIN_VALUE, Integer.MAX_VALUE, Integer.MIN_VALUE - 1L,
                Integer.MAX_VALUE + 1L, Long.MIN_VALUE, Long.MAX_VALUE, 10_000_000_001L};
        for (long v : longs) {
            add("long_" + signed(v), v);
        }

        // double
        double[] doubles = {0.0, 1.0, -1.0, 2.0, 127.0, -128.0, 128.0, -129.0, 32767.0, -32768.0,
                32768.0, -32769.0, 65536.0, 12.25, 0.001, -0.5, 100.75, 100.25, 3.14159, 0.1,
                2147483.647, 2147483.648, -2147483.648, 1e9, 1e300, -1e300, 1e-300,
                Double.MIN_VALUE, Double.MAX_VALUE, Double.POSITIVE_INFINITY,
                Double.NEGATIVE_INFINITY, Double.NaN};
        for (double v : doubles) {
            add("double_" + doubleName(v), v);
        }
        add("double_neg_zero", -0.0, 0.0).note = "(int) -0.0 == -0.0, so Java writes the 0.0 byte";
        widened("float_12.25", 12.25f);
        widened("float_0.1", 0.1f);

        // date
        long[] dates = {0L, 1_435_708_800_000L, 1_435_708_800_001L, -60_000L, -1L,
                60_000L * (1L << 31), 60_000L * ((1L << 31) - 1), Long.MAX_VALUE};
        String[] dateNames = {"epoch", "minute", "millis", "neg_minute", "neg_millis",
                "minute_overflow", "minute_max", "max"};
        for (int i = 0; i < dates.length; i++) {
            add("date_" + dateNames[i], new Date(dates[i]));
        }

        // string
        int[] stringLens = {0, 1, 31, 32, 1023, 1024, 4096, 0x8000, 0x8001, 0x10000};
        for (int n : stringLens) {
            add("string_ascii_" + n, ContractPayloads.asciiText(n));
        }
        add("string_ascii_100k", ContractPayloads.asciiText(100 * 1024));
        add("string_ascii_1m", ContractPayloads.asciiText(1024 * 1024)).cauchoOnly = true;
        add("string_latin1", "h\u00e9llo w\u00f6rld \u00fc\u00df");
        add("string_cjk", "\u65e5\u672c\u8a9e\u306e\u30c6\u30ad\u30b9\u30c8");
        add("string_2byte_1023", repeat("\u00e9", 1023));
        add("string_3byte_1024", repeat("\u20ac", 1024));
        add("string_nul", "a\u0000b");
        add("string_emoji", "\ud83d\ude00");
        add("string_supplementary_mixed", "a\ud83d\ude00b\ud800\udc00c\udbff\udfff\u00e9\u20ac");
        add("string_supplementary_31", repeat("\ud83d\ude00", 15) + "x");
        add("string_supplementary_32", repeat("\ud83d\ude00", 16));
        add("string_supplementary_chunk_edge", repeat("a", 0x7fff) + "\ud83d\ude00" + repeat("b", 10))
                .note = "a surrogate pair straddles the 0x8000 chunk boundary: Java shortens the chunk to 0x7fff";
        add("string_supplementary_chunk_edge2", repeat("a", 0x7ffe) + "\ud83d\ude00" + repeat("b", 10))
                .note = "a surrogate pair ends exactly at the 0x8000 chunk boundary";
        add("string_supplementary_1k", repeat("\ud83d\ude00\u00e9x", 300))
                .note = "1200 UTF-16 units, 2700 bytes: the 'S' form with supplementary characters";
        Case lone = add("string_lone_surrogate", "a\ud800b");
        lone.rustValueJson = "{\"string\":\"a\\ufffdb\"}";
        lone.rustWrites = false;
        lone.note = "a Rust String cannot hold a lone surrogate: the decoder substitutes U+FFFD";
        add("char_x", 'x', "x").note = "java.lang.Character is written as a one-char string";

        // binary
        int[] binLens = {0, 1, 15, 16, 1023, 1024, 4093, 4094, 8189, 8190, 0x8001};
        for (int n : binLens) {
            add("binary_" + n, pattern(n));
        }

        // lists
        add("list_empty", new ArrayList<>());
        add("list_int_3", new ArrayList<>(Arrays.asList(1, 2, 3)));
        add("list_int_7", new ArrayList<>(Arrays.asList(1, 2, 3, 4, 5, 6, 7)));
        add("list_int_8", new ArrayList<>(Arrays.asList(1, 2, 3, 4, 5, 6, 7, 8)));
        List<Object> ints100 = new ArrayList<>();
        for (int i = 0; i < 100; i++) {
            ints100.add(i * 1000);
        }
        add("list_int_100", ints100);
        add("list_mixed", new ArrayList<>(Arrays.asList(1, "two", null, 3.5, 4L, true, new Date(60_000L))));
        add("list_nested", new ArrayList<>(Arrays.asList(
                new ArrayList<>(Arrays.asList(1, 2)), new ArrayList<>(), new ArrayList<>(Arrays.asList("x")))));
        add("linked_list", new LinkedList<>(Arrays.asList(1, 2, 3)));
        add("linked_list_2", new ArrayList<>(Arrays.asList(
                new LinkedList<>(Arrays.asList(1)), new LinkedList<>(Arrays.asList(2)))))
                .note = "the second list's type is a type reference (an int)";
        add("int_array_empty", new int[0]);
        add("int_array_3", new int[] {1, -1, 100000});
        add("int_array_8", new int[] {1, 2, 3, 4, 5, 6, 7, 8});
        add("long_array", new long[] {1L, -1L, Long.MAX_VALUE});
        add("double_array", new double[] {0.0, 1.5, -2.0});
        add("boolean_array", new boolean[] {true, false});
        add("string_array", new String[] {"a", "bc", null});
        add("object_array", new Object[] {1, "x", null});
        add("int_arrays_2", new ArrayList<>(Arrays.asList(new int[] {1}, new int[] {2})))
                .note = "the second array's type \"[int\" is a type reference";

        // maps
        add("map_empty", new HashMap<>());
        Map<String, Object> m = new HashMap<>();
        m.put("a", 1);
        m.put("b", "two");
        m.put("c", null);
        add("map_string_keys", m);
        Map<Integer, String> mi = new HashMap<>();
        mi.put(1, "one");
        mi.put(2, "two");
        mi.put(-300, "minus");
        add("map_int_keys", mi);
        Map<String, Integer> tm = new TreeMap<>();
        tm.put("x", 1);
        tm.put("y", 2);
        add("map_tree", tm);
        Map<String, Integer> lhm = new LinkedHashMap<>();
        lhm.put("z", 26);
        lhm.put("a", 1);
        add("map_linked", lhm);
        Map<String, Object> nested = new HashMap<>();
        nested.put("list", new ArrayList<>(Arrays.asList(1, 2)));
        nested.put("map", new HashMap<>(Map.of("k", "v")));
        add("map_nested", nested);

        // objects
        add("order", Order.sample(1));
        add("order_0", Order.sample(0));
        add("order_nulls", new Order(-1L, null, null, "", 0, 0, 0.0, 0));
        List<Order> orders = new ArrayList<>();
        for (int i = 0; i < 100; i++) {
            orders.add(Order.sample(i));
        }
        add("orders_100", orders);
        Mixed mixed = new Mixed();
        mixed.tags = new ArrayList<>(Arrays.asList("t1", "t2"));
        mixed.a = 42;
        mixed.s = "mixed";
        mixed.child = Order.sample(2);
        mixed.b = -5_000_000_000L;
        mixed.boxed = null;
        mixed.data = pattern(20);
        mixed.when = new Date(1_435_708_800_000L);
        mixed.attrs = new HashMap<>(Map.of("k", 1));
        mixed.d = 2.5;
        mixed.flag = true;
        add("object_mixed", mixed);
        Derived derived = new Derived();
        derived.baseId = 1;
        derived.baseName = "base";
        derived.derivedId = 2;
        derived.items = new ArrayList<>(Arrays.asList(3));
        add("object_derived", derived);
        add("objects_17_classes", new ArrayList<>(Arrays.asList(
                new K0(0), new K1(1), new K2(2), new K3(3), new K4(4), new K5(5), new K6(6), new K7(7),
                new K8(8), new K9(9), new K10(10), new K11(11), new K12(12), new K13(13), new K14(14),
                new K15(15), new K16(16), new K16(17), new K0(18))))
                .note = "class references 0..15 use 0x60-0x6f, the 17th uses 'O' with an int";

        // shared and cyclic references
        Order shared = Order.sample(7);
        add("ref_same_order_twice", new ArrayList<>(Arrays.asList(shared, shared)));
        List<Object> sharedList = new ArrayList<>(Arrays.asList(1, 2));
        add("ref_same_list_twice", new ArrayList<>(Arrays.asList(sharedList, sharedList, sharedList)));
        Map<String, Object> sharedMap = new HashMap<>(Map.of("k", "v"));
        Map<String, Object> holder = new LinkedHashMap<>();
        holder.put("first", sharedMap);
        holder.put("second", sharedMap);
        add("ref_same_map_twice", holder);
        Node self = new Node("self");
        self.next = self;
        add("ref_cycle_self", self);
        Node a = new Node("a");
        Node b = new Node("b");
        a.next = b;
        b.next = a;
        add("ref_cycle_two", a);
        List<Object> selfList = new ArrayList<>();
        selfList.add("head");
        selfList.add(selfList);
        add("ref_cycle_list", selfList);
        Node dagTail = new Node("tail");
        Node d1 = new Node("d1");
        d1.next = dagTail;
        Node d2 = new Node("d2");
        d2.next = dagTail;
        add("ref_dag", new ArrayList<>(Arrays.asList(d1, d2, dagTail)));

        // several values in one stream share class definitions and references
        stream("stream_two_orders", Order.sample(3), Order.sample(4));
        stream("stream_mixed", "hello", 1, Order.sample(5), new ArrayList<>(Arrays.asList(Order.sample(6))),
                Order.sample(5));
        Order again = Order.sample(8);
        stream("stream_ref_across_values", again, again)
                .note = "Hessian2Output keeps references across writeObject calls";
        return ALL;
    }

    /** Every case by its name, in the table's order. */
    static Map<String, Case> byName() {
        Map<String, Case> cases = new LinkedHashMap<>();
        for (Case c : all()) {
            cases.put(c.name, c);
        }
        return cases;
    }

    private static String signed(long v) {
        if (v == Integer.MIN_VALUE) return "min";
        if (v == Integer.MAX_VALUE) return "max";
        if (v == Long.MIN_VALUE) return "lmin";
        if (v == Long.MAX_VALUE) return "lmax";
        if (v == Integer.MIN_VALUE - 1L) return "min-1";
        if (v == Integer.MAX_VALUE + 1L) return "max+1";
        return Long.toString(v);
    }

    private static String doubleName(double v) {
        if (Double.isNaN(v)) return "nan";
        if (v == Double.POSITIVE_INFINITY) return "inf";
        if (v == Double.NEGATIVE_INFINITY) return "-inf";
        if (v == Double.MIN_VALUE) return "min_positive";
        if (v == Double.MAX_VALUE) return "max";
        return Double.toString(v);
    }
}
