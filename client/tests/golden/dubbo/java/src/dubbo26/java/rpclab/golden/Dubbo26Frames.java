package rpclab.golden;

import java.io.IOException;
import java.lang.reflect.Proxy;
import java.nio.file.Path;

import com.alibaba.dubbo.common.URL;
import com.alibaba.dubbo.remoting.Channel;
import com.alibaba.dubbo.remoting.buffer.ChannelBuffer;
import com.alibaba.dubbo.remoting.buffer.ChannelBuffers;
import com.alibaba.dubbo.remoting.exchange.Request;
import com.alibaba.dubbo.remoting.exchange.Response;
import com.alibaba.dubbo.rpc.RpcResult;
import com.alibaba.dubbo.rpc.RpcException;
import com.alibaba.dubbo.rpc.RpcInvocation;
import com.alibaba.dubbo.rpc.protocol.dubbo.DubboCodec;

import rpclab.contract.Order;

/**
 * Dubbo 2.6's (com.alibaba) {@link DubboCodec}, driven without a network: a
 * channel only has to answer {@code getUrl()}, which carries the
 * serialization, as a provider's would.
 */
public final class Dubbo26Frames extends Cases {
    private final DubboCodec codec = new DubboCodec();

    Dubbo26Frames(Path out) throws IOException {
        super(out);
    }

    public static void main(String[] args) throws Exception {
        Dubbo26Frames frames = new Dubbo26Frames(Path.of(args[0]));
        for (String serialization : new String[] {"hessian2", "java", "nativejava", "kryo", "fastjson"}) {
            frames.write(serialization);
        }
    }

    private static Channel channel(String serialization) {
        URL url = URL.valueOf("dubbo://127.0.0.1:20880/" + SERVICE
                + "?serialization=" + serialization + "&payload=16777216");
        return (Channel) Proxy.newProxyInstance(
                Dubbo26Frames.class.getClassLoader(),
                new Class<?>[] {Channel.class},
                (proxy, method, args) -> switch (method.getName()) {
                    case "getUrl" -> url;
                    case "hasAttribute", "isConnected", "isClosed" -> false;
                    case "toString" -> "golden-channel";
                    case "hashCode" -> 0;
                    case "equals" -> proxy == args[0];
                    // The codec answers a response it cannot encode with a
                    // BAD_RESPONSE sent on the channel: fail loudly instead.
                    case "send" -> throw new IllegalStateException(
                            "the codec could not encode a frame and sent instead: " + args[0]);
                    default -> null;
                });
    }

    private byte[] encode(String serialization, Object message) throws IOException {
        ChannelBuffer buffer = ChannelBuffers.dynamicBuffer(1024);
        codec.encode(channel(serialization), buffer, message);
        byte[] bytes = new byte[buffer.readableBytes()];
        buffer.readBytes(bytes);
        return bytes;
    }

    private static Response ok(long id) {
        Response res = new Response(id, "2.0.2");
        res.setStatus(Response.OK);
        return res;
    }

    @Override
    protected byte[] value(String serialization, long id, Object value) throws IOException {
        Response res = ok(id);
        res.setResult(new RpcResult(value));
        return encode(serialization, res);
    }

    @Override
    protected byte[] exception(String serialization, long id, Throwable t) throws IOException {
        Response res = ok(id);
        res.setResult(new RpcResult(t));
        return encode(serialization, res);
    }

    @Override
    protected byte[] notFound(String serialization, long id, String message) throws IOException {
        Response res = new Response(id, "2.0.2");
        res.setStatus(Response.SERVICE_NOT_FOUND);
        res.setErrorMessage(message);
        return encode(serialization, res);
    }

    @Override
    protected byte[] heartbeat(String serialization, long id, boolean response) throws IOException {
        if (response) {
            Response res = ok(id);
            res.setHeartbeat(true);
            return encode(serialization, res);
        }
        Request req = new Request(id);
        req.setTwoWay(true);
        req.setHeartbeat(true);
        return encode(serialization, req);
    }

    @Override
    protected byte[] echoOrderRequest(String serialization, long id, Order order) throws IOException {
        RpcInvocation inv = new RpcInvocation("echoOrder", new Class<?>[] {Order.class}, new Object[] {order});
        inv.setAttachment("path", SERVICE);
        inv.setAttachment("interface", SERVICE);
        inv.setAttachment("version", "0.0.0");
        Request req = new Request(id);
        req.setVersion("2.0.2");
        req.setTwoWay(true);
        req.setData(inv);
        return encode(serialization, req);
    }

    @Override
    protected RuntimeException rpcException(String message, Throwable cause) {
        return new RpcException(message, cause);
    }
}
