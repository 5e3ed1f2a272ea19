//! What a run will do, decided before anything starts: which server
//! variants run (and why each of the others does not), which cells each
//! measures, and in which order. Pure: from the lab definition, the
//! profile, the selected manifests and the filters, with no engine asked;
//! [`crate::engine::run`] carries it out.

use crate::definitions::lab::{Profile, Scenario};
use crate::definitions::manifest::{Manifest, Registry, Variant};
use anyhow::Result;
use rpclab_model::manifest::ServerRecord;
use rpclab_model::result::{Cell, CellId, CellKey};

/// What the run is asked to cover, besides the lab and its profile.
pub struct Filters<'a> {
    /// The profile's name, as the reasons quote it.
    pub profile: &'a str,
    /// Run only these (server, variant) pairs; empty: every variant of the
    /// selected servers.
    pub variants: &'a [(String, String)],
    /// Server, registry and client all run on the orchestrator's machine.
    pub all_local: bool,
}

/// A run's plan.
pub struct Plan<'a> {
    /// Every selected server variant as `manifest.toml` records it, with
    /// why it is not run when it is not; in the manifests' order.
    pub servers: Vec<ServerRecord>,
    /// The variants that run, in the order they run.
    pub runnable: Vec<Planned<'a>>,
    /// Every scenario level, in the order a run in rounds measures them.
    pub levels: Vec<(&'a Scenario, u32)>,
}

/// A server variant the run measures.
pub struct Planned<'a> {
    pub manifest: &'a Manifest,
    pub variant: &'a Variant,
    /// Its record's index in [`Plan::servers`].
    pub record: usize,
    /// The scenarios it cannot carry, and why.
    pub skipped: Vec<(&'a Scenario, &'a str)>,
    /// Its cells in the order a run in blocks measures them: each scenario
    /// it can carry, each level, each repetition. A run in rounds measures
    /// the same cells (a repetition is then a round), level by level across
    /// the variants, and may add rounds while a claim is undecided.
    pub cells: Vec<PlannedCell<'a>>,
}

/// One cell of a plan.
#[derive(Clone, Copy, Debug)]
pub struct PlannedCell<'a> {
    pub scenario: &'a Scenario,
    pub level: u32,
    /// The repetition (or round), from 1.
    pub repetition: u32,
}

impl Plan<'_> {
    /// How many cells the run measures at least.
    pub fn cells(&self) -> usize {
        self.runnable.iter().map(|p| p.cells.len()).sum()
    }
}

impl<'a> Planned<'a> {
    /// The identity of `cell`, one of this variant's.
    pub fn id(&self, cell: &PlannedCell<'a>) -> CellId<'a> {
        CellId {
            key: CellKey {
                server: &self.manifest.name,
                variant: &self.variant.name,
                scenario: &cell.scenario.name,
                level: cell.level,
            },
            repetition: cell.repetition,
        }
    }

    /// This variant with only its cells that `measured` does not hold, in
    /// order: what a resumed run, or a server started again after its
    /// engine came back, has left to measure.
    pub fn left(&self, measured: &[Cell]) -> Planned<'a> {
        Planned {
            manifest: self.manifest,
            variant: self.variant,
            record: self.record,
            skipped: self.skipped.clone(),
            cells: self
                .cells
                .iter()
                .filter(|c| !self.id(c).is_in(measured))
                .copied()
                .collect(),
        }
    }
}

/// What a resumed run has left to do: `plan` with every cell that
/// `measured` already holds taken out, the rest in the plan's order. A
/// variant whose cells are all measured stays in the plan with none left
/// (a run in rounds still starts it, so that its rounds keep every server
/// beside the one under load, as the interrupted run had them).
pub fn remaining<'a>(mut plan: Plan<'a>, measured: &[Cell]) -> Plan<'a> {
    plan.runnable = plan.runnable.iter().map(|p| p.left(measured)).collect();
    plan
}

