package rpclab.bolt.golden;

import com.alipay.remoting.ResponseStatus;
import com.alipay.remoting.rpc.HeartbeatAckCommand;
import com.alipay.remoting.rpc.HeartbeatCommand;
import com.alipay.remoting.rpc.RpcCommand;
import com.alipay.remoting.rpc.RpcCommandFactory;
import com.alipay.remoting.rpc.protocol.RpcCommandEncoder;
import com.alipay.remoting.rpc.protocol.RpcResponseCommand;
import com.alipay.sofa.rpc.config.ConsumerConfig;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;
import rpclab.contract.BenchService;
import rpclab.contract.Order;
import rpclab.shared.ContractPayloads;

/**
 * Writes the bolt golden vectors: the frames a real SOFA-RPC consumer sends
 * and a real SOFA-RPC provider answers, recorded on the wire.
 *
 * <p>A provider (Golden.export) listens on 127.0.0.1; a recording TCP proxy
 * sits between it and a real ConsumerConfig (direct URL, no registry); each
 * call's bytes in either direction are written to
 * {@code <out>/<name>.request.bin} and {@code <name>.response.bin}. Bolt's
 * heartbeat frames and a bolt-level exception response (which a healthy
 * provider does not produce on demand) are encoded with bolt's own
 * RpcCommandEncoder.
 *
 * <p>Usage: Generate OUT_DIR (regenerate.sh builds and runs it).
 */
public final class Generate {
    private Generate() {}

    /** Bytes seen in one direction of the proxied connection. */
    static final class Tape {
        private final ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        private int mark;

        synchronized void append(byte[] b, int n) {
            bytes.write(b, 0, n);
        }

        /** The bytes since the previous call. */
        synchronized byte[] take() {
            byte[] all = bytes.toByteArray();
            byte[] out = java.util.Arrays.copyOfRange(all, mark, all.length);
            mark = all.length;
            return out;
        }
    }

    static Thread pump(InputStream in, OutputStream out, Tape tape) {
        Thread t = new Thread(() -> {
            byte[] buf = new byte[65536];
            try {
                int n;
                while ((n = in.read(buf)) > 0) {
                    tape.append(buf, n); // recorded before it is delivered
                    out.write(buf, 0, n);
                    out.flush();
                }
            } catch (IOException e) {
                // connection closed
            }
        }, "proxy-pump");
        t.setDaemon(true);
        t.start();
        return t;
    }

    static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0, 1, java.net.InetAddress.getByName(Golden.HOST))) {
            return s.getLocalPort();
        }
    }

    public static void main(String[] args) throws Exception {
        Path out = Path.of(args.length > 0 ? args[0] : "vectors");
        Files.createDirectories(out);

        int providerPort = freePort();
        Golden.export(providerPort);

        Tape sent = new Tape();
        Tape received = new Tape();
        ServerSocket proxy = new ServerSocket();
        proxy.bind(new InetSocketAddress(Golden.HOST, 0));
        Thread acceptor = new Thread(() -> {
            try {
                while (true) {
                    Socket client = proxy.accept();
                    Socket upstream = new Socket(Golden.HOST, providerPort);
                    client.setTcpNoDelay(true);
                    upstream.setTcpNoDelay(true);
                    pump(client.getInputStream(), upstream.getOutputStream(), sent);
                    pump(upstream.getInputStream(), client.getOutputStream(), received);
                }
            } catch (IOException e) {
                // closed
            }
        }, "proxy-accept");
        acceptor.setDaemon(true);
        acceptor.start();

        String url = "bolt://" + Golden.HOST + ":" + proxy.getLocalPort();
        BenchService bench = consumer(url, null);
        BenchService throwing = consumer(url, "throws");
        BenchService missing = consumer(url, "missing");

        List<String> names = new ArrayList<>();
        record(out, names, "order-echo", sent, received, () -> bench.echoOrder(ContractPayloads.sample(1, Order::new)));
        record(out, names, "orders-echo", sent, received, () -> bench.echoOrders(ContractPayloads.samples(100, Order::new)));
        record(out, names, "string-1k", sent, received, () -> bench.echoString(ContractPayloads.asciiText(1024)));
        record(out, names, "hello", sent, received, () -> bench.hello("aa"));
        record(out, names, "empty", sent, received, bench::empty);
        record(out, names, "hello-throws", sent, received, () -> throwing.hello("aa"));
        record(out, names, "hello-no-such-service", sent, received, () -> missing.hello("aa"));

        // Heartbeat and its ack, as bolt's RpcHeartbeatTrigger and
        // RpcHeartBeatProcessor make them.
        HeartbeatCommand beat = new HeartbeatCommand();
        beat.setId(7);
        write(out, names, "heartbeat.request.bin", encode(beat));
        HeartbeatAckCommand ack = new HeartbeatAckCommand();
        ack.setId(7);
        write(out, names, "heartbeat.response.bin", encode(ack));

        // A bolt-level exception response (status SERVER_EXCEPTION, an
        // RpcServerException as content), as RpcRequestProcessor sends when
        // processing a request fails outside the service.
        RpcResponseCommand error = new RpcCommandFactory().createExceptionResponse(
                9, new IllegalArgumentException("cannot read the request"), "rpclab golden");
        error.serialize();
        write(out, names, "server-exception.response.bin", encode(error));
        // A status alone, as RpcCommandFactory.createExceptionResponse(id,
        // status) makes it when the business pool rejects a request (spelt
        // out: bolt 1.4 lacks that factory method).
        RpcResponseCommand busy = new RpcResponseCommand();
        busy.setId(10);
        busy.setResponseStatus(ResponseStatus.SERVER_THREADPOOL_BUSY);
        write(out, names, "threadpool-busy.response.bin", encode(busy));

        Files.write(out.resolve("MANIFEST"), (String.join("\n", names) + "\n").getBytes());
        System.out.println("wrote " + names.size() + " vectors to " + out + " (sofa-rpc "
                + com.alipay.sofa.rpc.common.Version.VERSION + ")");
        System.exit(0);
    }

    static BenchService consumer(String url, String uniqueId) {
        ConsumerConfig<BenchService> consumer = new ConsumerConfig<BenchService>()
                .setInterfaceId(BenchService.class.getName())
                .setProtocol("bolt")
                .setDirectUrl(url)
                .setRegister(false)
                .setTimeout(30_000);
        if (uniqueId != null) {
            consumer.setUniqueId(uniqueId);
        }
        return consumer.refer();
    }

    static void record(Path out, List<String> names, String name, Tape sent, Tape received, Runnable call)
            throws Exception {
        sent.take();
        received.take();
        try {
            call.run();
        } catch (RuntimeException e) {
            System.out.println(name + ": the consumer threw " + e.getClass().getName() + ": " + e.getMessage());
        }
        Thread.sleep(300); // let the pumps finish
        write(out, names, name + ".request.bin", sent.take());
        write(out, names, name + ".response.bin", received.take());
    }

    static byte[] encode(RpcCommand command) throws Exception {
        ByteBuf buf = Unpooled.buffer();
        new RpcCommandEncoder().encode(null, command, buf);
        byte[] bytes = new byte[buf.readableBytes()];
        buf.readBytes(bytes);
        return bytes;
    }

    static void write(Path out, List<String> names, String file, byte[] bytes) throws IOException {
        if (bytes.length == 0) {
            throw new IllegalStateException(file + ": nothing recorded");
        }
        Files.write(out.resolve(file), bytes);
        names.add(file);
    }
}
