//! What the protocol tests share: checking every operation of the contract
//! against a server that is already running (a real one, named by an
//! environment variable), through the public `Protocol` API.

use rpclab_client::protocol::{Connection, Protocol, WireCounter};
use rpclab_model::contract::Operation;
use std::collections::BTreeMap;
use std::sync::Arc;

/// `key=value,key=value` from the environment variable `var` (empty if unset).
#[allow(dead_code)]
pub fn options_from_env(var: &str) -> BTreeMap<String, String> {
    std::env::var(var)
        .unwrap_or_default()
        .split(',')
        .filter(|kv| !kv.is_empty())
        .map(|kv| {
            let (k, v) = kv.split_once('=').expect("options are key=value,...");
            (k.to_string(), v.to_string())
        })
        .collect()
}

/// Calls every operation `rounds` times from `callers` tasks on each of
/// `connections` connections to `target`, checking every reply; returns the
/// counter of the bytes on the wire.
pub async fn every_operation_verified<P: Protocol>(
    protocol: &P,
    target: &str,
    connections: usize,
    callers: usize,
    rounds: usize,
) -> WireCounter {
    let counter = WireCounter::default();
    let mut tasks = Vec::new();
    for op in Operation::ALL {
        for _ in 0..connections {
            let conn = Arc::new(protocol.connect(target, counter.clone()).await.unwrap());
            for _ in 0..callers {
                let conn = Arc::clone(&conn);
                tasks.push(tokio::spawn(async move {
                    let call = op.call();
                    for _ in 0..rounds {
                        let reply = conn
                            .call(&call)
                            .await
                            .unwrap_or_else(|e| panic!("{op}: {e}"));
                        assert!(reply == call.expected, "{op}: wrong reply");
                    }
                }));
            }
        }
    }
    for task in tasks {
        task.await.unwrap();
    }
    let (sent, received) = counter.totals();
    assert!(sent > 0 && received > 0);
    counter
}
