package rpclab.thrift;

import java.util.Collections;
import java.util.EnumMap;
import java.util.Map;
import java.util.Objects;
import org.apache.thrift.TBase;
import org.apache.thrift.TBaseHelper;
import org.apache.thrift.TException;
import org.apache.thrift.TFieldIdEnum;
import org.apache.thrift.protocol.TField;
import org.apache.thrift.protocol.TProtocol;
import org.apache.thrift.protocol.TProtocolUtil;
import org.apache.thrift.protocol.TStruct;
import org.apache.thrift.protocol.TType;

/**
 * struct Order of contract/bench.thrift, written by hand against the
 * libthrift 0.9.x API (the Thrift 0.17 compiler's code does not compile
 * against 0.9.x). On the wire it is what a 0.9.x compiler generates for
 * default-requiredness fields: every field in id order, the primitives
 * always, a string only when it is not null, then a stop byte; unknown
 * fields and fields of an unexpected type are skipped when reading.
 */
public class Order implements TBase<Order, Order._Fields>, Cloneable {
    private static final long serialVersionUID = 1L;

    private static final TStruct STRUCT_DESC = new TStruct("Order");
    private static final TField ORDER_ID_FIELD_DESC = new TField("orderId", TType.I64, (short) 1);
    private static final TField PHONE_FIELD_DESC = new TField("phone", TType.STRING, (short) 2);
    private static final TField NAME_FIELD_DESC = new TField("name", TType.STRING, (short) 3);
    private static final TField ORDER_NUM_FIELD_DESC = new TField("orderNum", TType.STRING, (short) 4);
    private static final TField ORDER_DATE_FIELD_DESC = new TField("orderDate", TType.I32, (short) 5);
    private static final TField TICKET_TYPE_FIELD_DESC = new TField("ticketType", TType.I32, (short) 6);
    private static final TField AMOUNT_FIELD_DESC = new TField("amount", TType.DOUBLE, (short) 7);
    private static final TField ORDER_STATUS_FIELD_DESC = new TField("orderStatus", TType.I32, (short) 8);

    /** The fields, by id and name, as the compiler's {@code _Fields} enum. */
    public enum _Fields implements TFieldIdEnum {
        ORDER_ID((short) 1, "orderId"),
        PHONE((short) 2, "phone"),
        NAME((short) 3, "name"),
        ORDER_NUM((short) 4, "orderNum"),
        ORDER_DATE((short) 5, "orderDate"),
        TICKET_TYPE((short) 6, "ticketType"),
        AMOUNT((short) 7, "amount"),
        ORDER_STATUS((short) 8, "orderStatus");

        private final short id;
        private final String name;

        _Fields(short id, String name) {
            this.id = id;
            this.name = name;
        }

        /** The field with this id, or null. */
        public static _Fields findByThriftId(int id) {
            return id >= 1 && id <= 8 ? values()[id - 1] : null;
        }

        @Override
        public short getThriftFieldId() {
            return id;
        }

        @Override
        public String getFieldName() {
            return name;
        }
    }

    /** Field names by field, as the compiler's metaDataMap keys. */
    public static final Map<_Fields, String> FIELD_NAMES;

    static {
        Map<_Fields, String> names = new EnumMap<>(_Fields.class);
        for (_Fields f : _Fields.values()) {
            names.put(f, f.getFieldName());
        }
        FIELD_NAMES = Collections.unmodifiableMap(names);
    }

    // isset bits of the primitive fields
    private static final int ORDER_ID_ISSET = 1;
    private static final int ORDER_DATE_ISSET = 1 << 1;
    private static final int TICKET_TYPE_ISSET = 1 << 2;
    private static final int AMOUNT_ISSET = 1 << 3;
    private static final int ORDER_STATUS_ISSET = 1 << 4;

    public long orderId;
    public String phone;
    public String name;
    public String orderNum;
    public int orderDate;
    public int ticketType;
    public double amount;
    public int orderStatus;
    private int issetBits;

    public Order() {}

    public Order(long orderId, String phone, String name, String orderNum, int orderDate, int ticketType,
            double amount, int orderStatus) {
        this.orderId = orderId;
        this.phone = phone;
        this.name = name;
        this.orderNum = orderNum;
        this.orderDate = orderDate;
        this.ticketType = ticketType;
        this.amount = amount;
        this.orderStatus = orderStatus;
        this.issetBits = ORDER_ID_ISSET | ORDER_DATE_ISSET | TICKET_TYPE_ISSET | AMOUNT_ISSET | ORDER_STATUS_ISSET;
    }

