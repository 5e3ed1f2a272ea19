//! The contract's Order (contract/java/rpclab/contract/Order.java) as the
//! golden cases of the Java-object codecs write it: the strings may be
//! null, unlike the lab's `rpclab_model::contract::Order`, which a load
//! client sends.
//!
//! Each crate's tests add its own writer and reader with a local trait.

/// The class name of the contract's Order.
pub const ORDER_CLASS: &str = "rpclab.contract.Order";

/// One Order, field for field.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Order {
    pub order_id: i64,
    pub phone: Option<String>,
    pub name: Option<String>,
    pub order_num: Option<String>,
    pub order_date: i32,
    pub ticket_type: i32,
    pub amount: f64,
    pub order_status: i32,
}

impl Order {
    /// `Cases.typical()` of the golden projects.
    pub fn typical() -> Self {
        Self {
            order_id: 1234567890123,
            phone: Some("13800138000".into()),
            name: Some("rpclab".into()),
            order_num: Some("ORD-2026-0001".into()),
            order_date: 20261129,
            ticket_type: 2,
            amount: 99.5,
            order_status: 1,
        }
    }

    /// Every string empty (not null) and every number zero: the golden
    /// cases' `order_empty_strings`.
    pub fn empty_strings() -> Self {
        Self {
            phone: Some(String::new()),
            name: Some(String::new()),
            order_num: Some(String::new()),
            ..Self::default()
        }
    }

    /// `equals` of the Java class (the amount compared bit for bit, as
    /// `Double.compare` does).
    pub fn java_equals(&self, o: &Order) -> bool {
        self.order_id == o.order_id
            && self.phone == o.phone
            && self.name == o.name
            && self.order_num == o.order_num
            && self.order_date == o.order_date
            && self.ticket_type == o.ticket_type
            && self.amount.to_bits() == o.amount.to_bits()
            && self.order_status == o.order_status
    }
}

/// The fields in declaration order, as Java's constructor takes them: the
/// tuple a property test's strategies generate.
pub type OrderFields = (
    i64,
    Option<String>,
    Option<String>,
    Option<String>,
    i32,
    i32,
    f64,
    i32,
);

/// Orders of any numbers and of strings, each maybe null, that match the
/// proptest regexes `phone`, `name` and `order_num`: a property test's
/// strategy (feature `proptest`).
#[cfg(feature = "proptest")]
pub fn arbitrary_order(
    phone: &'static str,
    name: &'static str,
    order_num: &'static str,
) -> impl proptest::strategy::Strategy<Value = Order> {
    use proptest::prelude::*;
    (
        any::<i64>(),
        proptest::option::of(phone),
        proptest::option::of(name),
        proptest::option::of(order_num),
        any::<i32>(),
        any::<i32>(),
        any::<f64>(),
        any::<i32>(),
    )
        .prop_map(Order::from)
}

/// An Order from generated fields (`prop_map(Order::from)`).
impl From<OrderFields> for Order {
    fn from(fields: OrderFields) -> Self {
        let (order_id, phone, name, order_num, order_date, ticket_type, amount, order_status) =
            fields;
        Self {
            order_id,
            phone,
            name,
            order_num,
            order_date,
            ticket_type,
            amount,
            order_status,
        }
    }
}
