//! Seed lab definitions: `compose/seeds/<id>.toml`, one per source post, and
//! the post's published figures beside it (`<id>.published.toml`).
//!
//! A seed definition is an ordinary lab (it borrows profiles, CPUs and build
//! settings from a base lab definition and names scenarios from the shared
//! scenario library) plus the links that make its numbers comparable: which
//! lab scenario reproduces each published scenario, which server variant
//! stands in for each published system, how each published metric is derived
//! from a measured cell, how the post laid out its tables, and how each of
//! its claims is checked. Links name servers by folder (a trailing `*`
//! matches a prefix) or by framework, so a system whose server has not landed
//! yet is reported as "not run: <why>" and starts running when its folder
//! appears, with no change here.
//!
//! The published file holds facts only (numbers, printed cell text, versions,
//! settings); [`build_reproduction`] turns both into the
//! [`Reproduction`] that a snapshot carries.

use crate::definitions::lab::Scenario;
use crate::definitions::lab::{Lab, LabDef, Profile};
use crate::definitions::manifest::{parse_toml, Manifest};
use anyhow::{bail, Context, Result};
use rpclab_model::result::{
    ClaimCheck, Measure, PublishedCell, RatioPair, Reproduction, SeedClaim, SeedSystem,
};
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// `compose/seeds/<id>.toml`.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SeedDef {
    pub id: String,
    pub title: String,
    /// The published figures, relative to this file.
    pub published: PathBuf,
    /// The lab definition whose profiles, CPU split and build settings
    /// this seed uses, relative to this file.
    #[serde(default = "default_base")]
    pub base: PathBuf,
    /// Scenario files, relative to this file.
    #[serde(default = "default_scenario_files")]
    pub scenario_files: Vec<PathBuf>,
    /// Profile used when `--profile` is not given.
    #[serde(default = "default_seed_profile")]
    pub profile: String,
    /// What a reader must know next to the tables (metric quirks, stand-ins).
    #[serde(default)]
    pub notes: Vec<String>,
    /// Every way the lab's reproduction still differs from what the post
    /// did (load shape, settings, versions, warm-up), one sentence each;
    /// the report shows them under "Deviations from the post".
    #[serde(default)]
    pub deviations: Vec<String>,
    /// Profiles of this seed, over the base lab's of the same name
    /// (`reproduce`: each post's load shape within the time budget).
    #[serde(default)]
    pub profiles: BTreeMap<String, Profile>,
    /// The analysis plan, fixed before the run: rule, α, bands, and the
    /// design (JVM starts × rounds) of its profile, which the profile
    /// takes from here.
    pub plan: rpclab_model::plan::Plan,
    #[serde(rename = "scenario")]
    pub scenarios: Vec<ScenarioLink>,
    #[serde(rename = "system")]
    pub systems: Vec<SystemLink>,
    /// Published metric name → derivation, over the defaults of [`default_measure`].
    #[serde(default)]
    pub measures: BTreeMap<String, Measure>,
    #[serde(rename = "table")]
    pub tables: Vec<TableDef>,
    #[serde(default, rename = "check")]
    pub checks: Vec<CheckDef>,
}

fn default_base() -> PathBuf {
    PathBuf::from("../full.toml")
}
fn default_scenario_files() -> Vec<PathBuf> {
    vec![PathBuf::from("../scenarios.toml")]
}
fn default_seed_profile() -> String {
    "seed".into()
}

/// A published scenario (optionally one payload of it) and the lab scenario
/// that reproduces it, or why none can.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScenarioLink {
    pub published: String,
    #[serde(default)]
    pub payload: Option<String>,
    #[serde(default)]
    pub lab: Option<String>,
    #[serde(default)]
    pub unlinked: Option<String>,
}

/// A system of the post and its stand-ins in the lab, tried in order.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SystemLink {
    pub key: String,
    pub published_as: String,
    /// Published cell fields (`system`, `config`, `serialization`,
    /// `call_model`) that select this system's cells.
    #[serde(rename = "match")]
    pub matches: BTreeMap<String, String>,
    #[serde(default)]
    pub targets: Vec<Target>,
    /// Why no lab server can stand in for it at all.
    #[serde(default)]
    pub unavailable: Option<String>,
}

/// A server variant by folder (`server`, a trailing `*` matches a prefix)
/// or framework, and optionally a variant name (else its first runnable one).
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Target {
    pub server: Option<String>,
    pub framework: Option<String>,
    pub variant: Option<String>,
    /// How this stand-in differs from what the post ran.
    pub note: Option<String>,
}

/// How the post laid out a table: which published fields make the rows and
/// which one the columns, optionally one sub-table per value of `split`.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TableDef {
    pub title: String,
    pub scenarios: Vec<String>,
    pub rows: Vec<String>,
    pub column: String,
    #[serde(default)]
    pub split: Option<String>,
}

/// How a published claim is checked.
#[derive(Clone, Debug, Deserialize)]
pub struct CheckDef {
    pub claim: String,
    #[serde(flatten)]
    pub check: ClaimCheck,
}

/// `compose/seeds/<id>.published.toml` (format described in compose/seeds/README.md).
#[derive(Clone, Debug, Deserialize)]
pub struct Published {
    pub format: u32,
    pub id: String,
    pub seed_file: String,
    pub title: String,
    pub title_en: String,
    #[serde(default)]
    pub author: Option<String>,
    #[serde(default)]
    pub url: Option<String>,
    #[serde(default)]
    pub year: Option<u32>,
    #[serde(default)]
    pub year_earliest: Option<u32>,
    pub summary: String,
    #[serde(default)]
    pub scenario: Vec<PublishedScenario>,
    pub cell: Vec<Figure>,
    #[serde(default)]
    pub claim: Vec<Claim>,
    #[serde(default)]
    pub caveat: Vec<Caveat>,
}

#[derive(Clone, Debug, Deserialize)]
pub struct PublishedScenario {
    pub id: String,
    #[serde(default)]
    pub metrics: BTreeMap<String, String>,
}

