package rpclab.golden;

import java.io.InputStream;
import java.io.OutputStream;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;

import com.esotericsoftware.kryo.Kryo;

/**
 * Dubbo's kryo serialization of the line the Maven profile put on the
 * classpath: kryo4 (com.alibaba:dubbo 2.6.12, Kryo 4.0.1) or kryo5
 * (org.apache.dubbo:dubbo 3.3.6 + dubbo-serialization-kryo 3.2.0, Kryo 5.4).
 * The two lines have the same classes and methods under another package, so
 * they are reached by name, and {@link Out} and {@link In} forward to them.
 */
final class DubboKryo {
    private DubboKryo() {}

    /** The package of the line on the classpath. */
    private static final String PACKAGE = onClasspath("com.alibaba.dubbo.common.serialize.kryo.KryoObjectOutput")
            ? "com.alibaba.dubbo.common.serialize.kryo" : "org.apache.dubbo.common.serialize.kryo";

    /** The folder of golden/vectors this line writes. */
    static final String NAME = PACKAGE.startsWith("com.alibaba.") ? "kryo4" : "kryo5";

    /** The Kryo instance Dubbo's ObjectOutput/ObjectInput use (its registrations). */
    static Kryo kryo() throws ReflectiveOperationException {
        return (Kryo) Class.forName(PACKAGE + ".utils.KryoUtils").getMethod("get").invoke(null);
    }

    static Out output(OutputStream os) throws ReflectiveOperationException {
        return forward(Out.class, line("KryoObjectOutput", OutputStream.class, os));
    }

    static In input(InputStream is) throws ReflectiveOperationException {
        return forward(In.class, line("KryoObjectInput", InputStream.class, is));
    }

    private static boolean onClasspath(String className) {
        try {
            Class.forName(className);
            return true;
        } catch (ClassNotFoundException e) {
            return false;
        }
    }

    /** A new {@code <PACKAGE>.<simpleName>(stream)}. */
    private static Object line(String simpleName, Class<?> streamType, Object stream)
            throws ReflectiveOperationException {
        return Class.forName(PACKAGE + "." + simpleName).getConstructor(streamType).newInstance(stream);
    }

    /** {@code face} calling the method of the same name and parameters on {@code target}. */
    private static <T> T forward(Class<T> face, Object target) {
        return face.cast(Proxy.newProxyInstance(face.getClassLoader(), new Class<?>[] {face}, (proxy, m, args) -> {
            try {
                return target.getClass().getMethod(m.getName(), m.getParameterTypes()).invoke(target, args);
            } catch (InvocationTargetException e) {
                throw e.getCause();
            }
        }));
    }
}
