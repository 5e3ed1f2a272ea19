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
    /// The fields in declaration order, as Java's constructor takes them.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        order_id: i64,
        phone: Option<&str>,
        name: Option<&str>,
        order_num: Option<&str>,
        order_date: i32,
        ticket_type: i32,
        amount: f64,
        order_status: i32,
    ) -> Self {
        Self {
            order_id,
            phone: phone.map(str::to_owned),
            name: name.map(str::to_owned),
            order_num: order_num.map(str::to_owned),
            order_date,
            ticket_type,
            amount,
            order_status,
        }
    }

    /// `Cases.typical()` of the golden projects.
    pub fn typical() -> Self {
        Self::new(
            1234567890123,
            Some("13800138000"),
            Some("rpclab"),
            Some("ORD-2026-0001"),
            20261129,
            2,
            99.5,
            1,
        )
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