/// One published figure.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Figure {
    pub scenario: String,
    pub payload: String,
    pub system: String,
    #[serde(default)]
    pub config: Option<String>,
    #[serde(default)]
    pub serialization: Option<String>,
    #[serde(default)]
    pub call_model: Option<String>,
    #[serde(default)]
    pub framework: Option<String>,
    #[serde(default)]
    pub label: Option<String>,
    #[serde(default)]
    pub concurrency: Option<u32>,
    #[serde(default)]
    pub calls_per_client: Option<u64>,
    #[serde(default)]
    pub total_calls: Option<u64>,
    pub metric: String,
    #[serde(default)]
    pub value: Option<f64>,
    pub unit: String,
    pub raw: String,
    #[serde(default)]
    pub status: Option<String>,
    #[serde(default)]
    pub unit_stated: Option<bool>,
}

impl Figure {
    /// A published field by name, as text (for matching and table layout).
    pub fn field(&self, name: &str) -> Option<String> {
        match name {
            "scenario" => Some(self.scenario.clone()),
            "payload" => Some(self.payload.clone()),
            "system" => Some(self.system.clone()),
            "config" => self.config.clone(),
            "serialization" => self.serialization.clone(),
            "call_model" => self.call_model.clone(),
            "framework" => self.framework.clone(),
            "label" => self.label.clone(),
            "concurrency" => self.concurrency.map(|c| c.to_string()),
            "metric" => Some(format!("{} ({})", self.metric, self.unit)),
            _ => None,
        }
    }

    /// Calls of the published run: stated, or per client × clients.
    pub fn calls(&self) -> Option<u64> {
        self.total_calls.or_else(|| {
            self.calls_per_client
                .zip(self.concurrency)
                .map(|(n, c)| n * c as u64)
        })
    }
}

#[derive(Clone, Debug, Deserialize)]
pub struct Claim {
    pub id: String,
    pub text: String,
    #[serde(default)]
    pub ratios: BTreeMap<String, f64>,
}

#[derive(Clone, Debug, Deserialize)]
pub struct Caveat {
    pub kind: String,
    pub text: String,
}

/// How a published metric is derived from a measured aggregate, unless the
/// seed definition says otherwise.
pub fn default_measure(metric: &str) -> Option<Measure> {
    Some(match metric {
        "tps" | "throughput" => Measure::Throughput,
        "total_s" => Measure::TotalSeconds,
        "elapsed_ms" => Measure::TotalMs,
        "avg_ms" => Measure::LatencyMeanMs,
        "min_ms" => Measure::LatencyMinMs,
        "max_ms" => Measure::LatencyMaxMs,
        "p50_ms" => Measure::LatencyP50Ms,
        "p90_ms" => Measure::LatencyP90Ms,
        "p95_ms" => Measure::LatencyP95Ms,
        "p99_ms" => Measure::LatencyP99Ms,
        "samples" => Measure::Samples,
        "ko" => Measure::Failed,
        "error_pct" => Measure::ErrorPercent,
        "received_kb_s" => Measure::ReceivedKbPerS,
        "sent_kb_s" => Measure::SentKbPerS,
        _ => return None,
    })
}

/// A seed definition with its published figures and scenario library.
#[derive(Clone, Debug)]
pub struct Seed {
    pub path: PathBuf,
    pub def: SeedDef,
    pub published: Published,
    /// The base lab, with this seed's scenarios resolved.
    pub lab: Lab,
}

/// The seed definitions' folder.
pub fn seeds_dir(root: &Path) -> PathBuf {
    root.join("compose").join("seeds")
}

/// Ids of every seed definition, sorted.
pub fn list(root: &Path) -> Result<Vec<String>> {
    let dir = seeds_dir(root);
    let mut ids = Vec::new();
    for e in std::fs::read_dir(&dir).with_context(|| format!("cannot read {}", dir.display()))? {
        let p = e?.path();
        let name = p.file_name().and_then(|n| n.to_str()).unwrap_or_default();
        if let Some(id) = name.strip_suffix(".toml") {
            if !id.ends_with(".published") {
                ids.push(id.to_owned());
            }
        }
    }
    ids.sort();
    Ok(ids)
}

impl Seed {
    /// Loads `compose/seeds/<id>.toml`, its published file, base lab and scenarios.
    pub fn load(root: &Path, id: &str) -> Result<Seed> {
        let path = seeds_dir(root).join(format!("{id}.toml"));
        if !path.is_file() {
            bail!(
                "no seed definition {}; known seeds: {}",
                path.display(),
                list(root)?.join(", ")
            );
        }
        let text = std::fs::read_to_string(&path)
            .with_context(|| format!("cannot read {}", path.display()))?;
        let def: SeedDef = parse_toml(&path, &text)?;
        if def.id != id {
            bail!(
                "{}: id = \"{}\" must match the file name",
                path.display(),
                def.id
            );
        }
        let dir = path.parent().unwrap_or(Path::new("."));
        let ppath = dir.join(&def.published);
        let ptext = std::fs::read_to_string(&ppath)
            .with_context(|| format!("cannot read the published figures {}", ppath.display()))?;
        let published: Published = parse_toml(&ppath, &ptext)?;
        if published.format != 1 {
            bail!("{}: format {} is not 1", ppath.display(), published.format);
        }
        let base_path = dir.join(&def.base);
        let base_text = std::fs::read_to_string(&base_path)
            .with_context(|| format!("cannot read {}", base_path.display()))?;
        let mut base: LabDef = parse_toml(&base_path, &base_text)?;
        // Paths in a lab definition are relative to it; the seed's are
        // relative to the seed file, so write them relative to the base.
        let base_dir = base_path.parent().unwrap_or(Path::new("."));
        base.scenario_files = def
            .scenario_files
            .iter()
            .map(|f| relative_to(&dir.join(f), base_dir))
            .collect();
        for (name, profile) in &def.profiles {
            base.profiles.insert(name.clone(), profile.clone());
        }
        def.plan
            .check()
            .map_err(|e| anyhow::anyhow!("{}: [plan]: {e}", path.display()))?;
        // The plan's design is the one place its profile's rounds come from.
        let Some(planned) = base.profiles.get_mut(&def.plan.profile) else {
            bail!(
                "{}: [plan] names profile `{}`, which neither this seed nor {} defines",
                path.display(),
                def.plan.profile,
                base_path.display()
            );
        };
        if def
            .profiles
            .get(&def.plan.profile)
            .is_some_and(|p| p.rounds.is_some())
        {
            bail!(
                "{}: [profiles.{}] sets `rounds`, but its design is the plan's: give `starts` and `rounds` in [plan] only",
                path.display(),
                def.plan.profile
            );
        }
        planned.rounds = Some(crate::definitions::lab::RoundsPolicy {
            starts: def.plan.starts,
            per_start: def.plan.rounds,
        });
        base.name = format!("seed {}", def.id);
        base.description = def.title.clone();
        base.servers = Vec::new();
        base.scenarios = Vec::new();
        for link in &def.scenarios {
            if let Some(s) = &link.lab {
                if !base.scenarios.contains(s) {
                    base.scenarios.push(s.clone());
                }
            }
        }
        if !base.profiles.contains_key(&def.profile) {
            bail!(
                "{}: profile `{}` is not in {}",
                path.display(),
                def.profile,
                base_path.display()
            );
        }
        base.profile = def.profile.clone();
        let lab = Lab::from_def(&base_path, base)?;
        let seed = Seed {
            path,
            def,
            published,
            lab,
        };
        seed.validate()?;
        Ok(seed)
    }

