//! One verified call: the lab's readiness check.
//!
//! An open port says nothing about whether a JVM has finished starting its
//! RPC stack, registered its services and can serialise the contract's
//! types. A probe makes a real call of the contract and checks the reply,
//! exactly as a measured call is checked.

use crate::load::timed_call;
use rpclab_model::contract::Operation;
use rpclab_protocols::protocol::{CallError, Protocol, WireCounter};
use rpclab_protocols::protocols::{dispatch, WithProtocol};
use std::collections::BTreeMap;
use std::time::Duration;

/// A verified call: how long it took, and what it called.
#[derive(Clone, Debug)]
pub struct Verified {
    pub latency: Duration,
    /// The method of a generic protocol (`package.Service/Method`); `None`
    /// for the contract's operation.
    pub call: Option<String>,
}

/// Connects to `target` and makes one `operation` call (a generic
/// protocol: the call its options name), verified.
pub async fn probe(
    protocol: &str,
    options: &BTreeMap<String, String>,
    target: &str,
    operation: Operation,
    timeout: Duration,
) -> Result<Verified, CallError> {
    dispatch(
        protocol,
        options,
        Probe {
            target,
            operation,
            timeout,
        },
    )
    .await?
}

struct Probe<'a> {
    target: &'a str,
    operation: Operation,
    timeout: Duration,
}

impl WithProtocol for Probe<'_> {
    type Output = Result<Verified, CallError>;

    async fn run<P: Protocol>(self, protocol: P) -> Self::Output {
        let conn = tokio::time::timeout(
            self.timeout,
            protocol.connect(self.target, WireCounter::default()),
        )
        .await
        .map_err(|_| CallError::Timeout)??;
        let (latency, outcome) = timed_call(&conn, &self.operation.call(), self.timeout).await;
        outcome.map(|()| Verified {
            latency,
            call: protocol.generic_call().map(|c| c.method),
        })
    }
}
