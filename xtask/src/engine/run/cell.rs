//! One cell: its spec, the client run in its container while the server's
//! (and the registry's) counters are sampled, and the cell record made of
//! what came back ([`cell_of`], pure). And the priming of a freshly started
//! server, which is a cell whose figures go with the next one.

use super::context::RunContext;
use super::server::{files_of, sanitize, Running};
use crate::basics::cpus;
use crate::definitions::lab::{Profile, Scenario};
use crate::definitions::manifest::{Manifest, Variant, FILES_IN_CONTAINERS};
use crate::engine::client_container::{self, ClientCell, ClientRun};
use crate::engine::plan;
use crate::store::snapshot::Snapshot;
use anyhow::Result;
use rpclab_model::limit;
use rpclab_model::phases::{ClientTimes, Phase};
use rpclab_model::result::{Cell, ClientReport, Cost, HostLoad, Priming};
use rpclab_model::spec::CellSpec;
use std::path::Path;
use std::time::Instant;

/// Where a cell sits: the server variant, the scenario and level, the
/// repetition (or round), and whether the JVM serving it is still cold
/// (it then gets the profile's longer warm-up).
#[derive(Clone, Copy)]
pub struct CellAt<'a> {
    pub m: &'a Manifest,
    pub v: &'a Variant,
    pub scenario: &'a Scenario,
    pub level: u32,
    pub repetition: u32,
    pub cold: bool,
    /// The cell before it on this server start had the same scenario and
    /// level (a repetition in blocks): the profile may then skip the
    /// steady rule (`steady_every_repetition`).
    pub settled: bool,
}

/// Which start of which server a priming primes: the server's container
/// (None for a target), the port it listens on, and the start's number.
#[derive(Clone, Copy)]
pub struct PrimeAt<'a> {
    pub server: Option<&'a str>,
    pub port: u16,
    pub start: u32,
}

/// What every pass of one priming shares.
struct Pass<'a> {
    m: &'a Manifest,
    v: &'a Variant,
    server: Option<&'a str>,
    scenario: &'a str,
    level: u32,
    start: u32,
    label: &'a str,
}

/// What a cell cost beside the client's own, measured over its window.
#[derive(Clone, Debug, Default)]
pub struct Costs {
    pub server: Option<Cost>,
    pub registry: Option<Cost>,
    /// What the host did beside the lab.
    pub host_load: Option<HostLoad>,
}