    /// Every published figure must belong to a system, a linked (or
    /// explicitly unlinked) scenario and a table; every claim needs a check.
    pub fn validate(&self) -> Result<()> {
        let p = self.path.display();
        let mut problems = Vec::new();
        if self.published.id != self.def.id {
            problems.push(format!(
                "the published file's id `{}` is not `{}`",
                self.published.id, self.def.id
            ));
        }
        for (i, f) in self.published.cell.iter().enumerate() {
            if self.system_of(f).is_none() {
                problems.push(format!(
                    "published cell {} ({} {}) matches no [[system]]",
                    i + 1,
                    f.system,
                    f.metric
                ));
            }
            if self.scenario_link(f).is_none() {
                problems.push(format!(
                    "published cell {} (scenario {}, payload {}) has no [[scenario]] link",
                    i + 1,
                    f.scenario,
                    f.payload
                ));
            }
            if !self
                .def
                .tables
                .iter()
                .any(|t| t.scenarios.contains(&f.scenario))
            {
                problems.push(format!(
                    "published scenario {} is in no [[table]]",
                    f.scenario
                ));
            }
            if self.measure_of(&f.metric).is_none() {
                problems.push(format!(
                    "metric {} has no derivation; add it under [measures]",
                    f.metric
                ));
            }
        }
        for link in &self.def.scenarios {
            if link.lab.is_some() == link.unlinked.is_some() {
                problems.push(format!(
                    "[[scenario]] {}: give exactly one of `lab` and `unlinked`",
                    link.published
                ));
            }
        }
        for s in &self.def.systems {
            if s.targets.is_empty() == s.unavailable.is_none() {
                problems.push(format!(
                    "[[system]] {}: give `targets` or `unavailable`, not both or neither",
                    s.key
                ));
            }
        }
        for c in &self.published.claim {
            if !self.def.checks.iter().any(|k| k.claim == c.id) {
                problems.push(format!("claim {} has no [[check]]", c.id));
            }
        }
        for k in &self.def.checks {
            if !self.published.claim.iter().any(|c| c.id == k.claim) {
                problems.push(format!("[[check]] names an unknown claim {}", k.claim));
            }
            if let ClaimCheck::Equivalent { systems, .. } = &k.check {
                if systems.len() < 2 {
                    problems.push(format!(
                        "[[check]] {}: an equivalence needs two or more `systems`",
                        k.claim
                    ));
                }
            }
        }
        problems.sort();
        problems.dedup();
        if !problems.is_empty() {
            bail!("{p}:\n- {}", problems.join("\n- "));
        }
        Ok(())
    }

    fn system_of(&self, f: &Figure) -> Option<&SystemLink> {
        self.def.systems.iter().find(|s| {
            s.matches
                .iter()
                .all(|(k, v)| f.field(k).as_deref() == Some(v.as_str()))
        })
    }

    fn scenario_link(&self, f: &Figure) -> Option<&ScenarioLink> {
        self.def.scenarios.iter().find(|l| {
            l.published == f.scenario && l.payload.as_ref().is_none_or(|p| p == &f.payload)
        })
    }

    fn measure_of(&self, metric: &str) -> Option<Measure> {
        self.def
            .measures
            .get(metric)
            .copied()
            .or_else(|| default_measure(metric))
    }

    /// The lab servers that stand in for the seed's systems, or why none can.
    pub fn resolve(&self, manifests: &[Manifest]) -> Vec<SeedSystem> {
        self.def
            .systems
            .iter()
            .map(|s| {
                let mut out = SeedSystem {
                    key: s.key.clone(),
                    published_as: s.published_as.clone(),
                    ..SeedSystem::default()
                };
                if let Some(why) = &s.unavailable {
                    out.not_run = Some(why.clone());
                    return out;
                }
                let mut reasons = Vec::new();
                for t in &s.targets {
                    match resolve_target(t, manifests) {
                        Ok((server, variant)) => {
                            out.server = Some(server);
                            out.variant = Some(variant);
                            // A fallback says what it falls back from.
                            out.note = match (t.note.clone(), reasons.is_empty()) {
                                (note, true) => note,
                                (note, false) => Some(format!(
                                    "{}preferred stand-in not runnable: {}",
                                    note.map(|n| format!("{n}; ")).unwrap_or_default(),
                                    reasons.join("; ")
                                )),
                            };
                            return out;
                        }
                        Err(why) => reasons.push(why),
                    }
                }
                out.not_run = Some(reasons.join("; "));
                out
            })
            .collect()
    }

    /// The comparison record a snapshot carries, for the resolved systems.
    pub fn reproduction(&self, systems: Vec<SeedSystem>) -> Reproduction {
        build_reproduction(self, systems)
    }

