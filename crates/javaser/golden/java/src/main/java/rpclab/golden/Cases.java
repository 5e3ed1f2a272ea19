package rpclab.golden;

import java.io.IOException;
import java.io.ObjectInputStream;
import java.io.ObjectOutputStream;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

import rpclab.contract.Order;

/**
 * The golden cases: each is a sequence of steps, a primitive write
 * (writeInt, writeUTF, ...), an object write, or a reset. Generate replays
 * them on an ObjectOutputStream; Verify replays the matching reads on an
 * ObjectInputStream and compares.
 */
final class Cases {
    private Cases() {}

    /** An enum for the TC_ENUM case. */
    enum Color { RED, GREEN }

    /** A serializable base class with a field. */
    static class Base implements java.io.Serializable {
        private static final long serialVersionUID = 1L;
        int a;
        @Override public boolean equals(Object o) {
            return o != null && o.getClass() == getClass() && ((Base) o).a == a;
        }
        @Override public int hashCode() { return a; }
    }

    /**
     * A serializable invocation handler, for a dynamic proxy case (RMI stubs
     * are proxies: TC_PROXYCLASSDESC). Proxies of it are equal when their
     * tags are, so Verify can compare what it reads.
     */
    static final class Handler implements java.lang.reflect.InvocationHandler, java.io.Serializable {
        private static final long serialVersionUID = 3L;
        final String tag;
        Handler(String tag) { this.tag = tag; }
        @Override public Object invoke(Object proxy, java.lang.reflect.Method m, Object[] args) {
            return switch (m.getName()) {
                case "equals" -> args[0] != null && java.lang.reflect.Proxy.isProxyClass(args[0].getClass())
                        && java.lang.reflect.Proxy.getInvocationHandler(args[0]) instanceof Handler h
                        && h.tag.equals(tag);
                case "hashCode" -> tag.hashCode();
                case "toString" -> "Proxy[Runnable](" + tag + ")";
                default -> null;
            };
        }
    }

    static Object proxy(String tag) {
        return java.lang.reflect.Proxy.newProxyInstance(
                Cases.class.getClassLoader(), new Class<?>[] {Runnable.class}, new Handler(tag));
    }

    /** A subclass: class data of Base, then of Derived. */
    static final class Derived extends Base {
        private static final long serialVersionUID = 2L;
        String b;
        Derived(int a, String b) { this.a = a; this.b = b; }
        @Override public boolean equals(Object o) {
            return super.equals(o) && Objects.equals(((Derived) o).b, b);
        }
        @Override public int hashCode() { return a; }
    }

    /** One step of a case. */
    record Step(String kind, Object value) {}

    static Step prim(String kind, Object v) { return new Step(kind, v); }
    static Step obj(Object v) { return new Step("object", v); }
    static Step reset() { return new Step("reset", null); }

    static Order order(long id) {
        return new Order(id, "13800138000", "n\u00e4me-" + id, "ORD-" + id, 20240131, 2, 99.5 + id, 1);
    }

