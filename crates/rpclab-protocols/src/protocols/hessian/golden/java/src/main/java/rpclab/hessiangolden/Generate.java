package rpclab.hessiangolden;

import com.caucho.hessian.io.Hessian2Output;
import com.caucho.hessian.server.HessianSkeleton;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import rpclab.contract.BenchService;
import rpclab.contract.BenchServiceImpl;

/**
 * Writes, for every case, {@code <case>.call.bin} (the call as HessianProxy
 * writes it: Hessian2Output.call) and {@code <case>.reply.bin} (the
 * skeleton's reply to that call: what HessianServlet sends back).
 * Usage: Generate OUT_DIR.
 */
public final class Generate {
    private Generate() {}

    static byte[] call(Cases.Case c) throws Exception {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        Hessian2Output out = new Hessian2Output(bytes);
        out.call(c.method(), c.args());
        out.flush();
        return bytes.toByteArray();
    }

    static byte[] reply(byte[] call) throws Exception {
        HessianSkeleton skeleton = new HessianSkeleton(new BenchServiceImpl(), BenchService.class);
        ByteArrayOutputStream reply = new ByteArrayOutputStream();
        skeleton.invoke(new ByteArrayInputStream(call), reply);
        return reply.toByteArray();
    }

    public static void main(String[] args) throws Exception {
        Path out = Path.of(args[0]);
        Files.createDirectories(out);
        for (Cases.Case c : Cases.all().values()) {
            byte[] call = call(c);
            Files.write(out.resolve(c.name() + ".call.bin"), call);
            Files.write(out.resolve(c.name() + ".reply.bin"), reply(call));
            System.out.println("wrote " + c.name());
        }
    }
}