    /// The seed's plan as a run records it: with its profile's windows and
    /// the SHA-256 of the whole (so that a change to a band, the design or
    /// a window changes the plan's name).
    pub fn recorded_plan(&self) -> Result<rpclab_model::plan::RecordedPlan> {
        let profile = self.lab.profile(&self.def.plan.profile)?;
        let mut plan = self.def.plan.clone();
        plan.windows = Some(rpclab_model::plan::Windows {
            prime_s: profile.prime_s,
            warmup_s: profile.warmup_s,
            warmup_max_s: profile.warmup_max_s,
            measure_s: profile.measure_s,
            min_calls: profile.min_calls,
        });
        let canonical = serde_json::to_vec(&plan)?;
        use sha2::Digest;
        let hash = sha2::Sha256::digest(&canonical)
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        Ok(rpclab_model::plan::RecordedPlan { plan, hash })
    }
}

/// What the time budget of a profile assumes beyond its warm-up, window
/// and cool-down: each run's own start (host calibration, the registry,
/// the load client built beforehand)...
pub const RUN_START_S: f64 = 30.0;
/// ...each server variant's start (container up, JVM ready, registered;
/// its image built beforehand by `cargo xtask lab build`)...
pub const SERVER_START_S: f64 = 20.0;
/// ...and each cell's own overhead (the client container, the results).
pub const CELL_OVERHEAD_S: f64 = 1.5;
/// `cargo xtask lab reproduce --all --profile reproduce` must fit in this
/// at its least rounds (issue 33: at most 2 hours on a 2-core host).
pub const REPRODUCE_BUDGET_S: f64 = 120.0 * 60.0;

/// How long a seed takes under a profile, at most, computed from its
/// definition: every stand-in variant's starts (each with its priming),
/// and for every cell (variant × scenario × level × round) the longest
/// warm-up, the window and the cool-down. A window that ends by calls is counted at the post's own
/// run time for those calls (from its published figures).
#[derive(Clone, Debug, PartialEq)]
pub struct Budget {
    pub seed: String,
    pub profile: String,
    /// Server variants started.
    pub variants: usize,
    /// JVM starts of every variant, and rounds of every level within each
    /// (the plan's design; 1 × the repetitions for a profile in blocks).
    pub starts: u32,
    pub rounds_per_start: u32,
    /// Cells run, every round of every start (or the repetitions) included.
    pub cells: usize,
    /// The whole design, at the longest warm-ups.
    pub seconds: f64,
}

impl Seed {
    /// The (server, variant) pairs a reproduction runs, in order.
    pub fn variants_run(systems: &[SeedSystem]) -> Vec<(String, String)> {
        let mut variants: Vec<(String, String)> = Vec::new();
        for s in systems {
            if let (Some(server), Some(variant)) = (&s.server, &s.variant) {
                if !variants.contains(&(server.clone(), variant.clone())) {
                    variants.push((server.clone(), variant.clone()));
                }
            }
        }
        variants
    }

    /// The time budget of this seed under `profile` (see [`Budget`]).
    pub fn budget(&self, profile_name: &str, manifests: &[Manifest]) -> Result<Budget> {
        let profile = self.lab.profile(profile_name)?;
        let systems = self.resolve(manifests);
        let variants = Self::variants_run(&systems);
        let mut seconds = RUN_START_S;
        let starts = profile.starts();
        let mut cells = 0;
        for (server, variant) in &variants {
            let m = manifests
                .iter()
                .find(|m| &m.name == server)
                .with_context(|| format!("no manifest for {server}"))?;
            let v = m
                .variants
                .iter()
                .find(|v| &v.name == variant)
                .with_context(|| format!("{server} has no variant {variant}"))?;
            // After each (re)start: a priming run, or else a first cell
            // that may warm up longer.
            let cold_extra = if profile.primes() {
                profile.priming_limit_s() + CELL_OVERHEAD_S
            } else {
                profile.warmup_limit_s(true) - profile.warmup_limit_s(false)
            };
            seconds += (SERVER_START_S + cold_extra) * f64::from(starts);
            for sc in &self.lab.scenarios {
                if v.cannot_carry(sc.operation).is_some() {
                    continue;
                }
                for level in sc.levels(profile) {
                    let cell = self.cell_seconds(sc, level, profile)?;
                    cells += profile.repetitions_per_level() as usize;
                    seconds += cell * profile.repetitions_per_level() as f64;
                    if profile.restart_between_repetitions {
                        seconds += cold_extra * profile.repetitions.saturating_sub(1) as f64;
                    }
                }
            }
        }
        Ok(Budget {
            seed: self.def.id.clone(),
            profile: profile_name.to_owned(),
            variants: variants.len(),
            starts,
            rounds_per_start: profile.repetitions_per_level() / starts.max(1),
            cells,
            seconds,
        })
    }

    /// One cell's longest time: warm-up (none when connection set-up is
    /// measured), window, cool-down and overhead.
    fn cell_seconds(&self, sc: &Scenario, level: u32, profile: &Profile) -> Result<f64> {
        let warmup = if sc.include_connect {
            0.0
        } else {
            profile.warmup_limit_s(false)
        };
        let window = match sc.stop(profile)? {
            rpclab_model::spec::Stop::Seconds(s) => s,
            _ => self.published_seconds(&sc.name, level).with_context(|| {
                format!(
                    "{}: scenario {} at level {level} ends by calls, and no published figure gives the post's run time for them; give the profile `measure_s`",
                    self.def.id, sc.name
                )
            })?,
        };
        Ok(warmup + window + profile.cooldown_s + CELL_OVERHEAD_S)
    }

    /// The longest run time the post published for the figures linked to
    /// lab scenario `scenario` at `level`: total seconds or milliseconds as
    /// printed, calls / throughput, or calls per caller × mean latency.
    fn published_seconds(&self, scenario: &str, level: u32) -> Option<f64> {
        self.published
            .cell
            .iter()
            .filter(|f| {
                f.concurrency == Some(level)
                    && self
                        .scenario_link(f)
                        .and_then(|l| l.lab.as_deref())
                        .is_some_and(|l| l == scenario)
            })
            .filter_map(|f| {
                let v = f.value.filter(|v| *v > 0.0)?;
                let calls = f.calls()? as f64;
                match self.measure_of(&f.metric)? {
                    Measure::TotalSeconds => Some(v),
                    Measure::TotalMs => Some(v / 1000.0),
                    Measure::Throughput => Some(calls / v),
                    Measure::MsPerCall => Some(calls * v / 1000.0),
                    Measure::LatencyMeanMs => Some(calls / level.max(1) as f64 * v / 1000.0),
                    _ => None,
                }
            })
            .reduce(f64::max)
    }

