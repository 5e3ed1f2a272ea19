package rpclab.golden;

import java.io.ByteArrayOutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

import com.esotericsoftware.kryo.Kryo;
import com.esotericsoftware.kryo.io.Output;

import rpclab.shared.GoldenVectors;

/** Writes every case with Dubbo's KryoObjectOutput to <dir>/<line>/<case>.bin, and the
 *  registration ids of the classes the Rust crate names to <dir>/<line>/ids.txt. */
public final class Generate {
    private Generate() {}

    static byte[] write(List<Cases.Step> steps, boolean raw) throws Exception {
        ByteArrayOutputStream bos = new ByteArrayOutputStream();
        if (raw) {
            Output o = new Output(bos);
            for (Cases.Step s : steps) {
                switch (s.kind()) {
                    case "varint+" -> o.writeVarInt((Integer) s.value(), true);
                    case "varint-" -> o.writeVarInt((Integer) s.value(), false);
                    case "varlong+" -> o.writeVarLong((Long) s.value(), true);
                    case "varlong-" -> o.writeVarLong((Long) s.value(), false);
                    default -> throw new IllegalArgumentException(s.kind());
                }
            }
            o.flush();
            return bos.toByteArray();
        }
        Out o = DubboKryo.output(bos);
        for (Cases.Step s : steps) {
            Object v = s.value();
            switch (s.kind()) {
                case "bool" -> o.writeBool((Boolean) v);
                case "byte" -> o.writeByte((Byte) v);
                case "short" -> o.writeShort((Short) v);
                case "int" -> o.writeInt((Integer) v);
                case "long" -> o.writeLong((Long) v);
                case "float" -> o.writeFloat((Float) v);
                case "double" -> o.writeDouble((Double) v);
                case "bytes" -> o.writeBytes((byte[]) v);
                case "utf" -> o.writeUTF((String) v);
                case "object" -> o.writeObject(v);
                default -> throw new IllegalArgumentException(s.kind());
            }
        }
        o.flushBuffer();
        return bos.toByteArray();
    }

    public static void main(String[] args) throws Exception {
        Path dir = Path.of(args[0]).resolve(DubboKryo.NAME);
        Map<String, List<Cases.Step>> cases = Cases.all();
        // 1 MiB per line is too much to check in; the Rust writer's 1 MiB string is
        // checked by Verify (tests/java_interop.rs) instead.
        cases.remove("utf_1m");
        int written = GoldenVectors.writeAll(dir, cases, (name, steps) -> write(steps, name.startsWith("raw_")));
        Kryo k = DubboKryo.kryo();
        StringBuilder ids = new StringBuilder();
        for (Class<?> c : new Class<?>[] {int.class, String.class, float.class, boolean.class, byte.class,
                char.class, short.class, long.class, double.class, java.util.HashMap.class,
                java.util.ArrayList.class, java.util.LinkedList.class, java.util.HashSet.class,
                java.util.Date.class, Object[].class, String[].class, byte[].class, int[].class,
                java.math.BigDecimal.class, java.math.BigInteger.class, java.util.UUID.class}) {
            ids.append(c.getName()).append(' ').append(k.getRegistration(c).getId()).append('\n');
        }
        Files.writeString(dir.resolve("ids.txt"), ids.toString());
        System.out.println(DubboKryo.NAME + ": " + written + " cases written to " + dir);
    }
}