impl RunContext<'_> {
    /// Measures the cell `at` on the `running` server: its spec and files
    /// in the snapshot's cell folder, the client in its container, the
    /// cell judged and (unless a capacity search prints its own) its line.
    pub async fn run_cell(
        &self,
        at: &CellAt<'_>,
        running: &Running<'_>,
        snapshot: &Snapshot,
    ) -> Result<Cell> {
        let CellAt {
            m,
            v,
            scenario,
            level,
            repetition,
            cold,
            settled,
        } = *at;
        let target = self.address_of(m, running.server, running.port).await?;
        let options = self.client_options(m, v, Path::new(FILES_IN_CONTAINERS), &target);
        let mut spec: CellSpec = self.prepared.profile.cell_spec(
            m.protocol.as_str(),
            target,
            scenario.operation,
            scenario.load(level, &self.prepared.profile)?,
            scenario.include_connect,
            options,
        );
        // The percentiles the run judges that a report does not keep
        // unless asked (`p(97.5)<2ms`, `lab capacity --percentile 97.5`).
        spec.percentiles = rpclab_model::threshold::extra_percentiles(&self.opts.thresholds);
        if let Some(asked) = &self.opts.capacity {
            if spec.percentiles.iter().all(|p| *p != asked.percentile) {
                spec.percentiles.push(asked.percentile);
            }
        }
        if cold && self.prepared.profile.cold_warmup_max_s.is_some() {
            spec.warmup_max_s = Some(self.prepared.profile.warmup_limit_s(true));
        }
        if settled && !self.prepared.profile.steady_every_repetition {
            spec.steady = None;
        }
        let dir = snapshot.cell_dir(
            &m.name,
            &sanitize(&v.name),
            &sanitize(&scenario.name),
            level,
            repetition,
        );
        let label = format!(
            "{} {} · {} · level {level} · rep {repetition}",
            m.name, v.name, scenario.name
        );
        let began = Instant::now();
        let ClientRun {
            report,
            server_cost,
            registry_cost,
            host_load,
            ..
        } = client_container::run_client(
            &self.run_engines.client,
            ClientCell {
                registry: running.registry.map(|r| (&self.run_engines.registry, r)),
                // The host's load beside a target would be the target's
                // own (the lab neither pins nor measures it).
                host: running.server.map(|_| client_container::HostWatch {
                    server_cpus: &self.prepared.split.server,
                    registry_cpus: &self.prepared.split.registry,
                    idle: (running.idle.iter())
                        .map(|id| (&self.run_engines.server, id.as_str()))
                        .collect(),
                }),
                ..self.client_cell(&dir, &spec, &label, running.server, files_of(m, v))
            },
        )
        .await?;
        // A cell whose client failed has no report: its time stays in
        // `other`.
        self.cell_took(began.elapsed(), client_times(&report, &spec));
        let costs = Costs {
            server: server_cost,
            registry: registry_cost,
            host_load,
        };
        let cell = cell_of(at, report, costs, &self.prepared.split);
        // A capacity search prints its steps' own lines.
        if self.opts.capacity.is_none() {
            crate::basics::progress::println(&line(&label, &cell));
        }
        Ok(cell)
    }

    /// Primes a freshly (re)started server, when the profile says so: the
    /// first scenario it can carry, at that scenario's highest level, warmed
    /// up by the profile's rule from `prime_s` to the cold limit; then,
    /// under the JIT rule (`prime_jit_quiet_cores`), more passes while the
    /// server's compiler threads stay busy. Its files are kept in the
    /// snapshot (`prime-<scenario>-c<level>-r<start>`, a later pass's as
    /// `prime-<scenario>-again-…`), its figures go with the next cell.
    /// Calls that fail while a cold server is primed (a timeout under its
    /// first load) are counted there, not held against the cells: the
    /// readiness probe already showed that the server answers correctly.
    /// Its time (the client's container included) counts as priming.
    pub async fn prime(
        &self,
        m: &Manifest,
        v: &Variant,
        at: PrimeAt<'_>,
        snapshot: &Snapshot,
    ) -> Result<Option<Priming>> {
        let priming = async {
            let profile = &self.prepared.profile;
            if !profile.primes() {
                return Ok(None);
            }
            let Some((scenario, level)) = self.prepared.scenarios.iter().find_map(|sc| {
                let top = sc.levels(profile).into_iter().max()?;
                plan::carries(m, v, sc).then_some((sc, top))
            }) else {
                return Ok(None);
            };
            let target = self.address_of(m, at.server, at.port).await?;
            let options = self.client_options(m, v, Path::new(FILES_IN_CONTAINERS), &target);
            let first = profile.priming_spec(
                m.protocol.as_str(),
                target,
                scenario.operation,
                scenario.load(level, profile)?,
                options,
            );
            let label = format!(
                "{} {} · priming · {} · level {level}",
                m.name, v.name, scenario.name
            );
            let pass = Pass {
                m,
                v,
                server: at.server,
                scenario: &scenario.name,
                level,
                start: at.start,
                label: &label,
            };
            let (report, compiler) = self.prime_pass(&pass, &first, 1, snapshot).await?;
            let warmup = report.warmup.clone().unwrap_or_default();
            let mut primed = Priming {
                scenario: scenario.name.clone(),
                concurrency: level,
                calls_ok: report.calls_ok + warmup.calls,
                calls_failed: report.calls_failed,
                warmup,
                compiler_cores_by_pass: Vec::new(),
                more_passes_s: 0.0,
                jit_quiet: None,
            };
            let Some(bound) = profile.prime_jit_quiet_cores else {
                return Ok(Some(primed));
            };
            let mut compiler = compiler;
            let mut spent = primed.warmup.seconds + report.duration_s;
            let again = profile.priming_pass_spec(&first);
            while let Some(cores) = compiler {
                primed.compiler_cores_by_pass.push(cores);
                match after_pass(cores, bound, spent, profile) {
                    AfterPass::Again => {}
                    AfterPass::Stop { quiet } => {
                        primed.jit_quiet = Some(quiet);
                        break;
                    }
                }
                let pass_number = primed.compiler_cores_by_pass.len() as u32 + 1;
                let (report, next) = self
                    .prime_pass(&pass, &again, pass_number, snapshot)
                    .await?;
                let seconds = report.warmup.as_ref().map_or(0.0, |w| w.seconds) + report.duration_s;
                spent += seconds;
                primed.more_passes_s += seconds;
                primed.calls_ok += report.calls_ok + report.warmup.as_ref().map_or(0, |w| w.calls);
                primed.calls_failed += report.calls_failed;
                compiler = next;
            }
            Ok(Some(primed))
        };
        self.timed(Phase::Priming, priming).await
    }

    /// One priming pass of `spec` (`number` 1 is the first), the server's
    /// counters sampled: the client's report, and the cores the server's
    /// JIT compiler threads used over its window (None where they are not
    /// visible, or for a target).
    async fn prime_pass(
        &self,
        pass: &Pass<'_>,
        spec: &CellSpec,
        number: u32,
        snapshot: &Snapshot,
    ) -> Result<(ClientReport, Option<f64>)> {
        let folder = match number {
            1 => format!("prime-{}", pass.scenario),
            _ => format!("prime-{}-again", pass.scenario),
        };
        // A resumed run's priming keeps the interrupted run's files: it
        // takes the first start number not yet used.
        let dir = (pass.start..)
            .map(|start| {
                snapshot.cell_dir(
                    &pass.m.name,
                    &sanitize(&pass.v.name),
                    &sanitize(&folder),
                    pass.level,
                    start,
                )
            })
            .find(|dir| !dir.exists())
            .expect("an unused start number");
        let label = match number {
            1 => pass.label.to_owned(),
            n => format!("{} · pass {n}", pass.label),
        };
        let ClientRun {
            report,
            server_cost,
            ..
        } = client_container::run_client(
            &self.run_engines.client,
            self.client_cell(&dir, spec, &label, pass.server, files_of(pass.m, pass.v)),
        )
        .await?;
        let warmup = report.warmup.clone().unwrap_or_default();
        let compiler = server_cost
            .and_then(|c| c.compiler_cpu_ms)
            .map(|ms| ms / 1e3 / report.duration_s.max(1e-9));
        crate::basics::progress::println(&format!(
            "  {label}: {:.1} s{}, last interval {:.0} calls/s, {} failed{}",
            warmup.seconds,
            match (spec.steady.is_some(), warmup.steady) {
                (false, _) => "",
                (true, true) => " to steady",
                (true, false) => ", not steady at its limit",
            },
            warmup
                .intervals
                .last()
                .copied()
                .unwrap_or(report.throughput_per_s),
            report.calls_failed,
            match compiler {
                Some(cores) => format!(", JIT compiler {cores:.2} cores"),
                None => String::new(),
            }
        ));
        Ok((report, compiler))
    }

    /// The client run of `spec` in `dir`, on this run's client CPUs, the
    /// counters of the `server` container sampled (a cell adds its
    /// registry's and the host's), `files` the variant's own (see
    /// [`files_of`]).
    fn client_cell<'a>(
        &'a self,
        dir: &'a Path,
        spec: &'a CellSpec,
        label: &'a str,
        server: Option<&'a str>,
        files: Option<&'a Path>,
    ) -> ClientCell<'a> {
        ClientCell {
            run_id: self.run_id,
            client_cpus: &self.prepared.split.client,
            dir,
            spec,
            label,
            server: server.map(|id| (&self.run_engines.server, id)),
            registry: None,
            host: None,
            verbose: self.opts.verbose,
            clock_offset_s: self.client_clock_offset_s.get().copied().unwrap_or(0.0),
            network: self.network(),
            files,
        }
    }
}