    /// Every published figure under `profile`: `Ok` when the profile runs
    /// its measured twin (its system's stand-in, at its scenario and
    /// level), else why not ("not run: ..."), as the report shows it.
    pub fn accounting(
        &self,
        profile_name: &str,
        manifests: &[Manifest],
    ) -> Result<Vec<(PublishedCell, std::result::Result<(), String>)>> {
        let profile = self.lab.profile(profile_name)?;
        let systems = self.resolve(manifests);
        let r = self.reproduction(systems.clone());
        Ok(r.cells
            .into_iter()
            .map(|c| {
                let verdict = (|| {
                    if let Some(why) = &c.unlinked {
                        return Err(format!("no lab cell: {why}"));
                    }
                    let s = systems
                        .iter()
                        .find(|s| s.key == c.system)
                        .ok_or_else(|| format!("system {} is not defined", c.system))?;
                    if let Some(why) = &s.not_run {
                        return Err(format!("not run: {why}"));
                    }
                    let (Some(scenario), Some(level)) = (&c.scenario, c.concurrency) else {
                        return Err("no lab cell".into());
                    };
                    let sc = self
                        .lab
                        .scenarios
                        .iter()
                        .find(|x| &x.name == scenario)
                        .ok_or_else(|| format!("scenario {scenario} is not in the seed's lab"))?;
                    if !sc.levels(profile).contains(&level) {
                        return Err(format!(
                            "not run: profile {profile_name} runs scenario {scenario} at {:?} only",
                            sc.levels(profile)
                        ));
                    }
                    let (server, variant) = (
                        s.server.clone().unwrap_or_default(),
                        s.variant.clone().unwrap_or_default(),
                    );
                    let carries = manifests
                        .iter()
                        .find(|m| m.name == server)
                        .and_then(|m| m.variants.iter().find(|v| v.name == variant))
                        .map(|v| v.cannot_carry(sc.operation).map(str::to_owned));
                    match carries {
                        Some(None) => Ok(()),
                        Some(Some(why)) => Err(format!(
                            "not run: {server} {variant} cannot carry it: {why}"
                        )),
                        None => Err(format!("not run: no variant {server} {variant}")),
                    }
                })();
                (c, verdict)
            })
            .collect())
    }
}

/// `path` written relative to `base` when it lies below the common root;
/// absolute otherwise (both are repository paths, so this stays readable).
fn relative_to(path: &Path, base: &Path) -> PathBuf {
    let norm = |p: &Path| -> PathBuf {
        let mut out = PathBuf::new();
        for c in p.components() {
            match c {
                std::path::Component::ParentDir => {
                    out.pop();
                }
                std::path::Component::CurDir => {}
                other => out.push(other),
            }
        }
        out
    };
    let (p, b) = (norm(path), norm(base));
    match p.strip_prefix(&b) {
        Ok(rel) => rel.to_owned(),
        Err(_) => {
            // One level up at most is all the seed layout needs.
            match b.parent().and_then(|parent| p.strip_prefix(parent).ok()) {
                Some(rel) => Path::new("..").join(rel),
                None => p,
            }
        }
    }
}

/// Matches a folder name against `pattern`, where a trailing `*` is a prefix.
fn name_matches(name: &str, pattern: &str) -> bool {
    match pattern.strip_suffix('*') {
        Some(prefix) => name.starts_with(prefix),
        None => name == pattern,
    }
}

fn resolve_target(
    t: &Target,
    manifests: &[Manifest],
) -> std::result::Result<(String, String), String> {
    let wanted = match (&t.server, &t.framework) {
        (Some(s), _) => format!("server `{s}`"),
        (None, Some(f)) => format!("framework `{f}`"),
        (None, None) => return Err("a target needs `server` or `framework`".into()),
    };
    let candidates: Vec<&Manifest> = manifests
        .iter()
        .filter(|m| {
            t.server.as_ref().is_none_or(|s| name_matches(&m.name, s))
                && t.framework.as_ref().is_none_or(|f| &m.framework == f)
        })
        .collect();
    if candidates.is_empty() {
        return Err(format!(
            "no server folder for {wanted} under servers/ yet{}",
            t.variant
                .as_ref()
                .map(|v| format!(" (variant `{v}`)"))
                .unwrap_or_default()
        ));
    }
    let mut reasons = Vec::new();
    for m in candidates {
        let variants: Vec<_> = match &t.variant {
            Some(v) => m.variants.iter().filter(|x| &x.name == v).collect(),
            None => m.variants.iter().collect(),
        };
        if variants.is_empty() {
            reasons.push(format!(
                "servers/{} has no variant `{}`",
                m.name,
                t.variant.as_deref().unwrap_or("?")
            ));
        }
        for v in variants {
            match m.not_runnable(v) {
                None => return Ok((m.name.clone(), v.name.clone())),
                Some(why) => reasons.push(format!("{} {}: {why}", m.name, v.name)),
            }
        }
    }
    Err(reasons.join("; "))
}

fn build_reproduction(seed: &Seed, systems: Vec<SeedSystem>) -> Reproduction {
    let p = &seed.published;
    let mut cells = Vec::new();
    for t in &seed.def.tables {
        for f in p.cell.iter().filter(|f| t.scenarios.contains(&f.scenario)) {
            cells.push(published_cell(seed, t, f));
        }
    }
    let claims = p
        .claim
        .iter()
        .map(|c| {
            let mut check = seed
                .def
                .checks
                .iter()
                .find(|k| k.claim == c.id)
                .map(|k| k.check.clone())
                .unwrap_or(ClaimCheck::NotCheckable {
                    reason: "no check defined".into(),
                });
            if let ClaimCheck::Ratio { pairs, .. } = &mut check {
                if pairs.is_empty() {
                    *pairs = ratio_pairs(&c.ratios);
                }
            }
            SeedClaim {
                id: c.id.clone(),
                text: c.text.clone(),
                check,
            }
        })
        .collect();
    Reproduction {
        seed: seed.def.id.clone(),
        title: seed.def.title.clone(),
        source: source_of(seed),
        notes: notes_of(seed),
        deviations: seed.def.deviations.clone(),
        systems,
        cells,
        claims,
        // Undecided: `lab reproduce` fills the verdicts once the run is in.
        ..Reproduction::default()
    }
}

