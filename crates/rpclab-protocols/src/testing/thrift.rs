//! The contract's service behind the Thrift compiler's own server code
//! (`protocols::thrift::generated`): the peer that both the codec's unit
//! tests and the client's socket tests hold the hand-written Thrift codec
//! to, so that they test against one server, not two copies.

use crate::protocols::thrift::generated::{BenchSyncHandler, Order};
use rpclab_model::contract::HELLO_PREFIX;
use std::time::Duration;

/// Echoes as the contract says; `hello` greets, and takes its time when
/// greeting "slow" (the client's tests of a call in flight while others
/// overtake it).
pub struct Echo;

impl BenchSyncHandler for Echo {
    fn handle_echo_order(&self, order: Order) -> thrift::Result<Order> {
        Ok(order)
    }
    fn handle_echo_orders(&self, orders: Vec<Order>) -> thrift::Result<Vec<Order>> {
        Ok(orders)
    }
    fn handle_echo_string(&self, value: String) -> thrift::Result<String> {
        Ok(value)
    }
    fn handle_hello(&self, name: String) -> thrift::Result<String> {
        if name == "slow" {
            std::thread::sleep(Duration::from_millis(300));
        }
        Ok(format!("{HELLO_PREFIX}{name}"))
    }
    fn handle_empty(&self) -> thrift::Result<()> {
        Ok(())
    }
}
