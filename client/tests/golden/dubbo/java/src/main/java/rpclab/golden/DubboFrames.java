package rpclab.golden;

import java.io.IOException;
import java.lang.reflect.Proxy;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import org.apache.dubbo.common.URL;
import org.apache.dubbo.common.utils.ReflectUtils;
import org.apache.dubbo.remoting.Channel;
import org.apache.dubbo.remoting.buffer.ChannelBuffer;
import org.apache.dubbo.remoting.buffer.ChannelBuffers;
import org.apache.dubbo.remoting.exchange.Request;
import org.apache.dubbo.remoting.exchange.Response;
import org.apache.dubbo.rpc.AppResponse;
import org.apache.dubbo.rpc.RpcInvocation;
import org.apache.dubbo.rpc.model.FrameworkModel;
import org.apache.dubbo.rpc.protocol.dubbo.DubboCodec;

import rpclab.contract.Order;

/**
 * Writes whole dubbo2 frames with Dubbo's own {@link DubboCodec}: what a
 * provider sends back (values, null, exceptions, an error status,
 * heartbeats) and what a consumer sends, for each serialization the Rust
 * client speaks. File names: {@code <serialization>-<case>.bin}.
 *
 * <p>The codec is driven without a network: a channel only has to answer
 * {@code getUrl()}, which carries the serialization, as a provider's would.
 */
public final class DubboFrames {
    static final String SERVICE = "rpclab.contract.BenchService";

    public static void main(String[] args) throws Exception {
        Path out = Path.of(args[0]);
        Files.createDirectories(out);
        DubboCodec codec = new DubboCodec(FrameworkModel.defaultModel());
        for (String serialization : new String[] {"hessian2", "java", "nativejava"}) {
            Channel channel = channel(URL.valueOf("dubbo://127.0.0.1:20880/" + SERVICE
                    + "?serialization=" + serialization + "&payload=16777216"));
            Frames frames = new Frames(codec, channel, out, serialization);

            // Replies, as a provider answers a 2.0.2 consumer (with attachments).
            frames.response("order", 1, sample(1));
            List<Order> orders = new ArrayList<>();
            for (int i = 0; i < 3; i++) {
                orders.add(sample(i));
            }
            frames.response("orders", 2, orders);
            frames.response("hello", 3, "hello aa");
            frames.response("long-string", 4, "x".repeat(70_000));
            frames.response("unicode-string", 5, "h\u00e9llo \u4e16\u754c \ud83d\ude00 \u0000");
            frames.response("void", 6, null);
            frames.exception("exception", 7,
                    new org.apache.dubbo.rpc.RpcException("boom", new IllegalArgumentException("bad input")));
            frames.exception("exception-no-message", 8, new IllegalStateException());

            Response notFound = new Response(9, "2.0.2");
            notFound.setStatus(Response.SERVICE_NOT_FOUND);
            notFound.setErrorMessage("Not found exported service: rpclab.contract.Nope:20880");
            frames.write("service-not-found", notFound);

            Request beat = new Request(10);
            beat.setTwoWay(true);
            beat.setEvent(true); // data null: a heartbeat
            frames.write("heartbeat-request", beat);
            Response beatReply = new Response(10, "2.0.2");
            beatReply.setEvent(true);
            beatReply.setStatus(Response.OK);
            frames.write("heartbeat-response", beatReply);

            // A request, as a consumer sends it with the attachments the Rust
            // client sends.
            RpcInvocation inv = new RpcInvocation();
            inv.setMethodName("echoOrder");
            inv.setParameterTypes(new Class<?>[] {Order.class});
            inv.setParameterTypesDesc(ReflectUtils.getDesc(inv.getParameterTypes()));
            inv.setArguments(new Object[] {sample(1)});
            inv.setAttachment("path", SERVICE);
            inv.setAttachment("interface", SERVICE);
            inv.setAttachment("version", "0.0.0");
            Request request = new Request(11);
            request.setVersion("2.0.2");
            request.setTwoWay(true);
            request.setData(inv);
            frames.write("request-echo-order", request);
        }
    }

    /** The contract's {@code Order::sample(i)}. */
    static Order sample(int i) {
        return new Order(
                10_000_000_000L + i,
                String.format("138%08d", (i * 7919L) % 100_000_000L),
                "customer-" + i,
                String.format("ORD-2015-%06d", i),
                20_150_701 + (i % 28),
                i % 4,
                100.25 + i * 0.5,
                i % 3);
    }

    static Channel channel(URL url) {
        return (Channel) Proxy.newProxyInstance(
                DubboFrames.class.getClassLoader(),
                new Class<?>[] {Channel.class},
                (proxy, method, args) -> switch (method.getName()) {
                    case "getUrl" -> url;
                    case "hasAttribute", "isConnected", "isClosed" -> false;
                    case "toString" -> "golden-channel";
                    // The codec answers a response it cannot encode with a
                    // BAD_RESPONSE sent on the channel: fail loudly instead.
                    case "send" -> throw new IllegalStateException(
                            "the codec could not encode a frame and sent instead: " + args[0]);
                    case "hashCode" -> 0;
                    case "equals" -> proxy == args[0];
                    default -> null;
                });
    }

    record Frames(DubboCodec codec, Channel channel, Path out, String serialization) {
        void response(String name, long id, Object value) throws IOException {
            Response res = new Response(id, "2.0.2");
            res.setStatus(Response.OK);
            res.setResult(new AppResponse(value));
            write(name, res);
        }

        void exception(String name, long id, Throwable t) throws IOException {
            Response res = new Response(id, "2.0.2");
            res.setStatus(Response.OK);
            AppResponse result = new AppResponse();
            result.setException(t);
            res.setResult(result);
            write(name, res);
        }

        void write(String name, Object message) throws IOException {
            ChannelBuffer buffer = ChannelBuffers.dynamicBuffer(1024);
            codec.encode(channel, buffer, message);
            if (buffer.readableBytes() == 0) {
                throw new IllegalStateException(serialization + "-" + name + ": nothing encoded");
            }
            byte[] bytes = new byte[buffer.readableBytes()];
            buffer.readBytes(bytes);
            Files.write(out.resolve(serialization + "-" + name + ".bin"), bytes);
        }
    }
}
