//! What the user asked for ([`RunOptions`]) and the run it prepares
//! ([`Prepared`]): the profile with the command line's overrides, the
//! selected servers, the variants asked for, the scenarios each server
//! runs, the CPU split, and the lab definition as the run runs it.
//!
//! Pure, like [`crate::engine::plan`]: the caller reads the server
//! manifests and the host's online CPUs, so that every refusal here (an
//! unknown server, variant or scenario, overlapping CPU sets) is unit-tested
//! without Docker, and comes before anything exists: no snapshot, no build.

use crate::basics::cpus::{self, CpuArgs, CpuSet};
use crate::definitions::hosts::HostArgs;
use crate::definitions::lab::{Lab, LabDef, Profile, Scenario};
use crate::definitions::manifest::Manifest;
use crate::definitions::overrides::{self, Overrides};
use crate::engine::capacity;
use crate::engine::netns::NetworkChoice;
use anyhow::{Context, Result};
use rpclab_model::capacity::Asked as CapacityAsked;
use rpclab_model::threshold::Threshold;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// What the user asked for on the command line.
#[derive(Default)]
pub struct RunOptions {
    pub lab: PathBuf,
    pub only: Vec<String>,
    /// Server folders from outside the repository (`--servers-dir`), over
    /// the lab's `servers_dirs`.
    pub servers_dirs: Vec<PathBuf>,
    pub profile: Option<String>,
    pub cpus: CpuArgs,
    pub ca_certificates: Option<PathBuf>,
    /// Where snapshots go; `None`: the profile's default
    /// ([`crate::definitions::lab::Profile::default_results_dir`]).
    pub results_dir: Option<PathBuf>,
    pub verbose: bool,
    /// Run only these (server, variant) pairs; empty: every variant of the
    /// selected servers. `lab reproduce` runs only a seed's stand-ins.
    pub variants: Vec<(String, String)>,
    /// Seconds to wait for a server's ports (and ZooKeeper's) to become free
    /// before giving up on it; 0: fail at once. For hosts where other lab
    /// runs share 127.0.0.1.
    pub port_wait_s: u64,
    /// `--network`; `None`: private on one host, the host's across hosts.
    pub network: Option<NetworkChoice>,
    /// Which engine runs each role (over the lab's `[hosts]`).
    pub hosts: HostArgs,
    /// Seed of an interleaved run's order; `None`: drawn from the clock
    /// (and recorded either way).
    pub rounds_seed: Option<u64>,
    /// The seed's analysis plan, recorded in the manifest (`lab reproduce`).
    pub plan: Option<rpclab_model::plan::RecordedPlan>,
    /// An interrupted snapshot to continue instead of starting a new one
    /// ([`crate::engine::resume`]).
    pub resume: Option<PathBuf>,
    /// `--variant` names (`server/variant` or a variant's name), resolved
    /// among the selected servers and added to `variants`.
    pub variant_names: Vec<String>,
    /// The command line's changes to the profile (`--duration`, ...).
    pub overrides: Overrides,
    /// Every cell is judged by these; the breaches go into `results.json`.
    pub thresholds: Vec<Threshold>,
    /// How long to wait for an engine that stopped answering before the
    /// run stops, resumable ([`crate::engine::outage`]).
    pub engine_wait: Duration,
    /// `lab capacity`: instead of the plan's cells, search the highest
    /// open-loop rate that holds this SLO on the one selected variant
    /// (with the lab's only scenario; [`crate::engine::capacity`]).
    pub capacity: Option<CapacityAsked>,
    /// `--engine kubernetes`: the run's containers are Pods on the cluster
    /// of the kubeconfig (docs/kubernetes.md); images are built here.
    pub kubernetes: bool,
    /// `--image-registry REGISTRY` (with `kubernetes`): the run's images
    /// pushed there, and pulled from there by the cluster's nodes, instead
    /// of loaded into this machine's node.
    pub image_registry: Option<String>,
}

/// The run the options prepare, before anything starts.
pub struct Prepared<'m> {
    /// The lab definition as the run runs it ([`as_run`]), which
    /// `manifest.toml` records; its `profile` is the profile run.
    pub def: LabDef,
    /// The profile run, with the command line's overrides.
    pub profile: Profile,
    /// The servers asked for (the lab's, unless `--only`).
    pub only: Vec<String>,
    pub selected: Vec<&'m Manifest>,
    /// The lab's scenarios, and each generic server's copies of them
    /// calling its method ([`crate::engine::plan::with_calls`]).
    pub scenarios: Vec<Scenario>,
    /// The (server, variant) pairs asked for; empty: every variant.
    pub variants: Vec<(String, String)>,
    pub split: cpus::Split,
}

