package rpclab.golden;

import java.lang.reflect.Array;
import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.Date;
import java.util.HashMap;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;

import rpclab.shared.ContractPayloads;

/**
 * Describes a Java object graph as the Hessian 2.0 value tree the Rust crate
 * decodes it to (references kept as {"ref": n}), in the manifest's JSON form:
 *
 * <pre>
 *   null | true | false
 *   {"int": n}   {"long": "n"}   {"double": "0x&lt;IEEE bits&gt;", "approx": "..."}
 *   {"date": "millis"}
 *   {"string": "..."}            {"string_gen": {"ascii_text": n}}
 *   {"binary": "hex"}            {"binary_gen": {"pattern": n}}
 *   {"list": [...], "type": null | "..."}
 *   {"map": [[k, v], ...], "type": null | "..."}
 *   {"object": "class", "fields": [["name", v], ...]}
 *   {"ref": n}
 * </pre>
 *
 * The rules mirror the Java serializers (which type names they send, which
 * values take a reference slot, in which order fields go), independently of
 * any Hessian code, so that a disagreement shows up as a failing Rust test.
 */
final class Describe {
    private final Impl impl;
    private final IdentityHashMap<Object, Integer> refs = new IdentityHashMap<>();
    private final StringBuilder out = new StringBuilder();

    private Describe(Impl impl) {
        this.impl = impl;
    }

    /** Describes a sequence of values written to one stream (references are shared). */
    static String values(Impl impl, Object[] values) {
        Describe d = new Describe(impl);
        d.out.append('[');
        for (int i = 0; i < values.length; i++) {
            if (i > 0) {
                d.out.append(',');
            }
            d.value(values[i]);
        }
        d.out.append(']');
        return d.out.toString();
    }

    /** Serializable fields in the serializer's order. */
    static List<Field> fields(Class<?> cl, boolean reverse) {
        List<Field> primitive = new ArrayList<>();
        List<Field> compound = new ArrayList<>();
        for (; cl != null; cl = cl.getSuperclass()) {
            for (Field f : cl.getDeclaredFields()) {
                int mod = f.getModifiers();
                if (Modifier.isStatic(mod) || Modifier.isTransient(mod)) {
                    continue;
                }
                f.setAccessible(true);
                Class<?> t = f.getType();
                if (t.isPrimitive() || (t.getName().startsWith("java.lang.") && !t.equals(Object.class))) {
                    primitive.add(f);
                } else {
                    compound.add(f);
                }
            }
        }
        List<Field> all = new ArrayList<>(primitive);
        all.addAll(compound);
        if (reverse) {
            Collections.reverse(all);
        }
        return all;
    }

    private boolean seen(Object o) {
        Integer r = refs.get(o);
        if (r != null) {
            out.append("{\"ref\":").append(r).append('}');
            return true;
        }
        refs.put(o, refs.size());
        return false;
    }

    private void value(Object v) {
        if (v == null) {
            out.append("null");
        } else if (v instanceof Boolean) {
            out.append(v.toString());
        } else if (impl.handleClass(v) != null) {
            // Caucho's com.caucho.hessian.io.{Short,Byte,Float}Handle: an object with one field
            refs.put(new Object(), refs.size());
            out.append("{\"object\":");
            string0(impl.handleClass(v));
            out.append(",\"fields\":[[\"_value\",");
            value(v instanceof Float ? (Object) ((Float) v).doubleValue() : (Object) ((Number) v).intValue());
            out.append("]]}");
        } else if (v instanceof Integer || v instanceof Short || v instanceof Byte) {
            out.append("{\"int\":").append(((Number) v).intValue()).append('}');
        } else if (v instanceof Long) {
            out.append("{\"long\":\"").append(v).append("\"}");
        } else if (v instanceof Double || v instanceof Float) {
            double d = ((Number) v).doubleValue();
            out.append("{\"double\":\"0x").append(String.format("%016x", Double.doubleToRawLongBits(d)))
                    .append("\",\"approx\":\"").append(d).append("\"}");
        } else if (v instanceof Date) {
            out.append("{\"date\":\"").append(((Date) v).getTime()).append("\"}");
        } else if (v instanceof String || v instanceof Character) {
            string(v.toString());
        } else if (v instanceof byte[]) {
            binary((byte[]) v);
        } else if (v.getClass().isArray()) {
            List<Object> items = new ArrayList<>();
            for (int i = 0; i < Array.getLength(v); i++) {
                items.add(Array.get(v, i));
            }
            container(v, "list", items, this::value, arrayType(v.getClass()));
        } else if (v instanceof Collection) {
            container(v, "list", (Collection<?>) v, this::value, impl.collectionType(v.getClass()));
        } else if (v instanceof Map) {
            String type = v.getClass().equals(HashMap.class) ? null : v.getClass().getName();
            container(v, "map", ((Map<?, ?>) v).entrySet(), e -> pair(() -> value(e.getKey()), e.getValue()), type);
        } else {
            if (seen(v)) {
                return;
            }
            out.append("{\"object\":");
            string0(v.getClass().getName());
            out.append(",\"fields\":[");
            separated(fields(v.getClass(), impl.reversesFields()), f -> pair(() -> string0(f.getName()), fieldValue(f, v)));
            out.append("]}");
        }
    }