    /** A deep copy (strings are immutable, so a field copy). */
    public Order(Order other) {
        this.orderId = other.orderId;
        this.phone = other.phone;
        this.name = other.name;
        this.orderNum = other.orderNum;
        this.orderDate = other.orderDate;
        this.ticketType = other.ticketType;
        this.amount = other.amount;
        this.orderStatus = other.orderStatus;
        this.issetBits = other.issetBits;
    }

    public long getOrderId() {
        return orderId;
    }

    public String getPhone() {
        return phone;
    }

    public String getName() {
        return name;
    }

    public String getOrderNum() {
        return orderNum;
    }

    public int getOrderDate() {
        return orderDate;
    }

    public int getTicketType() {
        return ticketType;
    }

    public double getAmount() {
        return amount;
    }

    public int getOrderStatus() {
        return orderStatus;
    }

    @Override
    public Order deepCopy() {
        return new Order(this);
    }

    @Override
    public void clear() {
        orderId = 0;
        phone = null;
        name = null;
        orderNum = null;
        orderDate = 0;
        ticketType = 0;
        amount = 0.0;
        orderStatus = 0;
        issetBits = 0;
    }

    @Override
    public _Fields fieldForId(int fieldId) {
        return _Fields.findByThriftId(fieldId);
    }

    @Override
    public boolean isSet(_Fields field) {
        switch (field) {
            case ORDER_ID:
                return (issetBits & ORDER_ID_ISSET) != 0;
            case PHONE:
                return phone != null;
            case NAME:
                return name != null;
            case ORDER_NUM:
                return orderNum != null;
            case ORDER_DATE:
                return (issetBits & ORDER_DATE_ISSET) != 0;
            case TICKET_TYPE:
                return (issetBits & TICKET_TYPE_ISSET) != 0;
            case AMOUNT:
                return (issetBits & AMOUNT_ISSET) != 0;
            case ORDER_STATUS:
                return (issetBits & ORDER_STATUS_ISSET) != 0;
            default:
                throw new IllegalStateException(String.valueOf(field));
        }
    }

    @Override
    public Object getFieldValue(_Fields field) {
        switch (field) {
            case ORDER_ID:
                return orderId;
            case PHONE:
                return phone;
            case NAME:
                return name;
            case ORDER_NUM:
                return orderNum;
            case ORDER_DATE:
                return orderDate;
            case TICKET_TYPE:
                return ticketType;
            case AMOUNT:
                return amount;
            case ORDER_STATUS:
                return orderStatus;
            default:
                throw new IllegalStateException(String.valueOf(field));
        }
    }

    @Override
    public void setFieldValue(_Fields field, Object value) {
        switch (field) {
            case ORDER_ID:
                orderId = value == null ? 0 : (Long) value;
                issetBits = set(issetBits, ORDER_ID_ISSET, value != null);
                break;
            case PHONE:
                phone = (String) value;
                break;
            case NAME:
                name = (String) value;
                break;
            case ORDER_NUM:
                orderNum = (String) value;
                break;
            case ORDER_DATE:
                orderDate = value == null ? 0 : (Integer) value;
                issetBits = set(issetBits, ORDER_DATE_ISSET, value != null);
                break;
            case TICKET_TYPE:
                ticketType = value == null ? 0 : (Integer) value;
                issetBits = set(issetBits, TICKET_TYPE_ISSET, value != null);
                break;
            case AMOUNT:
                amount = value == null ? 0.0 : (Double) value;
                issetBits = set(issetBits, AMOUNT_ISSET, value != null);
                break;
            case ORDER_STATUS:
                orderStatus = value == null ? 0 : (Integer) value;
                issetBits = set(issetBits, ORDER_STATUS_ISSET, value != null);
                break;
            default:
                throw new IllegalStateException(String.valueOf(field));
        }
    }

    private static int set(int bits, int bit, boolean on) {
        return on ? bits | bit : bits & ~bit;
    }

