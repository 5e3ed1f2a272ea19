package rpclab.motan;

import com.weibo.api.motan.common.ChannelState;
import com.weibo.api.motan.common.URLParamType;
import com.weibo.api.motan.core.DefaultThreadFactory;
import com.weibo.api.motan.core.StandardThreadExecutor;
import com.weibo.api.motan.core.extension.SpiMeta;
import com.weibo.api.motan.exception.MotanFrameworkException;
import com.weibo.api.motan.rpc.Request;
import com.weibo.api.motan.rpc.Response;
import com.weibo.api.motan.rpc.URL;
import com.weibo.api.motan.transport.AbstractServer;
import com.weibo.api.motan.transport.MessageHandler;
import com.weibo.api.motan.transport.Server;
import com.weibo.api.motan.transport.netty.NettyChannelHandler;
import com.weibo.api.motan.transport.netty.NettyDecoder;
import com.weibo.api.motan.transport.netty.NettyEncoder;
import com.weibo.api.motan.transport.netty.NettyEndpointFactory;
import com.weibo.api.motan.transport.netty.NettyServerChannelManage;
import java.net.InetSocketAddress;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import org.jboss.netty.bootstrap.ServerBootstrap;
import org.jboss.netty.channel.Channel;
import org.jboss.netty.channel.ChannelPipeline;
import org.jboss.netty.channel.Channels;
import org.jboss.netty.channel.socket.nio.NioServerSocketChannelFactory;

/**
 * Motan's netty (netty 3, Motan's default transport) endpoint factory whose
 * servers listen on RPCLAB_BIND only (127.0.0.1 unless the lab says
 * otherwise).
 *
 * <p>Why: Motan's NettyServer binds {@code new InetSocketAddress(port)}, the
 * wildcard address, and has no setting for the bind host; the lab allows
 * traffic on the interface it names only (127.0.0.1 by default). This server is assembled from Motan's own netty
 * pieces (NettyDecoder and NettyEncoder with the URL's codec, one
 * NettyChannelHandler on a StandardThreadExecutor, NettyServerChannelManage
 * for the connection limit), configured from the same URL parameters with the
 * same defaults, so the codec, the threading model and the limits are Motan's;
 * only the bind address differs. Clients stay Motan's (this provider makes none).
 *
 * <p>Selected by {@code endpointFactory=rpclab-loopback} on the protocol
 * (META-INF/services/com.weibo.api.motan.transport.EndpointFactory).
 */
@SpiMeta(name = "rpclab-loopback")
public class LoopbackEndpointFactory extends NettyEndpointFactory {
    @Override
    protected Server innerCreateServer(URL url, MessageHandler messageHandler) {
        return new LoopbackNettyServer(url, messageHandler);
    }

    /** A motan netty server bound to RPCLAB_BIND:port (default 127.0.0.1). */
    static final class LoopbackNettyServer extends AbstractServer {
        private final MessageHandler messageHandler;
        private ExecutorService boss;
        private ExecutorService workers;
        private NioServerSocketChannelFactory channelFactory;
        private Channel serverChannel;
        private StandardThreadExecutor executor;
        private NettyServerChannelManage channelManage;

        LoopbackNettyServer(URL url, MessageHandler messageHandler) {
            super(url);
            this.messageHandler = messageHandler;
        }

        @Override
        public synchronized boolean open() {
            if (isAvailable()) {
                return true;
            }
            boolean shareChannel = url.getBooleanParameter(URLParamType.shareChannel.getName(),
                    URLParamType.shareChannel.getBooleanValue());
            int maxContentLength = url.getIntParameter(URLParamType.maxContentLength.getName(),
                    URLParamType.maxContentLength.getIntValue());
            int maxServerConnection = url.getIntParameter(URLParamType.maxServerConnection.getName(),
                    URLParamType.maxServerConnection.getIntValue());
            int queueSize = url.getIntParameter(URLParamType.workerQueueSize.getName(),
                    URLParamType.workerQueueSize.getIntValue());
            // Motan's defaults (MotanConstants.NETTY_*_WORKDER): 40..800 business
            // threads with a shared channel, 20..200 without.
            int minWorkers = url.getIntParameter(URLParamType.minWorkerThread.getName(), shareChannel ? 40 : 20);
            int maxWorkers = url.getIntParameter(URLParamType.maxWorkerThread.getName(), shareChannel ? 800 : 200);

            executor = new StandardThreadExecutor(minWorkers, maxWorkers, queueSize,
                    new DefaultThreadFactory("NettyServer-" + url.getServerPortStr(), true));
            executor.prestartAllCoreThreads();
            channelManage = new NettyServerChannelManage(maxServerConnection);
            NettyChannelHandler handler = new NettyChannelHandler(this, messageHandler, executor);

            boss = Executors.newCachedThreadPool(new DefaultThreadFactory("nettyServerBoss", true));
            workers = Executors.newCachedThreadPool(new DefaultThreadFactory("nettyServerWorker", true));
            channelFactory = new NioServerSocketChannelFactory(boss, workers);
            ServerBootstrap bootstrap = new ServerBootstrap(channelFactory);
            bootstrap.setOption("child.tcpNoDelay", true);
            bootstrap.setOption("child.keepAlive", true);
            bootstrap.setPipelineFactory(() -> {
                // FrameDecoder keeps per-connection state: one pipeline per connection.
                ChannelPipeline pipeline = Channels.pipeline();
                pipeline.addLast("channel_manage", channelManage);
                pipeline.addLast("decoder", new NettyDecoder(codec, this, maxContentLength));
                pipeline.addLast("encoder", new NettyEncoder(codec, this));
                pipeline.addLast("nettyChannelHandler", handler);
                return pipeline;
            });
            serverChannel = bootstrap.bind(new InetSocketAddress(BenchServer.BIND, url.getPort()));
            setLocalAddress((InetSocketAddress) serverChannel.getLocalAddress());
            state = ChannelState.ALIVE;
            return true;
        }

        @Override
        public synchronized void close() {
            close(0);
        }

        @Override
        public synchronized void close(int timeout) {
            if (state.isCloseState()) {
                return;
            }
            if (serverChannel != null) {
                serverChannel.close().awaitUninterruptibly();
            }
            if (channelManage != null) {
                channelManage.close();
            }
            if (executor != null) {
                executor.shutdownNow();
            }
            if (channelFactory != null) {
                channelFactory.releaseExternalResources();
            }
            state = ChannelState.CLOSE;
        }

        @Override
        public boolean isBound() {
            return serverChannel != null && serverChannel.isBound();
        }

        @Override
        public Response request(Request request) {
            throw new MotanFrameworkException("a server does not send requests: " + url);
        }

        @Override
        public boolean isClosed() {
            return state.isCloseState();
        }

        @Override
        public boolean isAvailable() {
            return state.isAliveState();
        }

        @Override
        public URL getUrl() {
            return url;
        }
    }
}
