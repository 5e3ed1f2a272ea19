package rpclab.shared;

import java.net.InetSocketAddress;
import org.apache.dubbo.common.URL;
import org.apache.dubbo.remoting.ChannelHandler;
import org.apache.dubbo.remoting.RemotingException;
import org.apache.dubbo.remoting.RemotingServer;
import org.apache.dubbo.remoting.transport.netty4.NettyServer;
import org.apache.dubbo.remoting.transport.netty4.NettyTransporter;

/**
 * Dubbo 3's netty4 transporter, except that the server socket is bound to
 * RPCLAB_BIND (default 127.0.0.1) instead of 0.0.0.0.
 *
 * <p>Why: Dubbo treats every 127.x address as "invalid" for a provider.
 * AbstractServer replaces a 127.x bind.ip with 0.0.0.0 and ServiceConfig
 * rejects DUBBO_IP_TO_BIND=127.0.0.1 outright, so no configuration makes
 * stock Dubbo listen on loopback only, which the lab requires. A provider
 * registers it in META-INF/dubbo/org.apache.dubbo.remoting.Transporter under
 * Dubbo's own names ("netty", the default, and "netty4"), so the provider URL
 * carries no extra parameter and the codec, threading and everything else
 * stay Dubbo's.
 */
public class Dubbo3LoopbackTransporter extends NettyTransporter {
    @Override
    public RemotingServer bind(URL url, ChannelHandler handler) throws RemotingException {
        return new LoopbackNettyServer(url, handler);
    }

    /** NettyServer whose bind address is RPCLAB_BIND:port. */
    static final class LoopbackNettyServer extends NettyServer {
        LoopbackNettyServer(URL url, ChannelHandler handler) throws RemotingException {
            super(url, handler);
        }

        @Override
        public InetSocketAddress getBindAddress() {
            return new InetSocketAddress(Dubbo3Loopback.BIND, super.getBindAddress().getPort());
        }
    }
}
