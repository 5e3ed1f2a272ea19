package rpclab.thrift;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import org.apache.thrift.ProcessFunction;
import org.apache.thrift.TApplicationException;
import org.apache.thrift.TBase;
import org.apache.thrift.TBaseProcessor;
import org.apache.thrift.TException;
import org.apache.thrift.TFieldIdEnum;
import org.apache.thrift.TServiceClient;
import org.apache.thrift.protocol.TField;
import org.apache.thrift.protocol.TList;
import org.apache.thrift.protocol.TProtocol;
import org.apache.thrift.protocol.TProtocolUtil;
import org.apache.thrift.protocol.TStruct;
import org.apache.thrift.protocol.TType;

/**
 * service Bench of contract/bench.thrift, written by hand against the
 * libthrift 0.9.x API: the service interface, a client over
 * {@link TServiceClient} and a {@link TBaseProcessor} with one
 * {@link ProcessFunction} per method, the shape a 0.9.x compiler generates.
 *
 * <p>On the wire every call is a message of the method's name whose body is
 * an args struct holding the argument in field 1, and every reply a result
 * struct holding the return value in field 0 ({@code success}); empty() has
 * an empty args and an empty result struct. The compiler generates one class
 * per args and result struct; here one class, {@link Slot}, is each of them,
 * told apart by its {@link Slot.Spec} (struct name, field id and name, value
 * codec). Struct and field names never reach the binary or compact protocol.
 */
public final class Bench {
    private Bench() {}

    public interface Iface {
        Order echoOrder(Order order) throws TException;

        List<Order> echoOrders(List<Order> orders) throws TException;

        String echoString(String value) throws TException;

        String hello(String name) throws TException;

        void empty() throws TException;
    }

    /** How one kind of value is written and read. */
    static final class Codec<V> {
        interface Writer<V> {
            void write(TProtocol oprot, V value) throws TException;
        }

        interface Reader<V> {
            V read(TProtocol iprot) throws TException;
        }

        final byte type;
        private final Writer<V> writer;
        private final Reader<V> reader;

        Codec(byte type, Writer<V> writer, Reader<V> reader) {
            this.type = type;
            this.writer = writer;
            this.reader = reader;
        }

        void write(TProtocol oprot, V value) throws TException {
            writer.write(oprot, value);
        }

        V read(TProtocol iprot) throws TException {
            return reader.read(iprot);
        }
    }

    static final Codec<String> STRING = new Codec<>(TType.STRING, TProtocol::writeString, TProtocol::readString);
    static final Codec<Order> ORDER = new Codec<>(TType.STRUCT, (oprot, order) -> order.write(oprot), Bench::readOrder);
    static final Codec<List<Order>> ORDER_LIST = new Codec<>(TType.LIST, Bench::writeOrders, Bench::readOrders);

    private static Order readOrder(TProtocol iprot) throws TException {
        Order order = new Order();
        order.read(iprot);
        return order;
    }

    private static void writeOrders(TProtocol oprot, List<Order> orders) throws TException {
        oprot.writeListBegin(new TList(TType.STRUCT, orders.size()));
        for (Order order : orders) {
            order.write(oprot);
        }
        oprot.writeListEnd();
    }

    private static List<Order> readOrders(TProtocol iprot) throws TException {
        TList list = iprot.readListBegin();
        List<Order> orders = new ArrayList<>(list.size);
        for (int i = 0; i < list.size; i++) {
            orders.add(readOrder(iprot));
        }
        iprot.readListEnd();
        return orders;
    }

    /**
     * An args or result struct: at most one field. Fields of another id or
     * type are skipped when reading, as generated code does.
     */
    public static final class Slot<V> implements TBase<Slot<V>, Slot.Field>, Cloneable {
        private static final long serialVersionUID = 1L;

        /** The struct's shape: its name and its one field (none for empty()). */
        static final class Spec<V> {
            final TStruct struct;
            final Field field;
            final TField desc;
            final Codec<V> codec;

            Spec(String structName, int id, String fieldName, Codec<V> codec) {
                this.struct = new TStruct(structName);
                this.desc = new TField(fieldName, codec.type, (short) id);
                this.field = new Field(desc);
                this.codec = codec;
            }

            /** A struct with no fields. */
            Spec(String structName) {
                this.struct = new TStruct(structName);
                this.field = null;
                this.desc = null;
                this.codec = null;
            }
        }

        /** The struct's one field, as the compiler's {@code _Fields}. */
        public static final class Field implements TFieldIdEnum {
            private final TField desc;