/// What follows a priming pass under the JIT rule.
#[derive(Clone, Copy, Debug, PartialEq)]
enum AfterPass {
    /// Another pass: the compiler threads were busy, and time allows one.
    Again,
    /// Priming ends, the JIT quiet or not.
    Stop { quiet: bool },
}

/// The JIT rule after a pass whose window saw the server's compiler
/// threads use `cores`, the passes having taken `spent` seconds: quiet at
/// or under `bound`; else another pass, unless it would take the passes
/// past the profile's `prime_max_s`. (Where the threads are not visible
/// there is nothing to judge, and priming is one pass.)
fn after_pass(cores: f64, bound: f64, spent: f64, profile: &Profile) -> AfterPass {
    if cores <= bound {
        AfterPass::Stop { quiet: true }
    } else if spent + profile.priming_pass_s() > profile.prime_passes_limit_s() {
        AfterPass::Stop { quiet: false }
    } else {
        AfterPass::Again
    }
}

/// What the client of a cell said it spent: its warm-up and window as it
/// reported them, and the cool-down its spec asked (which the client sleeps
/// after the window, whatever the load).
pub fn client_times(report: &ClientReport, spec: &CellSpec) -> ClientTimes {
    ClientTimes {
        warmup_s: report.warmup.as_ref().map_or(0.0, |w| w.seconds),
        window_s: report.duration_s,
        cooldown_s: spec.cooldown_s,
    }
}

