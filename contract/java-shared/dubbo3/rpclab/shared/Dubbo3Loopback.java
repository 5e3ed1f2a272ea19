package rpclab.shared;

import java.lang.reflect.Field;
import java.net.InetAddress;
import java.net.UnknownHostException;
import org.apache.dubbo.common.utils.NetUtils;

/**
 * An Apache Dubbo 3 provider on RPCLAB_BIND only, registered as
 * RPCLAB_ADVERTISE (both 127.0.0.1 unless the lab says otherwise): what the
 * lab's Dubbo 3.3 server and the dubbo-shop fixture (fixtures/dubbo-shop)
 * share.
 *
 * <p>Stock Dubbo 3.3 refuses 127.x wherever a provider address can be
 * configured: DUBBO_IP_TO_REGISTRY/DUBBO_IP_TO_BIND=127.0.0.1 fail with
 * "Specified invalid ... ip", a protocol host of 127.0.0.1 is replaced by
 * NetUtils.getLocalHost() (the first non-loopback address of the machine:
 * with --network host, the host's LAN address, which it would register),
 * and the server socket is bound to 0.0.0.0. So a provider calls
 * {@link #pinLocalHost()} before it exports anything, and registers
 * {@link Dubbo3LoopbackTransporter} in its
 * META-INF/dubbo/org.apache.dubbo.remoting.Transporter.
 */
public final class Dubbo3Loopback {
    /** The interface a provider binds (RPCLAB_BIND, default 127.0.0.1). */
    public static final String BIND = Env.bind();
    /**
     * The address a provider registers and puts in its URL (RPCLAB_ADVERTISE:
     * default the bind address, or 127.0.0.1 for 0.0.0.0).
     */
    public static final String ADVERTISE = Env.advertise();

    private Dubbo3Loopback() {}

    /**
     * Makes Dubbo's idea of "the local host" {@link #ADVERTISE}: sets the
     * address NetUtils caches before Dubbo computes it, so the registered
     * host is that address. Side effect, for a 127.x address (which Dubbo
     * ignores as a protocol host): the exported URL says anyhost=true
     * (Dubbo's marker for "host was not configured"), while the socket is
     * bound to {@link #BIND} only.
     */
    public static void pinLocalHost() {
        try {
            Field address = NetUtils.class.getDeclaredField("LOCAL_ADDRESS");
            address.setAccessible(true);
            address.set(null, InetAddress.getByName(ADVERTISE));
            Field hostAddress = NetUtils.class.getDeclaredField("HOST_ADDRESS");
            hostAddress.setAccessible(true);
            hostAddress.set(null, ADVERTISE);
        } catch (ReflectiveOperationException | UnknownHostException e) {
            throw new IllegalStateException("cannot pin Dubbo's local host to " + ADVERTISE, e);
        }
        String local = NetUtils.getLocalHost();
        if (!ADVERTISE.equals(local)) {
            throw new IllegalStateException("Dubbo's local host is " + local + ", not " + ADVERTISE);
        }
    }
}
