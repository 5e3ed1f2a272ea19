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