/// The server folders from outside the repository the run reads: the
/// lab's, then the command line's.
pub fn outside(lab: &Lab, opts: &RunOptions) -> Vec<PathBuf> {
    let mut outside = lab.servers_dirs();
    outside.extend(opts.servers_dirs.iter().cloned());
    outside
}

/// Prepares the run `opts` asks of `lab`, among `manifests` (read from the
/// repository's `servers/` and from [`outside`]), on a host whose online
/// CPUs are `online`.
pub fn prepare<'m>(
    root: &Path,
    mut lab: Lab,
    opts: &RunOptions,
    manifests: &'m [Manifest],
    online: &CpuSet,
) -> Result<Prepared<'m>> {
    let profile_name = opts
        .profile
        .clone()
        .unwrap_or_else(|| lab.def.profile.clone());
    // Over the definition's profile, so that the manifest records it too.
    if let Some(p) = lab.def.profiles.get_mut(&profile_name) {
        opts.overrides.apply(p);
    }
    let profile = lab.profile(&profile_name)?.clone();
    let only = if opts.only.is_empty() {
        lab.def.servers.clone()
    } else {
        opts.only.clone()
    };
    let selected = crate::definitions::manifest::select(manifests, &only)?;
    check_targets(&selected, &profile, opts.network)?;
    // A server of a generic protocol runs each scenario's load calling
    // its own method, as scenarios of their own (plan::with_calls).
    let scenarios = crate::engine::plan::with_calls(&lab.scenarios, &selected);
    let mut variants = opts.variants.clone();
    for pair in overrides::variant_pairs(&opts.variant_names, &selected)? {
        if !variants.contains(&pair) {
            variants.push(pair);
        }
    }
    if let Some(asked) = &opts.capacity {
        let base = lab
            .scenarios
            .iter()
            .find(|s| s.name == asked.scenario)
            .with_context(|| format!("the lab has no scenario `{}`", asked.scenario))?;
        capacity::Loads::of(base, &profile)?;
        variants = vec![capacity::variant(&selected, &variants, base)?];
    }
    let split = split_cpus(&lab.def.cpus, &opts.cpus, online)?;
    let mut def = as_run(
        &lab.def,
        &profile_name,
        &split,
        opts.ca_certificates.as_ref(),
    );
    // As the repository's root sees them, where they are inside.
    def.servers_dirs = outside(&lab, opts)
        .iter()
        .map(|d| d.strip_prefix(root).map_or(d.clone(), Path::to_owned))
        .collect();
    Ok(Prepared {
        def,
        profile,
        only,
        selected,
        scenarios,
        variants,
        split,
    })
}

impl Prepared<'_> {
    /// Whether the run calls a service it did not start (a target): its
    /// client then runs on the host's network, where the service is.
    pub fn calls_a_target(&self) -> bool {
        self.selected.iter().any(|m| m.target.is_some())
    }
}

/// What a run of a service the lab did not start cannot do: restart it,
/// interleave it with others (each round starts its servers), or reach it
/// from a private network.
fn check_targets(
    selected: &[&Manifest],
    profile: &Profile,
    network: Option<NetworkChoice>,
) -> Result<()> {
    let Some(target) = selected.iter().find(|m| m.target.is_some()) else {
        return Ok(());
    };
    let name = &target.name;
    if profile.rounds.is_some() {
        anyhow::bail!("{name} is a service the lab did not start, and interleaved rounds start each server they measure: use a profile without `rounds` (standard, smoke)");
    }
    if profile.restart_between_repetitions {
        anyhow::bail!("{name} is a service the lab did not start, so it cannot restart it between repetitions: use a profile without `restart_between_repetitions`");
    }
    if network == Some(NetworkChoice::Private) {
        anyhow::bail!("{name} is a service the lab did not start, reached on the host's network: leave out --network private");
    }
    Ok(())
}

/// The CPU sets of the run: the flags over the lab's `[cpus]`, checked
/// against the host's online CPUs.
fn split_cpus(
    lab: &crate::definitions::lab::Cpus,
    flags: &CpuArgs,
    online: &CpuSet,
) -> Result<cpus::Split> {
    cpus::split(
        &cpus::Request {
            server: flags.server_cpus.as_deref().unwrap_or(&lab.server),
            registry: flags.registry_cpus.as_deref().unwrap_or(&lab.registry),
            client: flags.client_cpus.as_deref().unwrap_or(&lab.client),
            allow_shared: flags.allow_shared_cpus,
        },
        online,
    )
}

