// The rpclab service contract for Apache Thrift. See contract/README.md.
namespace java rpclab.thrift
namespace rs rpclab

// The 8-field order of seed 001, with the seed's field ids.
struct Order {
  1: i64 orderId
  2: string phone
  3: string name
  4: string orderNum
  5: i32 orderDate
  6: i32 ticketType
  7: double amount
  8: i32 orderStatus
}

service Bench {
  Order echoOrder(1: Order order)
  list<Order> echoOrders(1: list<Order> orders)
  string echoString(1: string value)
  // Returns "hello " + name.
  string hello(1: string name)
  void empty()
}