/// The cell record of `at` from the client's report and the costs beside
/// it, judged by the model's one limit rule ([`limit::judge`]) on the CPU
/// sets `cpus`. The registry's cost counts towards the server's limit only
/// when it ran on the server's CPUs; a priming, a round's position and a
/// JVM start are the caller's to add.
pub fn cell_of(at: &CellAt<'_>, report: ClientReport, costs: Costs, cpus: &cpus::Split) -> Cell {
    let CellAt {
        m,
        v,
        scenario,
        level,
        repetition,
        ..
    } = *at;
    let judged = limit::judge(
        &report,
        &limit::Sides {
            server_cost: costs.server,
            registry_on_server_cpus: costs.registry.filter(|_| cpus.registry == cpus.server),
            server_cores: cpus.server_cores,
            client_cores: cpus.client_cores,
            shared_cpus: cpus.shared,
            host_busy: (costs.host_load.as_ref()).is_some_and(crate::engine::host_load::host_busy),
        },
    );
    Cell {
        server: m.name.clone(),
        variant: v.name.clone(),
        framework: m.framework.clone(),
        framework_version: v.version.clone(),
        protocol: m.protocol.to_string(),
        scenario: scenario.name.clone(),
        operation: scenario.operation,
        concurrency: level,
        repetition,
        calls_ok: report.calls_ok,
        calls_failed: report.calls_failed,
        duration_s: report.duration_s,
        throughput_per_s: report.throughput_per_s,
        latency_us: report.latency_us,
        server_cost: costs.server,
        client_cost: report.client_cost,
        client_bound: None,
        registry_cost: costs.registry,
        limit: Some(judged.limit),
        flags: judged.flags,
        primed: None,
        host_load: costs.host_load,
        round_position: None,
        start: None,
        report,
    }
}