    /**
     * A list or a map ({@code kind}) not seen before: {@code {"<kind>":[<items>],"type":<type>}},
     * each item written by {@code item}, the type null when there is none.
     */
    private <T> void container(Object v, String kind, Iterable<T> items, Consumer<T> item, String type) {
        if (seen(v)) {
            return;
        }
        out.append("{\"").append(kind).append("\":[");
        separated(items, item);
        out.append("],\"type\":");
        if (type == null) {
            out.append("null");
        } else {
            string0(type);
        }
        out.append('}');
    }

    /** The items, each written by {@code item}, separated by commas. */
    private <T> void separated(Iterable<T> items, Consumer<T> item) {
        boolean first = true;
        for (T t : items) {
            if (!first) {
                out.append(',');
            }
            first = false;
            item.accept(t);
        }
    }

    /** A map's entry or an object's field: {@code [<key>,<value>]}, the key written by {@code key}. */
    private void pair(Runnable key, Object value) {
        out.append('[');
        key.run();
        out.append(',');
        value(value);
        out.append(']');
    }

    private static Object fieldValue(Field f, Object v) {
        try {
            return f.get(v);
        } catch (IllegalAccessException e) {
            throw new IllegalStateException(e);
        }
    }

    static String arrayType(Class<?> cl) {
        if (cl.isArray()) {
            return "[" + arrayType(cl.getComponentType());
        }
        switch (cl.getName()) {
            case "java.lang.String":
                return "string";
            case "java.lang.Object":
                return "object";
            case "java.util.Date":
                return "date";
            default:
                return cl.getName();
        }
    }

    private void string(String s) {
        if (s.length() > 4096) {
            if (s.equals(ContractPayloads.asciiText(s.length()))) {
                out.append("{\"string_gen\":{\"ascii_text\":").append(s.length()).append("}}");
                return;
            }
            // runs of one repeated unit of up to 4 chars, e.g. "aaaa...<emoji>bbbb"
            List<String> runs = runs(s);
            if (runs != null) {
                out.append("{\"string_concat\":[");
                for (int i = 0; i < runs.size(); i += 2) {
                    if (i > 0) {
                        out.append(',');
                    }
                    out.append("{\"string_gen\":{\"repeat\":");
                    string0(runs.get(i));
                    out.append(",\"count\":").append(runs.get(i + 1)).append("}}");
                }
                out.append("]}");
                return;
            }
        }
        out.append("{\"string\":");
        string0(s);
        out.append('}');
    }

    /** The string as (unit, count) pairs with at most 8 pairs, or null. */
    private static List<String> runs(String s) {
        List<String> runs = new ArrayList<>();
        int i = 0;
        while (i < s.length()) {
            if (runs.size() >= 16) {
                return null;
            }
            int best = 1;
            int bestCount = 1;
            for (int unit = 1; unit <= 4 && i + unit <= s.length(); unit++) {
                String u = s.substring(i, i + unit);
                int count = 1;
                while (s.startsWith(u, i + count * unit)) {
                    count++;
                }
                if (count * unit > best * bestCount) {
                    best = unit;
                    bestCount = count;
                }
            }
            runs.add(s.substring(i, i + best));
            runs.add(Integer.toString(bestCount));
            i += best * bestCount;
        }
        return runs;
    }

    private void binary(byte[] b) {
        if (b.length > 64 && java.util.Arrays.equals(b, Cases.pattern(b.length))) {
            out.append("{\"binary_gen\":{\"pattern\":").append(b.length).append("}}");
            return;
        }
        out.append("{\"binary\":\"");
        for (byte x : b) {
            out.append(String.format("%02x", x & 0xff));
        }
        out.append("\"}");
    }

    /** A JSON string literal, pure ASCII (everything else as UTF-16 \\u escapes). */
    static String quote(String s) {
        StringBuilder sb = new StringBuilder(s.length() + 2);
        quote(sb, s);
        return sb.toString();
    }

    private void string0(String s) {
        quote(out, s);
    }

    private static void quote(StringBuilder sb, String s) {
        sb.append('"');
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c == '"' || c == '\\') {
                sb.append('\\').append(c);
            } else if (c < 0x20 || c > 0x7e) {
                sb.append(String.format("\\u%04x", (int) c));
            } else {
                sb.append(c);
            }
        }
        sb.append('"');
    }
}
