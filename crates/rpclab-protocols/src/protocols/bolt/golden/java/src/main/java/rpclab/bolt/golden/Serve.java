package rpclab.bolt.golden;

/**
 * A real SOFA-RPC bolt provider of the contract for the Rust client's Java
 * interop test: exports on 127.0.0.1 (port from the first argument, default
 * 12298), no registry; prints "rpclab bolt provider ready on 127.0.0.1:PORT"
 * and serves until killed.
 */
public final class Serve {
    private Serve() {}

    public static void main(String[] args) throws InterruptedException {
        int port = args.length > 0 ? Integer.parseInt(args[0]) : 12298;
        Golden.export(port);
        System.out.println("rpclab bolt provider ready on " + Golden.HOST + ":" + port);
        System.out.flush();
        Thread.currentThread().join();
    }
}
