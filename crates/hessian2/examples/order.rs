//! Writes the lab contract's Order the way a Java Dubbo client would, reads
//! it back typed and as a dynamic value, and prints the bytes.
//!
//! cargo run -p hessian2 --example order

use hessian2::{hessian_object, Decoder, Encoder, Value};

/// rpclab's contract Order (Java class with these fields, in this order).
#[derive(Clone, Debug, Default, PartialEq)]
struct Order {
    order_id: i64,
    phone: String,
    name: String,
    order_num: String,
    order_date: i32,
    ticket_type: i32,
    amount: f64,
    order_status: i32,
}

hessian_object!(Order, "rpclab.contract.Order", {
    order_id => "orderId",
    phone => "phone",
    name => "name",
    order_num => "orderNum",
    order_date => "orderDate",
    ticket_type => "ticketType",
    amount => "amount",
    order_status => "orderStatus",
});

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let order = Order {
        order_id: 10_000_000_001,
        phone: "13800007919".into(),
        name: "customer-1".into(),
        order_num: "ORD-2015-000001".into(),
        order_date: 20_150_702,
        ticket_type: 1,
        amount: 100.75,
        order_status: 1,
    };

    // One encoder per message: the class definition is written once, the
    // second order refers to it by index.
    let mut buf = Vec::with_capacity(256);
    let mut enc = Encoder::new(&mut buf);
    enc.write(&order)?;
    enc.write(&vec![order.clone(), order.clone()])?;
    println!("{} bytes: {}", buf.len(), hex(&buf));

    let mut dec = Decoder::new(&buf);
    let one: Order = dec.read()?;
    let two: Vec<Order> = dec.read()?;
    assert_eq!(one, order);
    assert_eq!(two, vec![order.clone(), order]);

    let mut dec = Decoder::new(&buf);
    let dynamic: Value = dec.read_value()?;
    println!("as a Value: {dynamic}");
    Ok(())
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}
