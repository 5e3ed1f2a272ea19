//! `bench client --generic`: what a generic gRPC call costs the client,
//! templated or fixed, unary or streamed.
//!
//! A user's own method is called from JSON: the request is encoded once
//! and, when it holds template values (`{{.RequestNumber}}`, …), kept in
//! pieces that each call fills in ([`rpclab_protocols::template`]). This
//! bench measures what that costs against the same server and method with
//! a fixed request, and what a bidirectional stream's messages cost
//! against unary calls: four cells on `fixtures/grpc-shop` (its static
//! binary, mounted into a container of the client's image and pinned to
//! the server's CPUs), each at 16 workers on one connection, every reply
//! compared with a partial expectation.
//!
//! The figure to read is the client's CPU per call, and per message for a
//! stream (a stream of [`MESSAGES`] messages is one call): the summary
//! gives the templated stream's per message over the fixed unary call's.

use super::Bench;
use crate::definitions::manifest::FILES_IN_CONTAINERS;
use crate::engine::readiness;
use anyhow::{bail, Result};
use rpclab_model::spec::{CellSpec, Load, Shape, Stop};
use std::collections::BTreeMap;
use std::path::Path;

/// The example server folder: its static binary (`bin/grpc-shop`) and its
/// descriptor set.
const SHOP: &str = "fixtures/servers/grpc-shop";

/// The unary method and the bidirectional one (a reply per request).
const UNARY: &str = "shop.v1.Inventory/Reserve";
const STREAM: &str = "shop.v1.Inventory/ReserveEach";

/// Messages each stream sends (and receives).
pub const MESSAGES: u32 = 10;

/// The request, with two template values (the call's number as a string
/// and as an integer), or with none.
fn request(templated: bool) -> String {
    let (id, sequence) = if templated {
        ("\"req-{{.RequestNumber}}\"", "\"{{.RequestNumber}}\"")
    } else {
        ("\"req-7\"", "\"7\"")
    };
    format!(
        r#"{{"requestId": {id}, "sequence": {sequence}, "customer": {{"name": "ada", "tier": "GOLD"}}, "items": [{{"sku": "apple", "quantity": 3, "price": {{"currency": "EUR", "units": 2}}}}, {{"sku": "pear", "quantity": 150, "price": {{"currency": "EUR", "units": 1}}}}], "tags": ["fruit"], "attributes": {{"channel": "web"}}}}"#
    )
}

/// The cells: name, method, templated.
const CELLS: [(&str, &str, bool); 4] = [
    ("unary, fixed", UNARY, false),
    ("unary, templated", UNARY, true),
    ("stream x10, fixed", STREAM, false),
    ("stream x10, templated", STREAM, true),
];

