package rpclab.golden;

import java.io.IOException;
import java.lang.reflect.Proxy;
import java.nio.file.Path;

import org.apache.dubbo.common.URL;
import org.apache.dubbo.common.utils.ReflectUtils;
import org.apache.dubbo.remoting.Channel;
import org.apache.dubbo.remoting.buffer.ChannelBuffer;
import org.apache.dubbo.remoting.buffer.ChannelBuffers;
import org.apache.dubbo.remoting.exchange.Request;
import org.apache.dubbo.remoting.exchange.Response;
import org.apache.dubbo.rpc.AppResponse;
import org.apache.dubbo.rpc.RpcException;
import org.apache.dubbo.rpc.RpcInvocation;
import org.apache.dubbo.rpc.model.FrameworkModel;
import org.apache.dubbo.rpc.protocol.dubbo.DubboCodec;

import rpclab.contract.Order;

/**
 * Apache Dubbo 3.3's {@link DubboCodec}, driven without a network: a
 * channel only has to answer {@code getUrl()}, which carries the
 * serialization, as a provider's would.
 */
public final class Dubbo33Frames extends Cases {
    private final DubboCodec codec = new DubboCodec(FrameworkModel.defaultModel());

    Dubbo33Frames(Path out) throws IOException {
        super(out);
    }

    public static void main(String[] args) throws Exception {
        Dubbo33Frames frames = new Dubbo33Frames(Path.of(args[0]));
        for (String serialization : new String[] {"hessian2", "java", "nativejava", "kryo", "fastjson2"}) {
            frames.write(serialization);
        }
    }

    static Channel channel(String serialization) {
        URL url = URL.valueOf("dubbo://127.0.0.1:20880/" + SERVICE
                + "?serialization=" + serialization + "&payload=16777216");
        return (Channel) Proxy.newProxyInstance(
                Dubbo33Frames.class.getClassLoader(),
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
        res.setResult(new AppResponse(value));
        return encode(serialization, res);
    }

    @Override
    protected byte[] exception(String serialization, long id, Throwable t) throws IOException {
        Response res = ok(id);
        AppResponse result = new AppResponse();
        result.setException(t);
        res.setResult(result);
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
            res.setEvent(true);
            return encode(serialization, res);
        }
        Request req = new Request(id);
        req.setTwoWay(true);
        req.setEvent(true); // data null: a heartbeat
        return encode(serialization, req);
    }

    @Override
    protected byte[] echoOrderRequest(String serialization, long id, Order order) throws IOException {
        RpcInvocation inv = new RpcInvocation();
        inv.setMethodName("echoOrder");
        inv.setParameterTypes(new Class<?>[] {Order.class});
        inv.setParameterTypesDesc(ReflectUtils.getDesc(inv.getParameterTypes()));
        inv.setArguments(new Object[] {order});
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