/// The plan of a run of `scenarios` under `profile` over the `selected`
/// servers. An error is a server whose confinement cannot be derived.
pub fn plan<'a>(
    scenarios: &'a [Scenario],
    profile: &Profile,
    selected: &[&'a Manifest],
    filters: &Filters<'_>,
) -> Result<Plan<'a>> {
    let mut servers: Vec<ServerRecord> = Vec::new();
    let mut runnable: Vec<Planned<'a>> = Vec::new();
    for &m in selected {
        let mut ran_one = false;
        for v in m.variants.iter().filter(|v| wanted(filters, m, v)) {
            let mut record = record_of(m, v, scenarios, profile);
            let scenarios = scenarios_of(m, v, scenarios);
            record.not_run = record
                .not_run
                .or_else(|| not_run(m, filters, ran_one && profile.first_variant_only));
            if record.not_run.is_none() {
                ran_one = true;
                // A target is not confined by the lab: no policy to record.
                if m.target.is_none() {
                    record.confinement = Some(crate::basics::confine::server(
                        &m.confinement,
                        &record.jvm_flags,
                    )?);
                }
                runnable.push(Planned {
                    manifest: m,
                    variant: v,
                    record: servers.len(),
                    skipped: scenarios
                        .iter()
                        .filter_map(|sc| v.cannot_carry(sc.operation).map(|why| (*sc, why)))
                        .collect(),
                    cells: cells_of(v, &scenarios, profile),
                });
            }
            servers.push(record);
        }
    }
    let levels = scenarios
        .iter()
        .flat_map(|sc| sc.levels(profile).into_iter().map(move |level| (sc, level)))
        .collect();
    Ok(Plan {
        servers,
        runnable,
        levels,
    })
}

/// Whether the filters let variant `v` of `m` in.
fn wanted(filters: &Filters<'_>, m: &Manifest, v: &Variant) -> bool {
    filters.variants.is_empty()
        || filters
            .variants
            .iter()
            .any(|(s, n)| s == &m.name && n == &v.name)
}

/// Why a variant its manifest allows does not run in this run, if it does
/// not; `a_variant_ran`: the profile runs one variant per server, and an
/// earlier one runs.
fn not_run(m: &Manifest, filters: &Filters<'_>, a_variant_ran: bool) -> Option<String> {
    if m.registry != Registry::None && !filters.all_local {
        return Some(
            "a server with a registry runs only with server, registry and client on this machine (docs/multi-host.md, \"What is not done\")"
                .into(),
        );
    }
    if !m.bind_from_env && !filters.all_local {
        return Some(format!(
            "it binds 127.0.0.1 only (no `bind_from_env` in servers/{}/server.toml), so a client on another machine cannot reach it",
            m.name
        ));
    }
    a_variant_ran.then(|| {
        format!(
            "profile `{}` runs only the first runnable variant of each server",
            filters.profile
        )
    })
}

/// The manifest's record of variant `v`, before the run decides on it.
fn record_of(m: &Manifest, v: &Variant, scenarios: &[Scenario], profile: &Profile) -> ServerRecord {
    ServerRecord {
        name: m.name.clone(),
        framework: m.framework.clone(),
        protocol: m.protocol.to_string(),
        variant: v.name.clone(),
        version: v.version.clone(),
        jvm_flags: profile.jvm_flags_of(&m.jvm_flags),
        jvm: m.jvm_of(v).map(|j| j.to_string()),
        // A service the lab did not start has no image of the lab's.
        image: if m.target.is_some() {
            String::new()
        } else {
            m.image(v)
        },
        not_run: m.not_runnable(v),
        notes: v.notes.clone(),
        skipped_scenarios: scenarios_of(m, v, scenarios)
            .into_iter()
            .filter_map(|sc| {
                v.cannot_carry(sc.operation)
                    .map(|why| format!("{}: {why}", sc.name))
            })
            .collect(),
        confinement: None,
        port: None,
        call: m.call_of(v),
        folder: m.folder_record(v),
        target: m.target.clone(),
    }
}

/// The scenarios of the run that variant `v` of `m` runs: the lab's
/// scenarios for a server of the contract; for a server of a generic
/// protocol, their copies that call its method ([`Scenario::calling`]).
pub fn scenarios_of<'a>(m: &Manifest, v: &Variant, scenarios: &'a [Scenario]) -> Vec<&'a Scenario> {
    let call = m.call_of(v);
    scenarios.iter().filter(|sc| sc.call == call).collect()
}

/// Whether variant `v` of `m` runs `scenario`: it is one of its
/// scenarios ([`scenarios_of`]) and it can carry its operation.
pub fn carries(m: &Manifest, v: &Variant, scenario: &Scenario) -> bool {
    scenario.call == m.call_of(v) && v.cannot_carry(scenario.operation).is_none()
}

