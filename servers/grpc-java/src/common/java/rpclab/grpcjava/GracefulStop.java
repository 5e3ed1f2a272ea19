package rpclab.grpcjava;

import java.util.concurrent.TimeUnit;

/**
 * The stop both grpc-java lines do, whatever their server class is called
 * (io.grpc.Server, 0.7's ServerImpl): refuse new calls, let running ones
 * finish (at most 5 s), then close (at most 2 s more).
 */
final class GracefulStop {
    private GracefulStop() {}

    /** A server's bounded wait for its calls to end; true if they did. */
    interface Termination {
        boolean await(long timeout, TimeUnit unit) throws InterruptedException;
    }

    static void stop(Runnable shutdown, Termination termination, Runnable shutdownNow) {
        shutdown.run();
        try {
            if (!termination.await(5, TimeUnit.SECONDS)) {
                shutdownNow.run();
                termination.await(2, TimeUnit.SECONDS);
            }
        } catch (InterruptedException e) {
            shutdownNow.run();
            Thread.currentThread().interrupt();
        }
    }
}
