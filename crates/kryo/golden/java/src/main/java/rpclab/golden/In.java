package rpclab.golden;

import java.io.IOException;

/** Dubbo's ObjectInput, the same in both Dubbo lines (com.alibaba and org.apache). */
interface In {
    boolean readBool() throws IOException;
    byte readByte() throws IOException;
    short readShort() throws IOException;
    int readInt() throws IOException;
    long readLong() throws IOException;
    float readFloat() throws IOException;
    double readDouble() throws IOException;
    byte[] readBytes() throws IOException;
    String readUTF() throws IOException;
    Object readObject() throws IOException, ClassNotFoundException;
}