/// The lab definition as this run ran it, which `manifest.toml` records:
/// the file's, with the profile, the CPU sets and the CA certificates the
/// command line chose over it.
fn as_run(def: &LabDef, profile: &str, split: &cpus::Split, ca: Option<&PathBuf>) -> LabDef {
    let mut ran = def.clone();
    ran.profile = profile.to_owned();
    ran.cpus.server = split.server.clone();
    ran.cpus.registry = split.registry.clone();
    ran.cpus.client = split.client.clone();
    if let Some(ca) = ca {
        ran.build.ca_certificates = ca.clone();
    }
    ran
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::definitions::manifest::java_thrift_for_tests as manifest;

    fn manifests() -> Vec<Manifest> {
        let two = "[[variant]]\nname = \"one\"\nversion = \"1\"\n[[variant]]\nname = \"two\"\nversion = \"2\"\n";
        vec![
            manifest(&format!("name = \"a\"\n{two}")),
            manifest(&format!("name = \"b\"\n{two}")),
        ]
    }

    fn lab() -> Lab {
        let def: LabDef = toml::from_str(
            r#"
            name = "t"
            servers = ["a"]
            scenarios = ["echo"]
            servers_dirs = ["../outside"]
            profile = "p"
            [profiles.p]
            measure_s = 1.0
            [profiles.other]
            measure_s = 2.0
            "#,
        )
        .unwrap();
        Lab {
            path: PathBuf::from("/repo/compose/lab.toml"),
            def,
            scenarios: vec![crate::definitions::lab::client_programs_for_tests(
                "echo",
                rpclab_model::contract::Operation::OrderEcho,
                &[1, 5],
            )],
        }
    }

    fn four_cpus() -> CpuSet {
        CpuSet::parse("0-3").unwrap()
    }

    #[test]
    fn the_command_lines_profile_and_overrides_are_run_and_recorded() {
        let opts = RunOptions {
            profile: Some("other".into()),
            overrides: Overrides {
                repetitions: Some(7),
                ..Overrides::default()
            },
            servers_dirs: vec![PathBuf::from("/elsewhere/servers")],
            ..RunOptions::default()
        };
        let manifests = manifests();
        let p = prepare(Path::new("/repo"), lab(), &opts, &manifests, &four_cpus()).unwrap();
        assert_eq!(p.profile.repetitions, 7);
        assert_eq!(p.def.profile, "other");
        assert_eq!(p.def.profiles["other"].repetitions, 7);
        assert_ne!(p.def.profiles["p"].repetitions, 7);
        // The lab's servers, unless --only.
        assert_eq!(p.only, vec!["a".to_owned()]);
        let names: Vec<&str> = p.selected.iter().map(|m| m.name.as_str()).collect();
        assert_eq!(names, ["a"]);
        // Inside the repository, relative to it; outside, as given.
        assert_eq!(
            p.def.servers_dirs,
            vec![
                PathBuf::from("compose/../outside"),
                PathBuf::from("/elsewhere/servers")
            ]
        );
        // The CPU sets run are recorded over the file's `auto`.
        assert_eq!(p.def.cpus.server, p.split.server);
        assert_eq!(p.def.cpus.client, p.split.client);
        assert_ne!(p.def.cpus.server, "auto");
    }

    #[test]
    fn variant_names_add_to_the_variants_asked_for_once() {
        let opts = RunOptions {
            only: vec!["a".into(), "b".into()],
            variants: vec![("a".into(), "one".into())],
            variant_names: vec!["a/one".into(), "b/two".into()],
            ..RunOptions::default()
        };
        let manifests = manifests();
        let p = prepare(Path::new("/repo"), lab(), &opts, &manifests, &four_cpus()).unwrap();
        assert_eq!(
            p.variants,
            vec![
                ("a".to_owned(), "one".to_owned()),
                ("b".to_owned(), "two".to_owned())
            ]
        );
    }

    #[test]
    fn unknown_servers_and_overlapping_cpu_sets_are_refused_before_anything_starts() {
        let manifests = manifests();
        let run =
            |opts: RunOptions| prepare(Path::new("/repo"), lab(), &opts, &manifests, &four_cpus());
        let unknown = RunOptions {
            only: vec!["nowhere".into()],
            ..RunOptions::default()
        };
        assert!(run(unknown).is_err());
        let overlapping = |allow_shared_cpus| RunOptions {
            cpus: CpuArgs {
                server_cpus: Some("0-1".into()),
                client_cpus: Some("1-2".into()),
                allow_shared_cpus,
                ..CpuArgs::default()
            },
            ..RunOptions::default()
        };
        assert!(run(overlapping(false)).is_err());
        assert!(run(overlapping(true)).unwrap().split.shared);
    }

    #[test]
    fn a_ca_folder_on_the_command_line_is_recorded_as_run() {
        let opts = RunOptions {
            ca_certificates: Some(PathBuf::from("/etc/my-ca")),
            ..RunOptions::default()
        };
        let manifests = manifests();
        let p = prepare(Path::new("/repo"), lab(), &opts, &manifests, &four_cpus()).unwrap();
        assert_eq!(p.def.build.ca_certificates, PathBuf::from("/etc/my-ca"));
    }
}