/// The lab's `scenarios` with, for each method the `selected` servers of
/// a generic protocol call, a copy of each calling it
/// ([`Scenario::calling`]): what a run plans its cells from.
pub fn with_calls(scenarios: &[Scenario], selected: &[&Manifest]) -> Vec<Scenario> {
    let mut methods: Vec<String> = selected
        .iter()
        .flat_map(|m| m.variants.iter().filter_map(|v| m.call_of(v)))
        .collect();
    methods.sort();
    methods.dedup();
    let mut all = scenarios.to_vec();
    for method in &methods {
        all.extend(scenarios.iter().map(|sc| sc.calling(method)));
    }
    all
}

/// The cells of `v`, in a run in blocks' order.
fn cells_of<'a>(
    v: &Variant,
    scenarios: &[&'a Scenario],
    profile: &Profile,
) -> Vec<PlannedCell<'a>> {
    let repetitions = profile.repetitions_per_level();
    scenarios
        .iter()
        .copied()
        .filter(|sc| v.cannot_carry(sc.operation).is_none())
        .flat_map(|scenario| {
            scenario.levels(profile).into_iter().flat_map(move |level| {
                (1..=repetitions).map(move |repetition| PlannedCell {
                    scenario,
                    level,
                    repetition,
                })
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::definitions::lab::client_programs_for_tests;
    use crate::definitions::manifest::java_thrift_for_tests as manifest;
    use rpclab_model::contract::Operation;

    fn scenarios() -> Vec<Scenario> {
        vec![
            client_programs_for_tests("echo", Operation::OrderEcho, &[1, 5, 20]),
            client_programs_for_tests("list", Operation::OrdersEcho, &[1, 5]),
        ]
    }

    fn profile(extra: &str) -> Profile {
        toml::from_str(&format!("measure_s = 1.0\n{extra}")).unwrap()
    }

    const TWO_VARIANTS: &str = r#"
        name = "a"
        [[variant]]
        name = "one"
        version = "1"
        [[variant]]
        name = "two"
        version = "2"
        cannot_carry = { operations = ["orders-echo"], reason = "no lists" }
    "#;

    fn filters<'a>(variants: &'a [(String, String)], all_local: bool) -> Filters<'a> {
        Filters {
            profile: "p",
            variants,
            all_local,
        }
    }

    fn cells(p: &Planned<'_>) -> Vec<(String, u32, u32)> {
        p.cells
            .iter()
            .map(|c| (c.scenario.name.clone(), c.level, c.repetition))
            .collect()
    }

    #[test]
    fn each_variant_runs_every_scenario_it_carries_level_by_level_repetition_by_repetition() {
        let (a, scenarios) = (manifest(TWO_VARIANTS), scenarios());
        let profile = profile("repetitions = 2\nmax_levels = 2");
        let plan = plan(&scenarios, &profile, &[&a], &filters(&[], true)).unwrap();
        assert_eq!(plan.servers.len(), 2);
        assert!(plan.servers.iter().all(|s| s.not_run.is_none()));
        let [one, two] = &plan.runnable[..] else {
            panic!("two variants run")
        };
        let at = |s: &str, level, rep| (s.to_owned(), level, rep);
        assert_eq!(
            cells(one),
            [
                at("echo", 1, 1),
                at("echo", 1, 2),
                at("echo", 5, 1),
                at("echo", 5, 2),
                at("list", 1, 1),
                at("list", 1, 2),
                at("list", 5, 1),
                at("list", 5, 2),
            ]
        );
        // The second cannot carry the list: skipped, and recorded so.
        assert_eq!(cells(two).len(), 4);
        assert_eq!(two.skipped.len(), 1);
        assert_eq!(two.skipped[0].1, "no lists");
        assert_eq!(plan.servers[1].skipped_scenarios, ["list: no lists"]);
        assert_eq!(plan.cells(), 12);
        let levels: Vec<(&str, u32)> = plan
            .levels
            .iter()
            .map(|(s, l)| (s.name.as_str(), *l))
            .collect();
        assert_eq!(levels, [("echo", 1), ("echo", 5), ("list", 1), ("list", 5)]);
    }

    #[test]
    fn the_command_lines_duration_repetitions_levels_and_variant_shape_the_plan() {
        use crate::definitions::overrides::{variant_pairs, Overrides};
        use rpclab_model::spec::Stop;
        let (a, scenarios) = (manifest(TWO_VARIANTS), scenarios());
        let mut profile = profile(
            "seed_counts = true
repetitions = 2
max_levels = 1",
        );
        Overrides {
            measure_s: Some(10.0),
            repetitions: Some(5),
            levels: vec![1, 8, 32],
        }
        .apply(&mut profile);
        let variants = variant_pairs(&["two".to_owned()], &[&a]).unwrap();
        assert_eq!(variants, [("a".to_owned(), "two".to_owned())]);
        let plan = plan(&scenarios, &profile, &[&a], &filters(&variants, true)).unwrap();
        let [two] = &plan.runnable[..] else {
            panic!("only the variant asked for runs")
        };
        assert_eq!(two.variant.name, "two");
        let expected: Vec<(String, u32, u32)> = [1, 8, 32]
            .into_iter()
            .flat_map(|level| (1..=5).map(move |rep| ("echo".to_owned(), level, rep)))
            .collect();
        assert_eq!(cells(two), expected);
        for cell in &two.cells {
            assert_eq!(cell.scenario.stop(&profile).unwrap(), Stop::Seconds(10.0));
        }
        assert!(variant_pairs(&["a/three".to_owned()], &[&a])
            .unwrap_err()
            .to_string()
            .contains("known: a/one, a/two"));
    }

    #[test]
    fn a_run_in_rounds_plans_every_round_of_every_start() {
        let (a, scenarios) = (manifest(TWO_VARIANTS), scenarios());
        let profile =
            profile("repetitions = 9\nmax_levels = 1\nrounds = { starts = 3, per_start = 2 }");
        let plan = plan(&scenarios, &profile, &[&a], &filters(&[], true)).unwrap();
        // Two levels × 3 starts × 2 rounds for the first variant, one level
        // for the second; the repetitions are unused.
        assert_eq!(cells(&plan.runnable[0]).len(), 2 * 6);
        assert_eq!(plan.cells(), 2 * 6 + 6);
    }

    #[test]
    fn filters_and_the_profile_leave_variants_out_with_a_reason() {
        let (a, scenarios) = (manifest(TWO_VARIANTS), scenarios());
        let b = manifest("name = \"b\"\nregistry = \"zookeeper\"\nbind_from_env = true\n[[variant]]\nname = \"x\"\nversion = \"1\"\nunavailable = \"gone\"\n[[variant]]\nname = \"y\"\nversion = \"1\"\n");
        let profile = profile("first_variant_only = true");
        // One variant per server; b's first is unavailable, so its second runs.
        let plan = plan(&scenarios, &profile, &[&a, &b], &filters(&[], true)).unwrap();
        let run: Vec<(&str, &str)> = plan
            .runnable
            .iter()
            .map(|p| (p.manifest.name.as_str(), p.variant.name.as_str()))
            .collect();
        assert_eq!(run, [("a", "one"), ("b", "y")]);
        let reasons: Vec<Option<&str>> =
            plan.servers.iter().map(|s| s.not_run.as_deref()).collect();
        assert_eq!(
            reasons,
            [
                None,
                Some("profile `p` runs only the first runnable variant of each server"),
                Some("gone"),
                None
            ]
        );
        assert_eq!(plan.runnable[1].record, 3);
        // Only the pairs asked for.
        let only = [("a".to_owned(), "two".to_owned())];
        let plan = super::plan(&scenarios, &profile, &[&a, &b], &filters(&only, true)).unwrap();
        assert_eq!(plan.servers.len(), 1);
        assert_eq!(plan.runnable[0].variant.name, "two");
        // A client on another machine: neither a registry nor a loopback-only server.
        let plan = super::plan(&scenarios, &profile, &[&a, &b], &filters(&[], false)).unwrap();
        assert!(plan.runnable.is_empty());
        assert!(plan.servers[0]
            .not_run
            .as_deref()
            .unwrap()
            .contains("binds 127.0.0.1 only"));
        assert!(plan.servers[3]
            .not_run
            .as_deref()
            .unwrap()
            .contains("with a registry"));
    }

    /// A measured cell of variant `variant` of `a` (the fixture's first
    /// cell, renamed).
    fn measured(variant: &str, scenario: &str, level: u32, repetition: u32) -> Cell {
        let path =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/results.json");
        let fixture: rpclab_model::result::Results =
            serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
        Cell {
            server: "a".into(),
            variant: variant.into(),
            scenario: scenario.into(),
            concurrency: level,
            repetition,
            ..fixture.cells[0].clone()
        }
    }

    #[test]
    fn a_resumed_plan_is_exactly_the_missing_cells_in_order_each_once() {
        let (a, scenarios) = (manifest(TWO_VARIANTS), scenarios());
        let profile = profile("repetitions = 2\nmax_levels = 2");
        let everything = filters(&[], true);
        let full = || plan(&scenarios, &profile, &[&a], &everything).unwrap();
        let every: Vec<Vec<(String, u32, u32)>> = full().runnable.iter().map(cells).collect();
        // Measured out of order, one of them twice, and one the plan does
        // not have (another server's).
        let done = [
            measured("one", "echo", 5, 1),
            measured("one", "echo", 1, 1),
            measured("one", "echo", 1, 1),
            measured("two", "echo", 1, 2),
            measured("one", "list", 5, 2),
            Cell {
                server: "b".into(),
                ..measured("one", "echo", 1, 2)
            },
        ];
        let left = remaining(full(), &done);
        let at = |s: &str, level, rep| (s.to_owned(), level, rep);
        assert_eq!(
            cells(&left.runnable[0]),
            [
                at("echo", 1, 2),
                at("echo", 5, 2),
                at("list", 1, 1),
                at("list", 1, 2),
                at("list", 5, 1),
            ]
        );
        assert_eq!(
            cells(&left.runnable[1]),
            [at("echo", 1, 1), at("echo", 5, 1), at("echo", 5, 2)]
        );
        assert_eq!(left.cells(), 8);
        // The remaining cells and the measured ones are the plan, each once.
        for (variant, (planned, left)) in ["one", "two"]
            .iter()
            .zip(every.iter().zip(left.runnable.iter().map(cells)))
        {
            for cell in planned {
                let was = done
                    .iter()
                    .filter(|c| c.server == "a" && c.variant == *variant)
                    .any(|c| (c.scenario.clone(), c.concurrency, c.repetition) == *cell);
                assert_eq!(
                    left.iter().filter(|c| *c == cell).count(),
                    usize::from(!was),
                    "{variant} {cell:?}"
                );
            }
        }
        // Nothing measured: the plan itself; everything measured: nothing.
        assert_eq!(remaining(full(), &[]).cells(), 12);
        let all: Vec<Cell> = every
            .iter()
            .zip(["one", "two"])
            .flat_map(|(cells, v)| cells.iter().map(move |(s, l, r)| measured(v, s, *l, *r)))
            .collect();
        let none = remaining(full(), &all);
        assert_eq!(none.cells(), 0);
        assert_eq!(
            none.runnable.len(),
            2,
            "its variants stay, with no cell left"
        );
    }

    #[test]
    fn a_generic_server_runs_each_scenario_s_load_calling_its_method_under_a_name_of_its_own() {
        let thrift = manifest("name = \"a\"\n[[variant]]\nname = \"one\"\nversion = \"1\"\n");
        let shop: Manifest = toml::from_str(
            r#"
            name = "shop"
            framework = "grpc"
            protocol = "grpc-generic"
            language = "rust"
            description = "d"
            port = 50071
            client_options = { call = "shop.v1.Inventory.Reserve" }
            confinement = { memory = "256m" }
            [[variant]]
            name = "1"
            version = "1"
            "#,
        )
        .unwrap();
        let lab = scenarios();
        let all = with_calls(&lab, &[&thrift, &shop]);
        assert_eq!(all.len(), 4, "the lab's two, and two calling the method");
        let profile = profile("max_levels = 1");
        let plan = plan(&all, &profile, &[&thrift, &shop], &filters(&[], true)).unwrap();
        let [a, generic] = &plan.runnable[..] else {
            panic!("both run")
        };
        let names =
            |p: &Planned<'_>| -> Vec<String> { cells(p).into_iter().map(|c| c.0).collect() };
        assert_eq!(names(a), ["echo", "list"]);
        assert_eq!(
            names(generic),
            [
                "echo:shop.v1.Inventory/Reserve",
                "list:shop.v1.Inventory/Reserve"
            ]
        );
        assert!(generic.skipped.is_empty());
        assert_eq!(
            plan.servers[1].call.as_deref(),
            Some("shop.v1.Inventory/Reserve")
        );
        assert_eq!(plan.servers[0].call, None);
        assert!(carries(&shop, &shop.variants[0], &all[2]));
        assert!(!carries(&shop, &shop.variants[0], &all[0]));
        assert!(!carries(&thrift, &thrift.variants[0], &all[2]));
    }
}
