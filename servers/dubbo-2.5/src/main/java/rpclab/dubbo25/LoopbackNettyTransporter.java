package rpclab.dubbo25;

import com.alibaba.dubbo.common.URL;
import com.alibaba.dubbo.remoting.ChannelHandler;
import com.alibaba.dubbo.remoting.RemotingException;
import com.alibaba.dubbo.remoting.Server;
import com.alibaba.dubbo.remoting.transport.netty.NettyServer;
import com.alibaba.dubbo.remoting.transport.netty.NettyTransporter;
import java.net.InetSocketAddress;
import rpclab.shared.Dubbo2Provider;

/**
 * Dubbo 2.5's default transporter ("netty": Netty 3, org.jboss.netty 3.2.5),
 * except that the server socket is bound to RPCLAB_BIND (default 127.0.0.1)
 * instead of 0.0.0.0.
 *
 * <p>Why: Dubbo treats every 127.x address as "invalid" for a provider:
 * AbstractServer replaces a 127.x bind.ip with 0.0.0.0 and ServiceConfig
 * rejects DUBBO_IP_TO_BIND=127.0.0.1, so stock Dubbo cannot listen on
 * loopback only, which the lab requires. Dubbo 2.5's ExtensionLoader cannot
 * override a built-in extension name, so this one is registered as
 * "rpclab-netty" (META-INF/dubbo/com.alibaba.dubbo.remoting.Transporter) and
 * selected with the protocol's server=rpclab-netty; the provider URL also
 * says client=netty so that Java consumers connect with the stock client.
 */
public class LoopbackNettyTransporter extends NettyTransporter {
    public static final String NAME = Dubbo2Provider.TRANSPORTER;

    @Override
    public Server bind(URL url, ChannelHandler listener) throws RemotingException {
        return new LoopbackNettyServer(url, listener);
    }

    /** Netty 3 NettyServer whose bind address is RPCLAB_BIND:port. */
    static final class LoopbackNettyServer extends NettyServer {
        LoopbackNettyServer(URL url, ChannelHandler handler) throws RemotingException {
            super(url, handler);
        }

        @Override
        public InetSocketAddress getBindAddress() {
            return new InetSocketAddress(Dubbo2Provider.BIND, super.getBindAddress().getPort());
        }
    }
}