/// Where the published figures come from, in one line.
fn source_of(seed: &Seed) -> String {
    let p = &seed.published;
    let year = p
        .year
        .map(|y| y.to_string())
        .or_else(|| p.year_earliest.map(|y| format!("{y} or later")))
        .unwrap_or_else(|| "undated".into());
    format!(
        "{} ({}; {}{}{}), seed file {}",
        p.title_en,
        p.title,
        p.author
            .as_ref()
            .map(|a| format!("{a}, "))
            .unwrap_or_default(),
        year,
        p.url.as_ref().map(|u| format!(", {u}")).unwrap_or_default(),
        p.seed_file
    )
}

/// The report's notes on what the post measured and how to read it.
fn notes_of(seed: &Seed) -> Vec<String> {
    let p = &seed.published;
    let mut notes = vec![format!("What the post measured: {}", p.summary)];
    notes.extend(seed.def.notes.iter().cloned());
    if p.cell.iter().any(|f| f.unit_stated == Some(false)) {
        notes.push(
            "Some published units were not printed; the unit shown is the tool's default, assumed."
                .into(),
        );
    }
    for s in &p.scenario {
        for (metric, meaning) in &s.metrics {
            notes.push(format!("{} · {metric}: {meaning}", s.id));
        }
    }
    for c in &p.caveat {
        notes.push(format!("{}: {}", c.kind, c.text));
    }
    notes
}

/// Published figure `f` of table `t`, with the lab scenario and level it
/// is set beside (or why it has none).
fn published_cell(seed: &Seed, t: &TableDef, f: &Figure) -> PublishedCell {
    let table = match &t.split {
        Some(field) => format!(
            "{} · {field} {}",
            t.title,
            f.field(field).unwrap_or_else(|| "-".into())
        ),
        None => t.title.clone(),
    };
    let row = t
        .rows
        .iter()
        .map(|r| f.field(r).unwrap_or_else(|| "-".into()))
        .collect::<Vec<_>>()
        .join(" · ");
    let system = seed
        .system_of(f)
        .map(|s| s.key.clone())
        .unwrap_or_else(|| f.system.clone());
    let link = seed.scenario_link(f);
    let lab_scenario = link.and_then(|l| l.lab.clone());
    let levels = lab_scenario
        .as_ref()
        .and_then(|n| seed.lab.scenarios.iter().find(|s| &s.name == n))
        .map(|s| s.concurrency.clone())
        .unwrap_or_default();
    let unlinked = match (link, &lab_scenario, f.concurrency) {
        (
            Some(ScenarioLink {
                unlinked: Some(why),
                ..
            }),
            _,
            _,
        ) => Some(why.clone()),
        (_, Some(s), Some(c)) if !levels.contains(&c) => {
            Some(format!("scenario {s} has no level {c}"))
        }
        (_, Some(_), None) => Some("the published cell states no concurrency".into()),
        _ => None,
    };
    PublishedCell {
        table,
        row,
        column: f.field(&t.column).unwrap_or_else(|| "-".into()),
        system,
        metric: f.metric.clone(),
        unit: f.unit.clone(),
        value: if f.status.as_deref() == Some("failed") {
            None
        } else {
            f.value
        },
        raw: f.raw.clone(),
        measure: seed.measure_of(&f.metric),
        total_calls: f.calls(),
        scenario: if unlinked.is_none() {
            lab_scenario
        } else {
            None
        },
        concurrency: f.concurrency,
        unlinked,
        measured: None,
        not_run: None,
    }
}

