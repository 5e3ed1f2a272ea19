package rpclab.golden;

import java.lang.reflect.Array;
import java.lang.reflect.Field;
import java.util.Collection;
import java.util.IdentityHashMap;
import java.util.Iterator;
import java.util.Map;

/**
 * Structural equality of two Java object graphs that also requires the same
 * sharing: wherever the expected graph reaches one object twice (a shared or
 * cyclic reference), the actual graph must reach one object twice too.
 */
final class DeepEquals {
    private final IdentityHashMap<Object, Object> pairs = new IdentityHashMap<>();
    private String difference;

    /** Null when equal, else a description of the first difference. */
    static String diff(Object expected, Object actual) {
        DeepEquals d = new DeepEquals();
        return d.eq(expected, actual, "$") ? null : d.difference;
    }

    private boolean fail(String path, String what) {
        if (difference == null) {
            difference = path + ": " + what;
        }
        return false;
    }

    private static String show(Object o) {
        if (o == null) {
            return "null";
        }
        String s = String.valueOf(o);
        if (s.length() > 80) {
            s = s.substring(0, 80) + "...";
        }
        return o.getClass().getName() + " " + s;
    }

    private boolean eq(Object e, Object a, String path) {
        if (e == null || a == null) {
            return e == a || fail(path, "expected " + show(e) + ", got " + show(a));
        }
        if (!e.getClass().equals(a.getClass())) {
            return fail(path, "expected class " + e.getClass().getName() + ", got " + show(a));
        }
        if (e instanceof Double) {
            return Double.doubleToLongBits((Double) e) == Double.doubleToLongBits((Double) a)
                    || fail(path, "expected " + e + ", got " + a);
        }
        if (e instanceof Number || e instanceof String || e instanceof Boolean
                || e instanceof Character || e instanceof java.util.Date) {
            return e.equals(a) || fail(path, "expected " + show(e) + ", got " + show(a));
        }
        if (e instanceof byte[]) {
            return java.util.Arrays.equals((byte[]) e, (byte[]) a)
                    || fail(path, "byte arrays differ (lengths " + ((byte[]) e).length + ", "
                    + ((byte[]) a).length + ")");
        }
        // containers and objects: identity structure must match
        if (pairs.containsKey(e)) {
            return pairs.get(e) == a || fail(path, "expected a reference to an earlier object");
        }
        pairs.put(e, a);
        if (e.getClass().isArray()) {
            int n = Array.getLength(e);
            if (n != Array.getLength(a)) {
                return fail(path, "array length " + n + " != " + Array.getLength(a));
            }
            for (int i = 0; i < n; i++) {
                if (!eq(Array.get(e, i), Array.get(a, i), path + "[" + i + "]")) {
                    return false;
                }
            }
            return true;
        }
        if (e instanceof Collection) {
            Collection<?> ce = (Collection<?>) e;
            Collection<?> ca = (Collection<?>) a;
            if (ce.size() != ca.size()) {
                return fail(path, "size " + ce.size() + " != " + ca.size());
            }
            Iterator<?> ie = ce.iterator();
            Iterator<?> ia = ca.iterator();
            for (int i = 0; ie.hasNext(); i++) {
                if (!eq(ie.next(), ia.next(), path + "[" + i + "]")) {
                    return false;
                }
            }
            return true;
        }
        if (e instanceof Map) {
            Map<?, ?> me = (Map<?, ?>) e;
            Map<?, ?> ma = (Map<?, ?>) a;
            if (me.size() != ma.size()) {
                return fail(path, "size " + me.size() + " != " + ma.size());
            }
            for (Map.Entry<?, ?> en : me.entrySet()) {
                if (!ma.containsKey(en.getKey())) {
                    return fail(path, "missing key " + show(en.getKey()));
                }
                if (!eq(en.getValue(), ma.get(en.getKey()), path + "[" + en.getKey() + "]")) {
                    return false;
                }
            }
            return true;
        }
        for (Field f : Describe.fields(e.getClass(), false)) {
            try {
                if (!eq(f.get(e), f.get(a), path + "." + f.getName())) {
                    return false;
                }
            } catch (IllegalAccessException x) {
                throw new IllegalStateException(x);
            }
        }
        return true;
    }
}