impl Bench<'_> {
    /// The four cells on grpc-shop, started here and removed by the
    /// session's scope.
    pub(super) async fn run_generic(&mut self, root: &Path) -> Result<()> {
        let folder = root.join(SHOP);
        if !folder.join("bin/grpc-shop").is_file() {
            bail!(
                "{SHOP}/bin/grpc-shop is missing: build it as {SHOP}/Dockerfile says (cargo install --path fixtures/grpc-shop …)"
            );
        }
        let port = self.args.port;
        let shop = self.start_shop(&folder, port).await?;
        let target = format!("127.0.0.1:{port}");
        let probe_options = options(UNARY, false, &folder);
        readiness::wait(
            self.engine,
            readiness::Probe {
                timeout: super::READY_TIMEOUT,
                call: Some(UNARY),
                ..readiness::Probe::on_host(
                    "grpc-shop",
                    &shop,
                    "grpc-generic",
                    &probe_options,
                    &target,
                    self.run_id,
                )
            },
        )
        .await?;
        super::print_header();
        let window = Stop::Seconds(self.args.duration_s);
        for (name, method, templated) in CELLS {
            let load = Load::Closed(Shape::SharedClient.closed(16, None, window));
            let spec = CellSpec {
                protocol: "grpc-generic".into(),
                options: options(method, templated, Path::new(FILES_IN_CONTAINERS)),
                ..self.spec(load, &target)
            };
            self.measure(name, None, &spec, &shop, Some(&folder))
                .await?;
        }
        Ok(())
    }

    /// grpc-shop on the server's CPUs, on the host's 127.0.0.1:`port`.
    async fn start_shop(&self, folder: &Path, port: u16) -> Result<String> {
        let mounted = format!("{FILES_IN_CONTAINERS}/bin/grpc-shop");
        let id = self
            .start_server(super::Server {
                name: "bench-shop",
                env: Vec::new(),
                entrypoint: mounted,
                cmd: Some(vec!["--listen".into(), format!("127.0.0.1:{port}")]),
                binds: vec![crate::engine::client_container::server_files_bind(folder)?],
            })
            .await?;
        eprintln!(
            "started grpc-shop on 127.0.0.1:{port} (cpus {})",
            self.server_cpus
        );
        Ok(id)
    }

    /// The comparison the bench is for: the client's CPU per call and per
    /// message of each cell, and the templated stream's per message over
    /// the fixed unary call's.
    pub(super) fn generic_summary(&self) -> String {
        let mut out = format!(
            "\nwhat a generic gRPC call costs the client (grpc-shop on cpus {}, client on cpus {}, {} s windows, 16 workers on one connection):\n",
            self.server_cpus, self.client_cpus, self.args.duration_s
        );
        let per_call = |name: &str| {
            self.rows
                .iter()
                .find(|r| r.cell == name)
                .and_then(|r| r.client_cost())
                .map(|c| c.cpu_us_per_call)
        };
        for row in &self.rows {
            let per_message = row
                .client_cost()
                .zip(row.report.messages.as_ref())
                .filter(|(_, m)| m.received > 0)
                .map(|(c, m)| c.cpu_us_per_call * row.report.calls_ok as f64 / m.received as f64);
            out.push_str(&format!(
                "  {:<24} {:>9.0} calls/s  {:>7.1} client CPU-µs per call{}\n",
                row.cell,
                row.report.throughput_per_s,
                row.client_cost().map_or(0.0, |c| c.cpu_us_per_call),
                per_message.map_or_else(String::new, |m| format!(", {m:.1} per message received")),
            ));
        }
        if let (Some(fixed), Some(templated)) =
            (per_call("unary, fixed"), per_call("unary, templated"))
        {
            out.push_str(&format!(
                "templated unary over fixed unary, client CPU per call: {:.2}x\n",
                templated / fixed
            ));
        }
        let stream = self.rows.iter().find(|r| r.cell == "stream x10, templated");
        let per_message = stream.and_then(|r| {
            let m = r.report.messages.as_ref()?;
            let c = r.client_cost()?;
            (m.received > 0)
                .then(|| c.cpu_us_per_call * r.report.calls_ok as f64 / m.received as f64)
        });
        if let (Some(fixed), Some(message)) = (per_call("unary, fixed"), per_message) {
            out.push_str(&format!(
                "templated stream, per message, over fixed unary, per call: {:.2}x ({message:.1} vs {fixed:.1} client CPU-µs)\n",
                message / fixed
            ));
        }
        out
    }
}

/// The client options of a cell: the method, its types from the folder's
/// descriptor set (at `folder`: here, or where a container mounts it),
/// the request, and a partial expectation every reply must meet; a
/// stream's count of messages.
fn options(method: &str, templated: bool, folder: &Path) -> BTreeMap<String, String> {
    let mut options = BTreeMap::from([
        ("call".to_owned(), method.to_owned()),
        (
            "protoset".to_owned(),
            folder.join("shop.protoset").display().to_string(),
        ),
        ("data".to_owned(), request(templated)),
        (
            "expect".to_owned(),
            r#"{"status": "PARTIAL", "customer": "ada (GOLD)"}"#.to_owned(),
        ),
        ("expect_partial".to_owned(), "true".to_owned()),
    ]);
    if method == STREAM {
        options.insert("stream_call_count".to_owned(), MESSAGES.to_string());
    }
    options
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_cell_s_options_are_ones_the_protocol_takes() {
        let folder = crate::basics::host::repo_root().join(SHOP);
        for (_, method, templated) in CELLS {
            let options = options(method, templated, &folder);
            rpclab_protocols::protocols::ProtocolName::GrpcGeneric
                .check(&options)
                .unwrap_or_else(|e| panic!("{method} {templated}: {e}"));
        }
        assert!(!request(false).contains("{{"));
        assert!(request(true).contains("{{.RequestNumber}}"));
    }
}
