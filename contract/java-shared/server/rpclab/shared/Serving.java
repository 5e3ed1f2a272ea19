package rpclab.shared;

import java.util.concurrent.CountDownLatch;
import sun.misc.Signal;

/**
 * What a server does around serving, the same for every server the lab runs:
 * a setting it cannot serve with ends it with status 2 and one line saying
 * why; once it serves, it prints its ready line, and SIGTERM or SIGINT (the
 * lab's stop) runs its stop action, prints "rpclab server stopped" and ends
 * it with status 0, so a stop is told apart from a crash.
 */
public final class Serving {
    private Serving() {}

    /** Prints "rpclab: " and the message, and exits with status 2. */
    public static void refuse(String message) {
        System.err.println("rpclab: " + message);
        System.exit(2);
    }

    /**
     * The port in RPCLAB_PORT, or `dflt` when it is unset, from `lowest` (0:
     * the server may pick one) to 65535. A bad one refuses to serve (status
     * 2, the variable named): every server reads its port this way, so each
     * main need not repeat the parse-or-refuse.
     */
    public static int port(int dflt, int lowest) {
        try {
            return Env.integer("RPCLAB_PORT", dflt, lowest, 65535);
        } catch (IllegalArgumentException e) {
            refuse(e.getMessage());
            throw new IllegalStateException("unreachable: refuse exits", e);
        }
    }

    /**
     * Where a server says it serves, for its ready line: `BIND:PORT`, and
     * `, advertised as ADVERTISE:PORT` when the address it registers and
     * hands out differs from the one it listens on (so the line is today's
     * with the defaults).
     */
    public static String where(int port) {
        return where(port, "");
    }

    /** {@link #where(int)} with `path` after each address (an HTTP server's service path). */
    public static String where(int port, String path) {
        String bind = Env.bind();
        String advertise = Env.advertise();
        return bind + ":" + port + path
                + (bind.equals(advertise) ? "" : ", advertised as " + advertise + ":" + port + path);
    }

    /**
     * Installs the SIGTERM/SIGINT handlers, prints `readyLine`, waits for a
     * signal, runs `stop` (a failure is printed, not thrown), prints "rpclab
     * server stopped" and exits with status 0.
     */
    public static void untilSignalled(String readyLine, Runnable stop) {
        CountDownLatch stopped = new CountDownLatch(1);
        Runnable stopOnce = () -> {
            try {
                stop.run();
            } catch (RuntimeException e) {
                System.err.println("rpclab: stop failed: " + e);
            } finally {
                stopped.countDown();
            }
        };
        for (String name : new String[] {"TERM", "INT"}) {
            Signal.handle(new Signal(name), s -> new Thread(stopOnce, "rpclab-stop").start());
        }
        System.out.println(readyLine);
        System.out.flush();
        try {
            stopped.await();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        System.out.println("rpclab server stopped");
        System.out.flush();
        System.exit(0);
    }
}
