package rpclab.golden;

import java.io.ByteArrayInputStream;
import java.nio.file.Path;
import java.util.AbstractMap;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;

import com.esotericsoftware.kryo.io.Input;

import rpclab.shared.GoldenVerify;

/** Reads every <dir>/<case>.bin, or <dir>/<tag>~<case>.bin (written by the Rust crate) with
 *  Dubbo's KryoObjectInput and compares it with the case; prints "N passed, M failed" and
 *  exits 1 on any failure. */
public final class Verify {
    private Verify() {}

    static boolean same(Object want, Object got) {
        if (want instanceof Throwable w) {
            return got instanceof Throwable g && w.getClass() == g.getClass()
                && Objects.equals(w.getMessage(), g.getMessage())
                && same(w.getCause() == w ? null : w.getCause(), g.getCause() == g ? null : g.getCause());
        }
        if (want instanceof byte[] w) return got instanceof byte[] g && Arrays.equals(w, g);
        if (want instanceof Float w) return got instanceof Float g && Float.compare(w, g) == 0;
        if (want instanceof Double w) return got instanceof Double g && Double.compare(w, g) == 0;
        return Objects.equals(want, got) && (want == null || want.getClass() == got.getClass());
    }

    static void check(List<Cases.Step> steps, byte[] bytes, boolean raw) throws Exception {
        ByteArrayInputStream bis = new ByteArrayInputStream(bytes);
        if (raw) {
            Input in = new Input(bis);
            for (Cases.Step s : steps) {
                Object got = switch (s.kind()) {
                    case "varint+" -> in.readVarInt(true);
                    case "varint-" -> in.readVarInt(false);
                    case "varlong+" -> in.readVarLong(true);
                    case "varlong-" -> in.readVarLong(false);
                    default -> throw new IllegalArgumentException(s.kind());
                };
                if (!same(s.value(), got)) throw new AssertionError(s + ": read " + got);
            }
            if (in.position() != in.limit() || bis.available() != 0) throw new AssertionError("bytes left after the last step");
            return;
        }
        In in = DubboKryo.input(bis);
        for (Cases.Step s : steps) {
            Object got = switch (s.kind()) {
                case "bool" -> in.readBool();
                case "byte" -> in.readByte();
                case "short" -> in.readShort();
                case "int" -> in.readInt();
                case "long" -> in.readLong();
                case "float" -> in.readFloat();
                case "double" -> in.readDouble();
                case "bytes" -> in.readBytes();
                case "utf" -> in.readUTF();
                case "object" -> in.readObject();
                default -> throw new IllegalArgumentException(s.kind());
            };
            if (!same(s.value(), got)) throw new AssertionError(s.kind() + " " + s.value() + ": read " + got);
        }
    }

    /** The case a file is of: {@code <case>.bin}, or {@code <tag>~<case>.bin} when one folder
     *  holds several writings of the cases (one JVM reads them all). */
    static String caseOf(String name) {
        return name.substring(name.indexOf('~') + 1);
    }

    public static void main(String[] args) throws Exception {
        Map<String, List<Cases.Step>> cases = Cases.all();
        Map<String, List<Cases.Step>> byFile = new AbstractMap<>() {
            @Override
            public Set<Map.Entry<String, List<Cases.Step>>> entrySet() {
                return cases.entrySet();
            }

            @Override
            public List<Cases.Step> get(Object name) {
                return cases.get(caseOf((String) name));
            }
        };
        GoldenVerify.run(DubboKryo.NAME + ": ", Path.of(args[0]), byFile, (name, steps, bytes) -> {
            check(steps, bytes, caseOf(name).startsWith("raw_"));
            return null;
        });
    }
}