    @Override
    public void read(TProtocol iprot) throws TException {
        iprot.readStructBegin();
        while (true) {
            TField field = iprot.readFieldBegin();
            if (field.type == TType.STOP) {
                break;
            }
            switch (field.id) {
                case 1:
                    if (field.type == TType.I64) {
                        orderId = iprot.readI64();
                        issetBits |= ORDER_ID_ISSET;
                    } else {
                        TProtocolUtil.skip(iprot, field.type);
                    }
                    break;
                case 2:
                    if (field.type == TType.STRING) {
                        phone = iprot.readString();
                    } else {
                        TProtocolUtil.skip(iprot, field.type);
                    }
                    break;
                case 3:
                    if (field.type == TType.STRING) {
                        name = iprot.readString();
                    } else {
                        TProtocolUtil.skip(iprot, field.type);
                    }
                    break;
                case 4:
                    if (field.type == TType.STRING) {
                        orderNum = iprot.readString();
                    } else {
                        TProtocolUtil.skip(iprot, field.type);
                    }
                    break;
                case 5:
                    if (field.type == TType.I32) {
                        orderDate = iprot.readI32();
                        issetBits |= ORDER_DATE_ISSET;
                    } else {
                        TProtocolUtil.skip(iprot, field.type);
                    }
                    break;
                case 6:
                    if (field.type == TType.I32) {
                        ticketType = iprot.readI32();
                        issetBits |= TICKET_TYPE_ISSET;
                    } else {
                        TProtocolUtil.skip(iprot, field.type);
                    }
                    break;
                case 7:
                    if (field.type == TType.DOUBLE) {
                        amount = iprot.readDouble();
                        issetBits |= AMOUNT_ISSET;
                    } else {
                        TProtocolUtil.skip(iprot, field.type);
                    }
                    break;
                case 8:
                    if (field.type == TType.I32) {
                        orderStatus = iprot.readI32();
                        issetBits |= ORDER_STATUS_ISSET;
                    } else {
                        TProtocolUtil.skip(iprot, field.type);
                    }
                    break;
                default:
                    TProtocolUtil.skip(iprot, field.type);
            }
            iprot.readFieldEnd();
        }
        iprot.readStructEnd();
    }

    @Override
    public void write(TProtocol oprot) throws TException {
        oprot.writeStructBegin(STRUCT_DESC);
        oprot.writeFieldBegin(ORDER_ID_FIELD_DESC);
        oprot.writeI64(orderId);
        oprot.writeFieldEnd();
        if (phone != null) {
            oprot.writeFieldBegin(PHONE_FIELD_DESC);
            oprot.writeString(phone);
            oprot.writeFieldEnd();
        }
        if (name != null) {
            oprot.writeFieldBegin(NAME_FIELD_DESC);
            oprot.writeString(name);
            oprot.writeFieldEnd();
        }
        if (orderNum != null) {
            oprot.writeFieldBegin(ORDER_NUM_FIELD_DESC);
            oprot.writeString(orderNum);
            oprot.writeFieldEnd();
        }
        oprot.writeFieldBegin(ORDER_DATE_FIELD_DESC);
        oprot.writeI32(orderDate);
        oprot.writeFieldEnd();
        oprot.writeFieldBegin(TICKET_TYPE_FIELD_DESC);
        oprot.writeI32(ticketType);
        oprot.writeFieldEnd();
        oprot.writeFieldBegin(AMOUNT_FIELD_DESC);
        oprot.writeDouble(amount);
        oprot.writeFieldEnd();
        oprot.writeFieldBegin(ORDER_STATUS_FIELD_DESC);
        oprot.writeI32(orderStatus);
        oprot.writeFieldEnd();
        oprot.writeFieldStop();
        oprot.writeStructEnd();
    }

    @Override
    public int compareTo(Order other) {
        int c = Long.compare(orderId, other.orderId);
        if (c == 0) {
            c = compareStrings(phone, other.phone);
        }
        if (c == 0) {
            c = compareStrings(name, other.name);
        }
        if (c == 0) {
            c = compareStrings(orderNum, other.orderNum);
        }
        if (c == 0) {
            c = Integer.compare(orderDate, other.orderDate);
        }
        if (c == 0) {
            c = Integer.compare(ticketType, other.ticketType);
        }
        if (c == 0) {
            c = Double.compare(amount, other.amount);
        }
        if (c == 0) {
            c = Integer.compare(orderStatus, other.orderStatus);
        }
        return c;
    }

    private static int compareStrings(String a, String b) {
        if (a == null || b == null) {
            return Boolean.compare(a != null, b != null);
        }
        return TBaseHelper.compareTo(a, b);
    }

    @Override
    public boolean equals(Object o) {
        if (this == o) {
            return true;
        }
        if (!(o instanceof Order)) {
            return false;
        }
        Order that = (Order) o;
        return orderId == that.orderId
                && Objects.equals(phone, that.phone)
                && Objects.equals(name, that.name)
                && Objects.equals(orderNum, that.orderNum)
                && orderDate == that.orderDate
                && ticketType == that.ticketType
                && Double.compare(amount, that.amount) == 0
                && orderStatus == that.orderStatus;
    }

    @Override
    public int hashCode() {
        return Objects.hash(orderId, phone, name, orderNum, orderDate, ticketType, amount, orderStatus);
    }

    @Override
    public String toString() {
        return "Order(orderId:" + orderId + ", phone:" + phone + ", name:" + name + ", orderNum:" + orderNum
                + ", orderDate:" + orderDate + ", ticketType:" + ticketType + ", amount:" + amount
                + ", orderStatus:" + orderStatus + ")";
    }
}
