package rpclab.shared;

/**
 * A server's settings, read from the environment its container gets (the
 * manifest's `env`, `RPCLAB_PORT`, ...), the same way by every server: a
 * blank value is an unset one, and a bad number fails with the variable's
 * name instead of a stack trace from deep in a framework.
 */
public final class Env {
    private Env() {}

    /** The trimmed value of `name`, or `dflt` when it is unset or blank. */
    public static String string(String name, String dflt) {
        String v = System.getenv(name);
        return v == null || v.trim().isEmpty() ? dflt : v.trim();
    }

    /** The loopback address: where a server listens and what it names when the lab says nothing else. */
    public static final String LOOPBACK = "127.0.0.1";

    /**
     * RPCLAB_BIND: the interface the server listens on, 127.0.0.1 when it
     * is unset or blank; 0.0.0.0 is every interface.
     */
    public static String bind() {
        return string("RPCLAB_BIND", LOOPBACK);
    }

    /**
     * RPCLAB_ADVERTISE: the address the server is reached at, which it
     * registers in its registry and puts in any address it hands out
     * (endpoints, stubs, WSDL). When it is unset or blank: {@link #bind()},
     * unless that is 0.0.0.0 (not an address anyone can call), then
     * 127.0.0.1.
     */
    public static String advertise() {
        String bind = bind();
        String dflt = "0.0.0.0".equals(bind) || "::".equals(bind) ? LOOPBACK : bind;
        return string("RPCLAB_ADVERTISE", dflt);
    }

    /**
     * The integer in `min..max` that `name` holds, or `dflt` (which may be
     * null: no value, the framework's own default) when it is unset; anything
     * else is an IllegalArgumentException that names the variable.
     */
    public static Integer integer(String name, Integer dflt, int min, int max) {
        String v = string(name, null);
        if (v == null) {
            return dflt;
        }
        try {
            int n = Integer.parseInt(v);
            if (n < min || n > max) {
                throw new NumberFormatException("out of range");
            }
            return n;
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(name + " must be an integer in " + min + ".." + max + ", got: " + v, e);
        }
    }
}
