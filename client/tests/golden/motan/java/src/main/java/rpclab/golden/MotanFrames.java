package rpclab.golden;

import com.weibo.api.motan.exception.MotanBizException;
import com.weibo.api.motan.exception.MotanServiceException;
import com.weibo.api.motan.protocol.v2motan.MotanV2Codec;
import com.weibo.api.motan.rpc.DefaultRequest;
import com.weibo.api.motan.rpc.DefaultResponse;
import com.weibo.api.motan.rpc.URL;
import com.weibo.api.motan.transport.Channel;
import com.weibo.api.motan.transport.support.DefaultRpcHeartbeatFactory;
import java.lang.reflect.Proxy;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;
import rpclab.contract.Order;
import rpclab.shared.ContractPayloads;

/**
 * Writes whole motan2 frames with Motan's own {@link MotanV2Codec}: what a
 * provider sends back (values, null, exceptions, heartbeats) and what a
 * referer sends (requests with the meta map the Rust client writes), for
 * each serialization the Rust client speaks. File names:
 * {@code <serialization>-<case>.bin}.
 *
 * <p>The codec is driven without a network: a channel only has to answer
 * {@code getUrl()}, whose {@code serialization} parameter is what a referer
 * encodes requests with.
 */
public final class MotanFrames {
    static final String SERVICE = "rpclab.contract.BenchService";

    public static void main(String[] args) throws Exception {
        Path out = Path.of(args[0]);
        Files.createDirectories(out);
        MotanV2Codec codec = new MotanV2Codec();
        for (String serialization : new String[] {"hessian2", "simple"}) {
            int number = "simple".equals(serialization) ? 6 : 0;
            Channel channel = channel(serialization);
            Frames f = new Frames(codec, channel, out, serialization, number);

            // Replies, as a provider answers.
            f.response("hello", 3, "hello aa");
            f.response("string-1k", 4, "x".repeat(1024));
            f.response("long-string", 5, "y".repeat(70_000));
            f.response("unicode-string", 6, "h\u00e9llo \u4e16\u754c \ud83d\ude00");
            f.response("void", 7, null);
            if (number == 0) {
                f.response("order", 1, ContractPayloads.sample(1, Order::new));
                List<Order> orders = ContractPayloads.samples(100, Order::new);
                f.response("orders", 2, orders);
            }
            f.exception("service-exception", 8, new MotanServiceException(
                    "Service method not exist: rpclab.contract.BenchService.nope(void)", false));
            f.exception("biz-exception", 9, new MotanBizException(
                    "provider call process error", new IllegalArgumentException("bad input")));

            f.write("heartbeat-request", DefaultRpcHeartbeatFactory.getDefaultHeartbeatRequest(10));
            f.write("heartbeat-response", DefaultRpcHeartbeatFactory.getDefaultHeartbeatResponse(10));

            // Requests, with the meta map the Rust client writes (in its order).
            f.request("request-hello", 11, "hello", "java.lang.String", new Object[] {"aa"});
            f.request("request-empty", 12, "empty", "void", null);
            f.request("request-string-1k", 13, "echoString", "java.lang.String",
                    new Object[] {"x".repeat(1024)});
            if (number == 0) {
                f.request("request-echo-order", 14, "echoOrder", "rpclab.contract.Order",
                        new Object[] {ContractPayloads.sample(1, Order::new)});
                List<Order> orders = ContractPayloads.samples(100, Order::new);
                f.request("request-echo-orders", 15, "echoOrders", "java.util.List", new Object[] {orders});
            }
        }
    }

    static Channel channel(String serialization) {
        URL url = URL.valueOf("motan2://127.0.0.1:8002/" + SERVICE + "?serialization=" + serialization
                + "&group=rpclab");
        return (Channel) Proxy.newProxyInstance(
                MotanFrames.class.getClassLoader(),
                new Class<?>[] {Channel.class},
                (proxy, method, a) -> switch (method.getName()) {
                    case "getUrl" -> url;
                    case "isClosed" -> false;
                    case "isAvailable", "open" -> true;
                    case "toString" -> "golden-channel";
                    case "hashCode" -> 0;
                    case "equals" -> proxy == a[0];
                    default -> null;
                });
    }

    record Frames(MotanV2Codec codec, Channel channel, Path out, String serialization, int number) {
        void response(String name, long id, Object value) throws Exception {
            write(name, reply(id, 2, res -> res.setValue(value)));
        }

        void exception(String name, long id, Exception e) throws Exception {
            write(name, reply(id, 1, res -> res.setException(e)));
        }

        /** A response to request {@code id}: its outcome, then what every reply carries. */
        private DefaultResponse reply(long id, long processTime, Consumer<DefaultResponse> outcome) {
            DefaultResponse res = new DefaultResponse();
            res.setRequestId(id);
            outcome.accept(res);
            res.setProcessTime(processTime);
            res.setSerializeNumber(number);
            res.setAttachments(new HashMap<>());
            return res;
        }

        void request(String name, long id, String method, String desc, Object[] args) throws Exception {
            DefaultRequest req = new DefaultRequest();
            req.setRequestId(id);
            req.setInterfaceName(SERVICE);
            req.setMethodName(method);
            req.setParamtersDesc(desc);
            req.setArguments(args);
            Map<String, String> meta = new LinkedHashMap<>();
            meta.put("M_g", "rpclab");
            meta.put("M_v", "1.0");
            meta.put("M_s", "rpclab-client");
            req.setAttachments(meta);
            write(name, req);
        }

        void write(String name, Object message) throws Exception {
            byte[] bytes = codec.encode(channel, message);
            if (bytes == null || bytes.length == 0) {
                throw new IllegalStateException(serialization + "-" + name + ": nothing encoded");
            }
            Files.write(out.resolve(serialization + "-" + name + ".bin"), bytes);
        }
    }
}