            Field(TField desc) {
                this.desc = desc;
            }

            @Override
            public short getThriftFieldId() {
                return desc.id;
            }

            @Override
            public String getFieldName() {
                return desc.name;
            }
        }

        private final Spec<V> spec;
        V value;

        Slot(Spec<V> spec) {
            this.spec = spec;
        }

        Slot(Spec<V> spec, V value) {
            this.spec = spec;
            this.value = value;
        }

        @Override
        public void read(TProtocol iprot) throws TException {
            iprot.readStructBegin();
            while (true) {
                TField field = iprot.readFieldBegin();
                if (field.type == TType.STOP) {
                    break;
                }
                if (spec.field != null && field.id == spec.desc.id && field.type == spec.desc.type) {
                    value = spec.codec.read(iprot);
                } else {
                    TProtocolUtil.skip(iprot, field.type);
                }
                iprot.readFieldEnd();
            }
            iprot.readStructEnd();
        }

        @Override
        public void write(TProtocol oprot) throws TException {
            oprot.writeStructBegin(spec.struct);
            if (spec.field != null && value != null) {
                oprot.writeFieldBegin(spec.desc);
                spec.codec.write(oprot, value);
                oprot.writeFieldEnd();
            }
            oprot.writeFieldStop();
            oprot.writeStructEnd();
        }

        @Override
        public Field fieldForId(int fieldId) {
            return spec.field != null && spec.desc.id == fieldId ? spec.field : null;
        }

        @Override
        public boolean isSet(Field field) {
            return field == spec.field && value != null;
        }

        @Override
        public Object getFieldValue(Field field) {
            if (field != spec.field || field == null) {
                throw new IllegalArgumentException("no such field in " + spec.struct.name);
            }
            return value;
        }

        @Override
        @SuppressWarnings("unchecked")
        public void setFieldValue(Field field, Object v) {
            if (field != spec.field || field == null) {
                throw new IllegalArgumentException("no such field in " + spec.struct.name);
            }
            value = (V) v;
        }

        @Override
        public Slot<V> deepCopy() {
            return new Slot<>(spec, copy(value));
        }

        @SuppressWarnings("unchecked")
        private static <V> V copy(V v) {
            if (v instanceof Order) {
                return (V) ((Order) v).deepCopy();
            }
            if (v instanceof List) {
                List<Order> copy = new ArrayList<>();
                for (Object o : (List<?>) v) {
                    copy.add(((Order) o).deepCopy());
                }
                return (V) copy;
            }
            return v;
        }

        @Override
        public void clear() {
            value = null;
        }

        @Override
        @SuppressWarnings("unchecked")
        public int compareTo(Slot<V> other) {
            if (value == null || other.value == null) {
                return Boolean.compare(value != null, other.value != null);
            }
            if (value instanceof List) {
                List<Order> a = (List<Order>) value;
                List<Order> b = (List<Order>) other.value;
                int c = Integer.compare(a.size(), b.size());
                for (int i = 0; c == 0 && i < a.size(); i++) {
                    c = a.get(i).compareTo(b.get(i));
                }
                return c;
            }
            return ((Comparable<V>) value).compareTo(other.value);
        }

        @Override
        public boolean equals(Object o) {
            return o instanceof Slot && ((Slot<?>) o).spec == spec && Objects.equals(((Slot<?>) o).value, value);
        }

        @Override
        public int hashCode() {
            return Objects.hashCode(value);
        }

        @Override
        public String toString() {
            return spec.struct.name + "(" + (spec.field == null ? "" : spec.desc.name + ":" + value) + ")";
        }
    }

    // The args and result structs, with the compiler's names.
    static final Slot.Spec<Order> ECHO_ORDER_ARGS = new Slot.Spec<>("echoOrder_args", 1, "order", ORDER);
    static final Slot.Spec<Order> ECHO_ORDER_RESULT = new Slot.Spec<>("echoOrder_result", 0, "success", ORDER);
    static final Slot.Spec<List<Order>> ECHO_ORDERS_ARGS =
            new Slot.Spec<>("echoOrders_args", 1, "orders", ORDER_LIST);
    static final Slot.Spec<List<Order>> ECHO_ORDERS_RESULT =
            new Slot.Spec<>("echoOrders_result", 0, "success", ORDER_LIST);
    static final Slot.Spec<String> ECHO_STRING_ARGS = new Slot.Spec<>("echoString_args", 1, "value", STRING);
    static final Slot.Spec<String> ECHO_STRING_RESULT = new Slot.Spec<>("echoString_result", 0, "success", STRING);
    static final Slot.Spec<String> HELLO_ARGS = new Slot.Spec<>("hello_args", 1, "name", STRING);
    static final Slot.Spec<String> HELLO_RESULT = new Slot.Spec<>("hello_result", 0, "success", STRING);
    static final Slot.Spec<Void> EMPTY_ARGS = new Slot.Spec<>("empty_args");
    static final Slot.Spec<Void> EMPTY_RESULT = new Slot.Spec<>("empty_result");

