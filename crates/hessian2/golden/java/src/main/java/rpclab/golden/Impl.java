package rpclab.golden;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.util.Properties;

/** One real Java Hessian 2.0 implementation: Caucho's or one of the hessian-lite forks. */
abstract class Impl {
    /** Directory name under golden/vectors. */
    abstract String name();

    /** Maven coordinates of the library actually on the class path. */
    abstract String artifact();

    /**
     * Whether the object serializer writes fields in reverse order. Both
     * serializers collect fields as (primitive and java.lang.* fields) then
     * (other fields), walking from the class up to its superclasses; the
     * hessian-lite forks then reverse that list.
     */
    abstract boolean reversesFields();

    /**
     * The type name the collection serializer sends for a collection class:
     * Caucho and org.apache.dubbo's hessian-lite send none for ArrayList,
     * com.alibaba's hessian-lite 3.x always sends the class name.
     */
    String collectionType(Class<?> cl) {
        return cl.equals(java.util.ArrayList.class) ? null : cl.getName();
    }

    /** What this implementation reads back for a java.lang.Short, Byte or Float it wrote. */
    abstract Object widen(Object written);

    /**
     * The class of the handle object this implementation sends for a
     * java.lang.Short, Byte or Float, or null when it sends a plain value.
     */
    abstract String handleClass(Object v);

    /** Writes all values with one Hessian2Output (shared class definitions and references). */
    abstract byte[] encode(Object[] values) throws IOException;

    /** Reads count values with one Hessian2Input. */
    abstract Object[] decode(byte[] bytes, int count) throws IOException;

    /**
     * The implementation {@code args[0]} names, for a {@code program} that
     * takes it and a folder ({@code dir} in the usage); exits with status 2
     * and the usage when the arguments are not two.
     */
    static Impl fromArgs(String program, String dir, String[] args) {
        if (args.length != 2) {
            System.err.println("usage: " + program + " caucho|lite " + dir);
            System.exit(2);
        }
        return named(args[0]);
    }

    static Impl named(String name) {
        switch (name) {
            case "caucho":
                return new Caucho();
            case "lite":
                return new Lite();
            default:
                throw new IllegalArgumentException("unknown implementation `" + name + "` (caucho | lite)");
        }
    }

    static String version(String group, String artifact) {
        String path = "/META-INF/maven/" + group + "/" + artifact + "/pom.properties";
        try (InputStream in = Impl.class.getResourceAsStream(path)) {
            if (in == null) {
                return null;
            }
            Properties p = new Properties();
            p.load(in);
            return p.getProperty("version");
        } catch (IOException e) {
            return null;
        }
    }

    static final class Caucho extends Impl {
        String name() {
            return "caucho";
        }

        String artifact() {
            // the jar has no pom.properties (and a stale Implementation-Version): the pom passes it
            return "com.caucho:hessian:" + System.getProperty("golden.caucho.version", "?");
        }

        boolean reversesFields() {
            return false;
        }

        Object widen(Object written) {
            return written; // the handle's readResolve gives back the boxed type
        }

        String handleClass(Object v) {
            if (v instanceof Short) return "com.caucho.hessian.io.ShortHandle";
            if (v instanceof Byte) return "com.caucho.hessian.io.ByteHandle";
            if (v instanceof Float) return "com.caucho.hessian.io.FloatHandle";
            return null;
        }

        byte[] encode(Object[] values) throws IOException {
            ByteArrayOutputStream bos = new ByteArrayOutputStream();
            com.caucho.hessian.io.Hessian2Output out = new com.caucho.hessian.io.Hessian2Output(bos);
            for (Object v : values) {
                out.writeObject(v);
            }
            out.flush();
            return bos.toByteArray();
        }

        Object[] decode(byte[] bytes, int count) throws IOException {
            com.caucho.hessian.io.Hessian2Input in =
                    new com.caucho.hessian.io.Hessian2Input(new ByteArrayInputStream(bytes));
            Object[] out = new Object[count];
            for (int i = 0; i < count; i++) {
                out[i] = in.readObject();
            }
            return out;
        }
    }

    /** org.apache.dubbo:hessian-lite or com.alibaba:hessian-lite, whichever the Maven profile put on the class path. */
    static final class Lite extends Impl {
        private final String group;
        private final String version;

        Lite() {
            String v = version("org.apache.dubbo", "hessian-lite");
            if (v != null) {
                group = "org.apache.dubbo";
                version = v;
            } else {
                group = "com.alibaba";
                String a = version("com.alibaba", "hessian-lite");
                version = a == null ? "?" : a;
            }
        }

        String name() {
            return group.equals("org.apache.dubbo") ? "dubbo-lite" : "alibaba-lite";
        }

        String artifact() {
            return group + ":hessian-lite:" + version;
        }

        boolean reversesFields() {
            return true;
        }

        Object widen(Object written) {
            if (written instanceof Short || written instanceof Byte) {
                return ((Number) written).intValue();
            }
            if (written instanceof Float) {
                return Double.parseDouble(String.valueOf(written));
            }
            return written;
        }

        String handleClass(Object v) {
            return null;
        }

        @Override
        String collectionType(Class<?> cl) {
            return group.equals("com.alibaba") ? cl.getName() : super.collectionType(cl);
        }

        byte[] encode(Object[] values) throws IOException {
            ByteArrayOutputStream bos = new ByteArrayOutputStream();
            com.alibaba.com.caucho.hessian.io.Hessian2Output out =
                    new com.alibaba.com.caucho.hessian.io.Hessian2Output(bos);
            for (Object v : values) {
                out.writeObject(v);
            }
            out.flush();
            return bos.toByteArray();
        }

        Object[] decode(byte[] bytes, int count) throws IOException {
            com.alibaba.com.caucho.hessian.io.Hessian2Input in =
                    new com.alibaba.com.caucho.hessian.io.Hessian2Input(new ByteArrayInputStream(bytes));
            Object[] out = new Object[count];
            for (int i = 0; i < count; i++) {
                out[i] = in.readObject();
            }
            return out;
        }
    }
}