/// `{ ice_over_thrift = 1.4 }` → pairs (ice, thrift, 1.4).
fn ratio_pairs(ratios: &BTreeMap<String, f64>) -> Vec<RatioPair> {
    ratios
        .iter()
        .filter_map(|(k, v)| {
            let (over, under) = k.split_once("_over_")?;
            Some(RatioPair {
                over: over.to_owned(),
                under: under.to_owned(),
                published: *v,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::basics::host::repo_root as root;

    #[test]
    fn every_seed_loads_and_every_published_cell_is_linked_or_says_why_not() {
        let root = root();
        let ids = list(&root).unwrap();
        assert_eq!(ids.len(), 5, "{ids:?}");
        let manifests = crate::definitions::manifest::load_all(&root).unwrap();
        let mut total = 0;
        for id in ids {
            let seed = Seed::load(&root, &id).unwrap_or_else(|e| panic!("{id}: {e:#}"));
            assert_eq!(seed.published.id, id);
            let systems = seed.resolve(&manifests);
            for s in &systems {
                assert!(
                    s.not_run.is_some() != s.server.is_some(),
                    "{id} {}: either a server or a reason",
                    s.key
                );
            }
            let r = seed.reproduction(systems);
            assert_eq!(
                r.cells.len(),
                seed.published.cell.len(),
                "{id}: a figure is in no table"
            );
            total += r.cells.len();
            for c in &r.cells {
                assert!(
                    c.scenario.is_some() != c.unlinked.is_some(),
                    "{id}: {} {} {}: linked or unlinked with a reason",
                    c.table,
                    c.row,
                    c.column
                );
                assert!(c.measure.is_some(), "{id}: {} has no derivation", c.metric);
                assert!(
                    r.systems.iter().any(|s| s.key == c.system),
                    "{id}: {}",
                    c.system
                );
            }
            for c in &r.claims {
                if let ClaimCheck::Ratio { pairs, .. } = &c.check {
                    assert!(
                        !pairs.is_empty(),
                        "{id} {}: a ratio check without ratios",
                        c.id
                    );
                }
                assert!(
                    !matches!(&c.check, ClaimCheck::NotCheckable { reason } if reason == "no check defined")
                );
            }
            // Every lab scenario the seed names exists and builds under every profile.
            for s in &seed.lab.scenarios {
                for (name, profile) in &seed.lab.def.profiles {
                    for level in s.levels(profile) {
                        s.load(level, profile)
                            .unwrap_or_else(|e| panic!("{id} {} under {name}: {e}", s.name));
                    }
                }
            }
        }
        // The five posts published 202 figures in all.
        assert_eq!(total, 202);
    }

    #[test]
    fn targets_resolve_by_folder_prefix_or_framework_and_explain_misses() {
        let root = root();
        let manifests = crate::definitions::manifest::load_all(&root).unwrap();
        let by_framework = Target {
            server: None,
            framework: Some("grpc".into()),
            variant: None,
            note: None,
        };
        let (server, variant) = resolve_target(&by_framework, &manifests).unwrap();
        assert_eq!(server, "grpc-java");
        assert!(!variant.is_empty());
        let missing = Target {
            server: Some("nosuch-*".into()),
            framework: None,
            variant: None,
            note: None,
        };
        let why = resolve_target(&missing, &manifests).unwrap_err();
        assert!(why.contains("nosuch-*"), "{why}");
        let unavailable = Target {
            server: Some("thrift-java".into()),
            framework: None,
            variant: Some("0.25".into()),
            note: None,
        };
        let why = resolve_target(&unavailable, &manifests).unwrap_err();
        assert!(why.contains("thrift-java 0.25"), "{why}");
    }

    #[test]
    fn seed_era_variants_play_their_systems_and_the_stand_ins_stay() {
        let root = root();
        let manifests = crate::definitions::manifest::load_all(&root).unwrap();
        let played = |seed: &str| -> Vec<(String, String)> {
            Seed::load(&root, seed)
                .unwrap()
                .resolve(&manifests)
                .into_iter()
                .map(|s| {
                    let to = format!(
                        "{} {}",
                        s.server.unwrap_or_default(),
                        s.variant.unwrap_or_default()
                    );
                    (s.key, to)
                })
                .collect()
        };
        let s000 = played("dubbo-protocols");
        let s001 = played("ice-dubbo-thrift-grpc");
        for (systems, key, to) in [
            (&s000, "A", "dubbo-2.5 2.5"),
            (&s000, "B", "dubbo-2.5 2.5-dubbo-serialization"),
            (&s000, "C", "dubbo-2.5 2.5-java"),
            (&s000, "A-2.6", "dubbo-2.6 2.6"),
            (&s000, "C-2.6", "dubbo-2.6 2.6-java"),
            (&s001, "thrift", "thrift-java 0.9.2"),
            (&s001, "thrift-current", "thrift-java 0.20"),
            (&s001, "grpc", "grpc-java 0.7.1"),
            (&s001, "grpc-current", "grpc-java 1.85"),
        ] {
            assert!(
                systems.contains(&(key.to_owned(), to.to_owned())),
                "{key} should be played by {to}: {systems:?}"
            );
        }
    }

    #[test]
    fn every_published_figure_has_a_measured_twin_under_reproduce_or_says_why_not() {
        let root = root();
        let manifests = crate::definitions::manifest::load_all(&root).unwrap();
        let mut total = 0;
        let mut mapped = 0;
        let mut reasons: Vec<String> = Vec::new();
        for id in list(&root).unwrap() {
            let seed = Seed::load(&root, &id).unwrap();
            let published = seed.published.cell.len();
            let accounted = seed.accounting("reproduce", &manifests).unwrap();
            assert_eq!(accounted.len(), published, "{id}");
            for (cell, verdict) in &accounted {
                total += 1;
                match verdict {
                    Ok(()) => mapped += 1,
                    Err(why) => {
                        assert!(
                            why.starts_with("not run: ") || why.starts_with("no lab cell: "),
                            "{id} {} {}: {why}",
                            cell.row,
                            cell.column
                        );
                        reasons.push(format!("{id}: {why}"));
                    }
                }
            }
        }
        // Counted from the *.published.toml files: 45 + 24 + 16 + 9 + 108.
        assert_eq!(total, 202, "published figures");
        assert_eq!(mapped + reasons.len(), total);
        // Only S-HSF's six figures (seed 003) cannot have a twin.
        assert_eq!(reasons.len(), 6, "{reasons:#?}");
        assert!(
            reasons
                .iter()
                .all(|r| r.starts_with("dubbo-vs-hsf: not run: S-HSF")),
            "{reasons:#?}"
        );
    }

    #[test]
    fn every_seed_reproduces_in_primed_rounds_of_real_windows_and_states_its_deviations() {
        let root = root();
        for id in list(&root).unwrap() {
            let seed = Seed::load(&root, &id).unwrap();
            let p = seed.lab.profile("reproduce").unwrap();
            assert!(
                p.rounds.is_some_and(|r| r.starts >= 2 && r.per_start >= 1)
                    && p.rounds.map(|r| (r.starts, r.per_start))
                        == Some((seed.def.plan.starts, seed.def.plan.rounds)),
                "{id}: a reproduction measures in rounds over at least 2 JVM starts, its plan's design"
            );
            assert!(
                p.primes() && p.measure_s.is_some_and(|s| s >= 2.0) && p.min_calls >= 1000,
                "{id}: every reproduction primes its servers and measures windows of at least 2 s and 1,000 calls"
            );
            assert!(
                !p.scratch,
                "{id}: reproduce snapshots are meant to be committed"
            );
            // Windows open once the warm-up's rule holds, or a fixed warm-up is
            // at least bounded (seed 000's include_connect cells have none).
            assert!(
                p.warmup_max_s.is_some() && p.steady_intervals.is_some(),
                "{id}"
            );
            assert!(seed.lab.profile("seed").unwrap().seed_counts, "{id}");
            assert!(
                !seed.def.deviations.is_empty(),
                "{id}: no deviations stated"
            );
            let r = seed.reproduction(Vec::new());
            assert_eq!(r.deviations, seed.def.deviations, "{id}");
        }
    }

    #[test]
    fn seed_001s_seconds_are_truncated_calls_over_tps_lies_in_s_to_s_plus_one() {
        let seed = Seed::load(&root(), "ice-dubbo-thrift-grpc").unwrap();
        let cells = &seed.published.cell;
        let mut checked = 0;
        for t in cells.iter().filter(|f| f.metric == "total_s") {
            let tps = cells
                .iter()
                .find(|f| {
                    f.metric == "tps" && f.system == t.system && f.concurrency == t.concurrency
                })
                .unwrap_or_else(|| panic!("{} at {:?}: no tps", t.system, t.concurrency));
            let exact = t.calls().unwrap() as f64 / tps.value.unwrap();
            let s = t.value.unwrap();
            assert!(
                exact >= s && exact < s + 1.0,
                "{} at {:?}: calls / tps = {exact:.2} s, printed {s} s",
                t.system,
                t.concurrency
            );
            checked += 1;
        }
        assert_eq!(checked, 12);
        let text = std::fs::read_to_string(
            seeds_dir(&root()).join("ice-dubbo-thrift-grpc.published.toml"),
        )
        .unwrap()
            + &std::fs::read_to_string(seeds_dir(&root()).join("ice-dubbo-thrift-grpc.toml"))
                .unwrap();
        assert!(
            !text.contains("synchronous"),
            "the post does not say synchronous"
        );
        assert!(!text.contains("rounded to"), "its seconds are truncated");
    }

    #[test]
    fn the_posts_own_settings_are_modelled() {
        let root = root();
        let manifests = crate::definitions::manifest::load_all(&root).unwrap();
        let played = |seed: &str| -> Vec<(String, String)> {
            Seed::load(&root, seed)
                .unwrap()
                .resolve(&manifests)
                .into_iter()
                .filter_map(|s| Some((s.key, format!("{} {}", s.server?, s.variant?))))
                .collect()
        };
        let s002 = played("java-remoting");
        let s003 = played("dubbo-vs-hsf");
        for (systems, key, to) in [
            // Endpoint.publish with no executor, as the post; the tuned one beside.
            (&s002, "java6-webservice", "jaxws-ri 2.3.7-default-executor"),
            (&s002, "java6-webservice-tuned", "jaxws-ri 2.3.7"),
            // Hessian and CXF on Tomcat's defaults (keep-alive limit 100) beside.
            (
                &s002,
                "hessian-tomcat-defaults",
                "hessian-servlet 4.0.66-tomcat9-keepalive100",
            ),
            (
                &s002,
                "cxf-tomcat-defaults",
                "cxf 3.6.10-tomcat9-keepalive100",
            ),
            // The dubbox demo provider's kryo, and hessian2 beside.
            (&s003, "dubbo", "dubbo-2.6 2.6-kryo"),
            (&s003, "dubbo-hessian2", "dubbo-2.6 2.6"),
        ] {
            assert!(
                systems.contains(&(key.to_owned(), to.to_owned())),
                "{key} should be played by {to}: {systems:?}"
            );
        }
        // Seed 004: users share a pool of at least 100 and at most 200
        // connections; the servers keep their default thread pools.
        let s004 = Seed::load(&root, "motan-dubbo-sofa").unwrap();
        let users = &s004.lab.scenarios[0];
        assert_eq!(users.name, "empty-users");
        let profile = s004.lab.profile("reproduce").unwrap();
        let connections: Vec<u32> = users
            .levels(profile)
            .into_iter()
            .map(|level| users.load(level, profile).unwrap().connections())
            .collect();
        assert_eq!(connections, vec![100, 100, 200]);
        let sofa = manifests.iter().find(|m| m.name == "sofa-rpc").unwrap();
        assert!(
            sofa.env.keys().all(|k| !k.contains("THREADS")),
            "SOFA keeps its default business pool: {:?}",
            sofa.env
        );
        // Seed 000: the provider's 5000 ms timeout, and no warm-up beyond
        // the first connection in the seed profile.
        let s000 = Seed::load(&root, "dubbo-protocols").unwrap();
        let seed = s000.lab.profile("seed").unwrap();
        assert_eq!(seed.timeout_ms, 5000);
        assert_eq!(seed.warmup_s, 0.0);
        assert!(seed.steady_intervals.is_none());
        assert_eq!(s000.lab.profile("reproduce").unwrap().timeout_ms, 5000);
    }

    #[test]
    fn about_as_fast_claims_are_equivalences() {
        let root = root();
        for (seed, claim, systems) in [
            ("motan-dubbo-sofa", "dubbo-close", vec!["motan", "dubbo"]),
            (
                "java-remoting",
                "ws-vs-cxf",
                vec!["java6-webservice", "cxf"],
            ),
        ] {
            let s = Seed::load(&root, seed).unwrap();
            let check = &s
                .def
                .checks
                .iter()
                .find(|k| k.claim == claim)
                .unwrap()
                .check;
            match check {
                ClaimCheck::Equivalent { systems: got, .. } => assert_eq!(got, &systems),
                other => panic!("{seed} {claim}: {other:?}"),
            }
        }
    }

    #[test]
    fn ratio_names_split_into_pairs() {
        let mut m = BTreeMap::new();
        m.insert("ice_over_thrift".to_owned(), 1.4);
        m.insert("nonsense".to_owned(), 2.0);
        assert_eq!(
            ratio_pairs(&m),
            vec![RatioPair {
                over: "ice".into(),
                under: "thrift".into(),
                published: 1.4
            }]
        );
    }

    #[test]
    fn scenario_files_are_rewritten_relative_to_the_base_lab() {
        assert_eq!(
            relative_to(
                Path::new("/r/compose/seeds/../scenarios.toml"),
                Path::new("/r/compose")
            ),
            PathBuf::from("scenarios.toml")
        );
        assert_eq!(
            relative_to(
                Path::new("/r/compose/seeds/extra.toml"),
                Path::new("/r/compose")
            ),
            PathBuf::from("seeds/extra.toml")
        );
    }

    #[test]
    fn scenario_library_parses() {
        use crate::definitions::lab::ScenarioFile;
        let text = std::fs::read_to_string(root().join("compose/scenarios.toml")).unwrap();
        let _: ScenarioFile = parse_toml(Path::new("scenarios.toml"), &text).unwrap();
    }
}
