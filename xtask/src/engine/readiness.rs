//! Readiness: a server is ready when a real, verified call of the contract
//! succeeds, not when its port opens (a JVM listens long before its RPC
//! stack can serialise the contract's types).

use crate::engine::docker::Engine;
use anyhow::{bail, Result};
use rpclab_model::contract::Operation;
use std::collections::BTreeMap;
use std::time::{Duration, Instant};

/// What to probe, and what to tell the user when it never answers.
pub struct Probe<'a> {
    /// How the server is called in messages.
    pub name: &'a str,
    /// Its container, watched for an early exit.
    pub container: &'a str,
    pub protocol: &'a str,
    pub options: &'a BTreeMap<String, String>,
    pub target: &'a str,
    pub operation: Operation,
    pub timeout: Duration,
    /// Advice added to the time-out error.
    pub hint: &'a str,
}

/// Probes until a verified call succeeds, the container exits, or the time
/// runs out; the errors carry the last lines of the server's log.
pub async fn wait(engine: &Engine, p: Probe<'_>) -> Result<()> {
    let started = Instant::now();
    let mut last_error = String::from("no attempt yet");
    while started.elapsed() < p.timeout {
        if let Some(code) = engine.exit_code(p.container).await? {
            let log = engine.log_tail(p.container, 40).await;
            bail!(
                "{} exited with code {code} before it was ready.\n--- last lines of its log ---\n{log}",
                p.name
            );
        }
        let probe = rpclab_client::probe::probe(
            p.protocol,
            p.options,
            p.target,
            p.operation,
            Duration::from_secs(2),
        );
        match probe.await {
            Ok(latency) => {
                crate::say!(
                    "{} ready after {:.1} s (probe {} verified in {:.2} ms)",
                    p.name,
                    started.elapsed().as_secs_f64(),
                    p.operation,
                    latency.as_secs_f64() * 1e3
                );
                return Ok(());
            }
            Err(e) => last_error = e.to_string(),
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    let log = engine.log_tail(p.container, 40).await;
    bail!(
        "{} was not ready after {} s (last probe: {last_error}).\n{}\n--- last lines of its log ---\n{log}",
        p.name,
        p.timeout.as_secs(),
        p.hint
    )
}