    /** A blocking client: one call at a time, as the generated {@code Bench.Client}. */
    public static class Client extends TServiceClient implements Iface {
        public Client(TProtocol prot) {
            super(prot, prot);
        }

        public Client(TProtocol iprot, TProtocol oprot) {
            super(iprot, oprot);
        }

        private <A, R> R call(String method, Slot.Spec<A> args, A argument, Slot.Spec<R> result)
                throws TException {
            sendBase(method, new Slot<>(args, argument));
            Slot<R> reply = new Slot<>(result);
            receiveBase(reply, method);
            if (result.field != null && reply.value == null) {
                throw new TApplicationException(TApplicationException.MISSING_RESULT,
                        method + " failed: unknown result");
            }
            return reply.value;
        }

        @Override
        public Order echoOrder(Order order) throws TException {
            return call("echoOrder", ECHO_ORDER_ARGS, order, ECHO_ORDER_RESULT);
        }

        @Override
        public List<Order> echoOrders(List<Order> orders) throws TException {
            return call("echoOrders", ECHO_ORDERS_ARGS, orders, ECHO_ORDERS_RESULT);
        }

        @Override
        public String echoString(String value) throws TException {
            return call("echoString", ECHO_STRING_ARGS, value, ECHO_STRING_RESULT);
        }

        @Override
        public String hello(String name) throws TException {
            return call("hello", HELLO_ARGS, name, HELLO_RESULT);
        }

        @Override
        public void empty() throws TException {
            call("empty", EMPTY_ARGS, null, EMPTY_RESULT);
        }
    }

    /** One method: its args struct, its result struct and the call of the handler. */
    private interface Invoke<I, A, R> {
        R apply(I iface, A argument) throws TException;
    }

    private static final class Function<I extends Iface, A, R> extends ProcessFunction<I, Slot<A>> {
        private final Slot.Spec<A> args;
        private final Slot.Spec<R> result;
        private final Invoke<I, A, R> invoke;

        Function(String method, Slot.Spec<A> args, Slot.Spec<R> result, Invoke<I, A, R> invoke) {
            super(method);
            this.args = args;
            this.result = result;
            this.invoke = invoke;
        }

        @Override
        public Slot<A> getEmptyArgsInstance() {
            return new Slot<>(args);
        }

        @Override
        protected boolean isOneway() {
            return false;
        }

        @Override
        public TBase getResult(I iface, Slot<A> call) throws TException {
            return new Slot<>(result, invoke.apply(iface, call.value));
        }
    }

    /** Reads a call, runs the handler's method and writes the reply (TBaseProcessor does the message). */
    public static class Processor<I extends Iface> extends TBaseProcessor<I> {
        public Processor(I iface) {
            super(iface, processMap());
        }

        private static <I extends Iface> Map<String, ProcessFunction<I, ? extends TBase>> processMap() {
            Map<String, ProcessFunction<I, ? extends TBase>> map = new HashMap<>();
            map.put("echoOrder", new Function<I, Order, Order>("echoOrder", ECHO_ORDER_ARGS, ECHO_ORDER_RESULT,
                    Iface::echoOrder));
            map.put("echoOrders", new Function<I, List<Order>, List<Order>>("echoOrders", ECHO_ORDERS_ARGS,
                    ECHO_ORDERS_RESULT, Iface::echoOrders));
            map.put("echoString", new Function<I, String, String>("echoString", ECHO_STRING_ARGS,
                    ECHO_STRING_RESULT, Iface::echoString));
            map.put("hello", new Function<I, String, String>("hello", HELLO_ARGS, HELLO_RESULT, Iface::hello));
            map.put("empty", new Function<I, Void, Void>("empty", EMPTY_ARGS, EMPTY_RESULT, (iface, none) -> {
                iface.empty();
                return null;
            }));
            return map;
        }
    }
}