/// A measured cell's line: throughput, p99, failures and its flags.
fn line(label: &str, cell: &Cell) -> String {
    let flags = if cell.flags.is_empty() {
        String::new()
    } else {
        let names: Vec<&str> = cell.flags.iter().map(|f| f.as_str()).collect();
        format!(" [{}]", names.join(", "))
    };
    format!(
        "  {label}: {:.0} calls/s, p99 {:.3} ms, {} failed{flags}",
        cell.throughput_per_s,
        cell.latency_us.p99 / 1e3,
        cell.calls_failed,
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use rpclab_model::result::{CellFlag, Latency, LimitSide, Warmup};
    use rpclab_model::spec::{Load, Shape, Stop};

    #[test]
    fn priming_goes_on_while_the_jit_compiles_and_time_allows() {
        // Passes of 2 s warm-up and a 1 s window, 20 s in all at the most.
        let profile: Profile = toml::from_str(
            "warmup_s = 2.0\nprime_s = 12.0\nprime_jit_quiet_cores = 0.05\nprime_max_s = 20.0",
        )
        .unwrap();
        assert_eq!(
            after_pass(0.01, 0.05, 13.0, &profile),
            AfterPass::Stop { quiet: true }
        );
        assert_eq!(
            after_pass(0.05, 0.05, 13.0, &profile),
            AfterPass::Stop { quiet: true }
        );
        assert_eq!(after_pass(0.30, 0.05, 13.0, &profile), AfterPass::Again);
        assert_eq!(after_pass(0.30, 0.05, 17.0, &profile), AfterPass::Again);
        // One more pass would end past 20 s.
        assert_eq!(
            after_pass(0.30, 0.05, 17.5, &profile),
            AfterPass::Stop { quiet: false }
        );
        // Without prime_max_s, the cold warm-up limit and its window bound the passes.
        let open: Profile = toml::from_str(
            "warmup_s = 2.0\nwarmup_max_s = 30.0\nprime_s = 12.0\nprime_jit_quiet_cores = 0.05",
        )
        .unwrap();
        assert_eq!(open.prime_passes_limit_s(), 31.0);
        assert_eq!(after_pass(0.30, 0.05, 28.0, &open), AfterPass::Again);
        assert_eq!(
            after_pass(0.30, 0.05, 28.5, &open),
            AfterPass::Stop { quiet: false }
        );
        // The run's time estimate allows for the longest priming.
        assert_eq!(
            profile.priming_limit_s(),
            20.0_f64.max(12.0_f64.max(profile.warmup_limit_s(true)) + 1.0)
        );
    }

    fn manifest() -> Manifest {
        toml::from_str(
            "name = \"a\"\nframework = \"thrift\"\nprotocol = \"thrift\"\nlanguage = \"java\"\ndescription = \"d\"\nport = 9090\njvm_flags = [\"-Xmx256m\"]\n[[variant]]\nname = \"one\"\nversion = \"1.2\"\n",
        )
        .unwrap()
    }

    fn scenario() -> Scenario {
        crate::definitions::lab::client_programs_for_tests(
            "echo",
            rpclab_model::contract::Operation::OrderEcho,
            &[5],
        )
    }

    fn report(client_busy: f64) -> ClientReport {
        ClientReport {
            protocol: "thrift".into(),
            connection_model: "one call in flight".into(),
            engine: None,
            operation: rpclab_model::contract::Operation::OrderEcho,
            load: Load::Closed(Shape::ClientPrograms.closed(5, None, Stop::Seconds(5.0))),
            calls_ok: 1000,
            calls_failed: 2,
            failures: Default::default(),
            duration_s: 5.0,
            throughput_per_s: 200.0,
            latency_us: Latency {
                p99: 1500.0,
                ..Latency::default()
            },
            percentiles_us: Default::default(),
            service_time_us: None,
            send_lag_us: None,
            connect_ms: None,
            bytes_sent_per_call: 0.0,
            bytes_received_per_call: 0.0,
            window_unix_s: None,
            client_cost: Some(cores(client_busy)),
            verified: true,
            hlog: None,
            warmup: Some(Warmup {
                steady: true,
                every_connection_answered: true,
                ..Warmup::default()
            }),
            min_calls: 20,
            tls: None,
            call: None,
            messages: None,
        }
    }

    fn cores(busy: f64) -> Cost {
        Cost {
            cpu_cores_busy: busy,
            ..Cost::default()
        }
    }

    /// One core each; the registry on the server's when `registry_shares`.
    fn split(registry_shares: bool) -> cpus::Split {
        cpus::Split {
            server: "0".into(),
            registry: if registry_shares { "0" } else { "2" }.into(),
            client: "1".into(),
            server_cores: 1,
            client_cores: 1,
            shared: false,
            note: String::new(),
        }
    }

    fn cell(costs: Costs, registry_shares: bool) -> Cell {
        let (m, scenario) = (manifest(), scenario());
        let at = CellAt {
            m: &m,
            v: &m.variants[0],
            scenario: &scenario,
            level: 5,
            repetition: 3,
            cold: true,
            settled: false,
        };
        cell_of(&at, report(0.3), costs, &split(registry_shares))
    }

    #[test]
    fn a_cell_is_its_place_the_clients_figures_and_the_costs_beside_them() {
        let costs = Costs {
            server: Some(cores(0.5)),
            registry: Some(cores(0.1)),
            host_load: None,
        };
        let c = cell(costs, false);
        assert_eq!(
            (
                c.server.as_str(),
                c.variant.as_str(),
                c.framework_version.as_str()
            ),
            ("a", "one", "1.2")
        );
        assert_eq!(
            (c.scenario.as_str(), c.concurrency, c.repetition),
            ("echo", 5, 3)
        );
        assert_eq!((c.calls_ok, c.calls_failed), (1000, 2));
        assert_eq!(c.throughput_per_s, 200.0);
        assert_eq!(c.latency_us.p99, 1500.0);
        assert_eq!(c.server_cost, Some(cores(0.5)));
        assert_eq!(c.registry_cost, Some(cores(0.1)));
        assert_eq!(c.client_cost, Some(cores(0.3)));
        let limit = c.limit.as_ref().unwrap();
        assert_eq!(limit.side, LimitSide::Neither);
        assert_eq!(limit.threshold, limit::BUSY_THRESHOLD);
        // The caller's to add.
        assert_eq!(
            (c.primed.is_none(), c.round_position, c.start),
            (true, None, None)
        );
        assert_eq!(line("x", &c), "  x: 200 calls/s, p99 1.500 ms, 2 failed");
    }

    #[test]
    fn a_cells_times_are_the_clients_warm_up_and_window_and_the_specs_cool_down() {
        let spec: CellSpec = serde_json::from_value(serde_json::json!({
            "protocol": "thrift",
            "target": "127.0.0.1:9090",
            "operation": "order-echo",
            "load": report(0.3).load,
            "cooldown_s": 2.0,
        }))
        .unwrap();
        let mut r = report(0.3);
        r.warmup.as_mut().unwrap().seconds = 7.5;
        let times = client_times(&r, &spec);
        assert_eq!(
            (times.warmup_s, times.window_s, times.cooldown_s),
            (7.5, 5.0, 2.0)
        );
        // A cell that counts connection set-up has no warm-up.
        r.warmup = None;
        assert_eq!(client_times(&r, &spec).warmup_s, 0.0);
    }

    #[test]
    fn a_registry_counts_towards_the_servers_limit_only_on_its_cpus() {
        let costs = || Costs {
            server: Some(cores(0.6)),
            registry: Some(cores(0.35)),
            host_load: None,
        };
        let shared = cell(costs(), true);
        assert_eq!(shared.limit.as_ref().unwrap().side, LimitSide::Server);
        assert_eq!(shared.flags, vec![CellFlag::ServerBound]);
        assert_eq!(
            line("x", &shared),
            "  x: 200 calls/s, p99 1.500 ms, 2 failed [server-bound]"
        );
        let apart = cell(costs(), false);
        assert_eq!(apart.limit.as_ref().unwrap().side, LimitSide::Neither);
    }

    #[test]
    fn a_window_the_host_shared_is_flagged_by_the_host_load_rule() {
        let costs = |other: f64| Costs {
            server: Some(cores(0.2)),
            registry: None,
            host_load: Some(HostLoad {
                other_client_cores: other,
                threshold_cores: crate::engine::host_load::THRESHOLD_CORES,
                ..HostLoad::default()
            }),
        };
        assert_eq!(cell(costs(0.4), false).flags, vec![CellFlag::HostBusy]);
        assert!(cell(costs(0.01), false).flags.is_empty());
        assert!(cell(costs(0.4), false).host_load.is_some());
    }
}