    static Map<String, List<Step>> all() {
        Map<String, List<Step>> m = new LinkedHashMap<>();
        m.put("header_only", List.of());
        m.put("prim_int", List.of(prim("int", 0x01020304)));
        m.put("prims", List.of(
            prim("boolean", true), prim("byte", (byte) -2), prim("short", (short) -12345),
            prim("char", '\u20ac'), prim("int", -7), prim("long", 0x0102030405060708L),
            prim("float", 1.5f), prim("double", -0.25), prim("utf", "h\u00e9llo \0 \u20ac \ud83d\ude00")));
        List<Step> longBlock = new ArrayList<>();
        for (int i = 0; i < 75; i++) longBlock.add(prim("int", i));
        m.put("block_long", longBlock);
        List<Step> split = new ArrayList<>();
        for (int i = 0; i < 500; i++) split.add(prim("int", i * 31));
        m.put("block_split", split);
        m.put("null", List.of(obj(null)));
        m.put("string_ascii", List.of(obj("hello")));
        m.put("string_empty", List.of(obj("")));
        m.put("string_mutf8", List.of(obj("a\0\u00e9\u20ac\ud83d\ude00")));
        String shared = new String("shared");
        m.put("string_shared", List.of(obj(shared), obj(shared)));
        m.put("long_string", List.of(obj("x".repeat(70000))));
        m.put("reset", List.of(obj("a"), reset(), obj("a")));
        m.put("mixed", List.of(prim("int", 1), obj("x"), prim("int", 2), prim("utf", "y")));
        m.put("integer", List.of(obj(Integer.valueOf(-123456))));
        m.put("long", List.of(obj(Long.valueOf(Long.MIN_VALUE))));
        m.put("double", List.of(obj(Double.valueOf(3.25))));
        m.put("boolean", List.of(obj(Boolean.TRUE)));
        m.put("integers_two", List.of(obj(Integer.valueOf(100000)), obj(Integer.valueOf(200000))));
        m.put("order", List.of(obj(order(1))));
        m.put("orders_two", List.of(obj(order(1)), obj(order(2))));
        m.put("array_list_strings", List.of(obj(new ArrayList<>(List.of("a", "b", "c")))));
        m.put("array_list_integers", List.of(obj(new ArrayList<>(List.of(100000, 200000)))));
        m.put("array_list_empty", List.of(obj(new ArrayList<>())));
        m.put("array_list_orders", List.of(obj(new ArrayList<>(List.of(order(1), order(2))))));
        HashMap<String, Integer> hm = new HashMap<>();
        hm.put("a", 100000);
        hm.put("b", 200000);
        m.put("hash_map", List.of(obj(hm)));
        HashMap<Integer, String> big = new HashMap<>();
        for (int i = 0; i < 13; i++) big.put(1000 + i, "v" + i);
        m.put("hash_map_13", List.of(obj(big)));
        ArrayList<Object> withNull = new ArrayList<>();
        withNull.add(null);
        withNull.add(Long.valueOf(5));
        withNull.add(Boolean.FALSE);
        withNull.add("s");
        m.put("array_list_mixed", List.of(obj(withNull)));
        m.put("hash_map_empty", List.of(obj(new HashMap<>())));
        m.put("int_array", List.of(obj(new int[] {1, -2, 0x7fffffff})));
        m.put("byte_array", List.of(obj(new byte[] {1, 2, (byte) 0xff})));
        m.put("string_array", List.of(obj(new String[] {"x", null, "y"})));
        m.put("derived", List.of(obj(new Derived(7, "seven"))));
        m.put("date", List.of(obj(new java.util.Date(1700000000123L))));
        m.put("class_string", List.of(obj(String.class)));
        m.put("enum", List.of(obj(Color.GREEN), obj(Color.GREEN)));
        m.put("proxy", List.of(obj(proxy("p"))));
        return m;
    }

    static void write(ObjectOutputStream out, List<Step> steps) throws IOException {
        for (Step s : steps) {
            switch (s.kind()) {
                case "boolean" -> out.writeBoolean((Boolean) s.value());
                case "byte" -> out.writeByte((Byte) s.value());
                case "short" -> out.writeShort((Short) s.value());
                case "char" -> out.writeChar((Character) s.value());
                case "int" -> out.writeInt((Integer) s.value());
                case "long" -> out.writeLong((Long) s.value());
                case "float" -> out.writeFloat((Float) s.value());
                case "double" -> out.writeDouble((Double) s.value());
                case "utf" -> out.writeUTF((String) s.value());
                case "object" -> out.writeObject(s.value());
                case "reset" -> out.reset();
                default -> throw new IllegalStateException(s.kind());
            }
        }
        out.flush();
    }

    /** Reads what write wrote and returns a description of the first mismatch, or null. */
    static String check(ObjectInputStream in, List<Step> steps) throws IOException, ClassNotFoundException {
        for (Step s : steps) {
            Object got;
            switch (s.kind()) {
                case "boolean" -> got = in.readBoolean();
                case "byte" -> got = in.readByte();
                case "short" -> got = in.readShort();
                case "char" -> got = in.readChar();
                case "int" -> got = in.readInt();
                case "long" -> got = in.readLong();
                case "float" -> got = in.readFloat();
                case "double" -> got = in.readDouble();
                case "utf" -> got = in.readUTF();
                case "object" -> got = in.readObject();
                case "reset" -> { continue; }
                default -> throw new IllegalStateException(s.kind());
            }
            if (!Objects.deepEquals(new Object[] {got}, new Object[] {s.value()})) {
                return s.kind() + ": expected " + show(s.value()) + ", got " + show(got);
            }
        }
        if (in.available() > 0 || in.read() != -1) {
            return "trailing data";
        }
        return null;
    }

    static String show(Object o) {
        if (o instanceof int[] a) return Arrays.toString(a);
        if (o instanceof byte[] a) return Arrays.toString(a);
        if (o instanceof Object[] a) return Arrays.deepToString(a);
        return String.valueOf(o);
    }
}
