package rpclab.golden;

import java.io.IOException;

/** Dubbo's ObjectOutput, the same in both Dubbo lines (com.alibaba and org.apache). */
interface Out {
    void writeBool(boolean v) throws IOException;
    void writeByte(byte v) throws IOException;
    void writeShort(short v) throws IOException;
    void writeInt(int v) throws IOException;
    void writeLong(long v) throws IOException;
    void writeFloat(float v) throws IOException;
    void writeDouble(double v) throws IOException;
    void writeBytes(byte[] v) throws IOException;
    void writeUTF(String v) throws IOException;
    void writeObject(Object v) throws IOException;
    void flushBuffer() throws IOException;
}
