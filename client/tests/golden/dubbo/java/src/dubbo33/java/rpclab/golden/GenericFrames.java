package rpclab.golden;

import com.example.shop.Line;
import com.example.shop.Reservation;
import com.example.shop.Status;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import org.apache.dubbo.common.utils.PojoUtils;
import org.apache.dubbo.common.utils.ReflectUtils;
import org.apache.dubbo.common.utils.StringUtils;
import org.apache.dubbo.remoting.buffer.ChannelBuffer;
import org.apache.dubbo.remoting.buffer.ChannelBuffers;
import org.apache.dubbo.remoting.exchange.Request;
import org.apache.dubbo.remoting.exchange.Response;
import org.apache.dubbo.rpc.AppResponse;
import org.apache.dubbo.rpc.RpcException;
import org.apache.dubbo.rpc.RpcInvocation;
import org.apache.dubbo.rpc.model.FrameworkModel;
import org.apache.dubbo.rpc.protocol.dubbo.DubboCodec;

/**
 * The frames of Dubbo's generic invocation, written by Apache Dubbo 3.3's
 * {@link DubboCodec} in hessian2, for the client's generic Dubbo call
 * (protocol dubbo-generic): the request a Java consumer's GenericService
 * sends for {@code $invoke("reserve", {"com.example.shop.ReserveRequest"},
 * {map})} (the invocation its proxy makes, with the attachments its
 * GenericImplFilter adds), and what a provider's GenericFilter sends back:
 * a result generalized by PojoUtils, and the error of a method the
 * interface does not have. Files: {@code <out>/generic-<case>.bin}.
 */
public final class GenericFrames {
    static final String INTERFACE = "com.example.shop.InventoryService";

    private GenericFrames() {}

    public static void main(String[] args) throws Exception {
        Path out = Path.of(args[0]);
        Files.createDirectories(out);
        Files.write(out.resolve("generic-request-reserve.bin"), encode(reserveRequest()));
        Files.write(out.resolve("generic-reply-reservation.bin"), encode(reservationReply()));
        Files.write(out.resolve("generic-reply-no-such-method.bin"), encode(noSuchMethodReply()));
    }

    /** The request: {@code $invoke} with the method, its types and a map for the POJO. */
    static Request reserveRequest() {
        Map<String, Object> item = new HashMap<>();
        item.put("sku", "apple");
        item.put("quantity", 3);
        List<Object> items = new ArrayList<>();
        items.add(item);
        Map<String, Object> request = new HashMap<>();
        request.put("requestId", "req-1");
        request.put("customer", "ada");
        request.put("items", items);
        RpcInvocation inv = new RpcInvocation();
        inv.setMethodName("$invoke");
        inv.setParameterTypes(new Class<?>[] {String.class, String[].class, Object[].class});
        inv.setParameterTypesDesc(ReflectUtils.getDesc(inv.getParameterTypes()));
        inv.setArguments(new Object[] {
            "reserve", new String[] {"com.example.shop.ReserveRequest"}, new Object[] {request}
        });
        inv.setAttachment("path", INTERFACE);
        inv.setAttachment("interface", INTERFACE);
        inv.setAttachment("version", "0.0.0");
        inv.setAttachment("generic", "true");
        Request req = new Request(21);
        req.setVersion("2.0.2");
        req.setTwoWay(true);
        req.setData(inv);
        return req;
    }

    /** The provider's reply: the fixture's Reservation as PojoUtils.generalize makes it. */
    static Response reservationReply() {
        Reservation reservation = new Reservation();
        reservation.setRequestId("req-1");
        reservation.setCustomer("ada");
        reservation.setStatus(Status.PARTIAL);
        reservation.getLines().add(new Line("apple", 3));
        reservation.getLines().add(new Line("pear", 100));
        reservation.setTotalQuantity(103);
        reservation.setPrice(26.5);
        Response res = new Response(21, "2.0.2");
        res.setStatus(Response.OK);
        res.setResult(new AppResponse(PojoUtils.generalize(reservation)));
        return res;
    }

    /** A method the interface does not have: GenericFilter's exception, as HeaderExchangeHandler sends it. */
    static Response noSuchMethodReply() {
        NoSuchMethodException cause =
                new NoSuchMethodException("No such method cancel in class interface " + INTERFACE);
        Response res = new Response(22, "2.0.2");
        res.setStatus(Response.SERVICE_ERROR);
        res.setErrorMessage(StringUtils.toString(new RpcException(cause.getMessage(), cause)));
        return res;
    }

    private static byte[] encode(Object message) throws IOException {
        ChannelBuffer buffer = ChannelBuffers.dynamicBuffer(1024);
        new DubboCodec(FrameworkModel.defaultModel()).encode(Dubbo33Frames.channel("hessian2"), buffer, message);
        byte[] bytes = new byte[buffer.readableBytes()];
        buffer.readBytes(bytes);
        return bytes;
    }
}
