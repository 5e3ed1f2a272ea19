package rpclab.golden;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;

import com.esotericsoftware.kryo.Kryo;
import org.apache.dubbo.common.serialize.kryo.KryoObjectInput;
import org.apache.dubbo.common.serialize.kryo.KryoObjectOutput;

/** Dubbo's kryo serialization of this line (org.apache.dubbo:dubbo 3.3.6 + dubbo-serialization-kryo 3.2.0, Kryo 5.4). */
final class DubboKryo {
    private DubboKryo() {}

    /** The folder of golden/vectors this line writes. */
    static final String NAME = "kryo5";

    /** The Kryo instance Dubbo's ObjectOutput/ObjectInput use (its registrations). */
    static Kryo kryo() {
        return org.apache.dubbo.common.serialize.kryo.utils.KryoUtils.get();
    }

    static Out output(OutputStream os) {
        KryoObjectOutput o = new KryoObjectOutput(os);
        return new Out() {
            public void writeBool(boolean v) throws IOException { o.writeBool(v); }
            public void writeByte(byte v) throws IOException { o.writeByte(v); }
            public void writeShort(short v) throws IOException { o.writeShort(v); }
            public void writeInt(int v) throws IOException { o.writeInt(v); }
            public void writeLong(long v) throws IOException { o.writeLong(v); }
            public void writeFloat(float v) throws IOException { o.writeFloat(v); }
            public void writeDouble(double v) throws IOException { o.writeDouble(v); }
            public void writeBytes(byte[] v) throws IOException { o.writeBytes(v); }
            public void writeUTF(String v) throws IOException { o.writeUTF(v); }
            public void writeObject(Object v) throws IOException { o.writeObject(v); }
            public void flushBuffer() throws IOException { o.flushBuffer(); }
        };
    }

    static In input(InputStream is) {
        KryoObjectInput i = new KryoObjectInput(is);
        return new In() {
            public boolean readBool() throws IOException { return i.readBool(); }
            public byte readByte() throws IOException { return i.readByte(); }
            public short readShort() throws IOException { return i.readShort(); }
            public int readInt() throws IOException { return i.readInt(); }
            public long readLong() throws IOException { return i.readLong(); }
            public float readFloat() throws IOException { return i.readFloat(); }
            public double readDouble() throws IOException { return i.readDouble(); }
            public byte[] readBytes() throws IOException { return i.readBytes(); }
            public String readUTF() throws IOException { return i.readUTF(); }
            public Object readObject() throws IOException, ClassNotFoundException { return i.readObject(); }
        };
    }
}
