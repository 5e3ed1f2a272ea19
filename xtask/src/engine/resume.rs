//! `--resume <snapshot>`: a run that continues an interrupted snapshot
//! instead of starting a new one, measuring only the cells it lacks
//! ([`crate::engine::plan::remaining`]).
//!
//! A snapshot's cells are compared with each other, so a resume must
//! measure the rest under what measured the first: the same lab definition
//! (as run: CPU sets and hosts included), profile, servers, images and
//! host. Anything else is refused in one line that says what differs and
//! what to do, before anything in the snapshot changes; so is a snapshot
//! that is already complete.

use crate::definitions::lab::LabDef;
use anyhow::{Context, Result};
use rpclab_model::manifest::{HostInfo, RunManifest};
use rpclab_model::result::Results;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use toml::Value;

/// A resume the snapshot does not allow: the command's error, with the
/// snapshot left as it was.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct Refused(String);

/// An incomplete snapshot, as its files hold it.
pub struct Interrupted {
    pub dir: PathBuf,
    /// Its `results.json`, every cell measured so far.
    pub results: Results,
    /// Its `manifest.toml`.
    manifest: RunManifest,
}

/// What the run about to start would measure with.
pub struct Asked<'a> {
    pub def: &'a LabDef,
    pub profile: &'a str,
    pub only: &'a [String],
    pub host: &'a HostInfo,
    /// `--rounds-seed`, when given.
    pub rounds_seed: Option<u64>,
    /// `--engine kubernetes`.
    pub on_kubernetes: bool,
}

impl Interrupted {
    /// Reads the snapshot `dir`; refuses one that is complete.
    pub fn open(dir: &Path) -> Result<Interrupted> {
        if !dir.join("results.json").is_file() {
            return Err(Refused(format!(
                "cannot resume {}: it has no results.json, so no cell of it was measured; start a new run",
                dir.display()
            ))
            .into());
        }
        // Read back as written, cells and aggregates: the snapshot's
        // reader is the report crate's, the one every reader of a
        // snapshot uses.
        let results = rpclab_report::snapshot::read_results(dir)?;
        let path = dir.join("manifest.toml");
        let text = std::fs::read_to_string(&path)
            .with_context(|| format!("cannot read {}", path.display()))?;
        let manifest = RunManifest::from_toml(&text)
            .with_context(|| format!("{} does not parse", path.display()))?;
        let interrupted = Interrupted {
            dir: dir.to_owned(),
            results,
            manifest,
        };
        if interrupted.results.complete {
            return Err(interrupted.refuse(
                "it is complete (results.json: complete = true); there is nothing left to measure",
            ));
        }
        Ok(interrupted)
    }

    /// Refuses unless the run goes on on the kind of engine the snapshot's
    /// ran on: a cluster's cells beside a Docker engine's would be two
    /// labs in one snapshot.
    fn check_engine(&self, on_kubernetes: bool) -> Result<()> {
        match (self.manifest.ran_on_kubernetes(), on_kubernetes) {
            (true, false) => Err(self.refuse(
                "it was run on a Kubernetes cluster (its manifest records its Pods); resume it with --engine kubernetes",
            )),
            (false, true) => Err(self.refuse(
                "it was run on a Docker engine; resume it without --engine kubernetes",
            )),
            _ => Ok(()),
        }
    }

    /// Refuses unless the run `asked` for measures as the snapshot's did.
    pub fn check(&self, asked: &Asked<'_>) -> Result<()> {
        let was = &self.manifest.profile;
        if was != asked.profile {
            return Err(self.refuse(&format!(
                "it was run with profile `{was}`, this run asks for `{}`; pass --profile {was}",
                asked.profile
            )));
        }
        let only = &self.manifest.only;
        if only != asked.only {
            return Err(self.refuse(&format!(
                "it ran servers {}, this run selects {}; pass --only {}",
                only.join(","),
                asked.only.join(","),
                only.join(",")
            )));
        }
        let def = toml::to_string(asked.def)
            .ok()
            .and_then(|t| toml::from_str::<Value>(&t).ok());
        let was = Value::Table(self.manifest.lab.clone());
        if let Some(what) = first_difference("lab", Some(&was), def.as_ref()) {
            return Err(self.refuse(&format!(
                "the lab definition as run differs at {what}; resume with the definition and flags it was run with, or start a new run"
            )));
        }
        self.check_engine(asked.on_kubernetes)?;
        let (was, now) = (&self.manifest.host, asked.host);
        let facts = [
            ("hostname", was.hostname.clone(), now.hostname.clone()),
            ("cpu_model", was.cpu_model.clone(), now.cpu_model.clone()),
            ("cores", was.cores.to_string(), now.cores.to_string()),
            ("kernel", was.kernel.clone(), now.kernel.clone()),
        ];
        for (key, was, now) in facts {
            if was != now {
                return Err(self.refuse(&format!(
                    "it was measured on another host (`{key}`: {was}, here {now}); resume it there, or start a new run"
                )));
            }
        }
        let seed = self.rounds_seed();
        if let Some(given) = asked.rounds_seed.filter(|given| Some(*given) != seed) {
            return Err(self.refuse(&format!(
                "its rounds' order was drawn with seed {}, not {given}; drop --rounds-seed",
                seed.map_or("(none)".to_owned(), |s| s.to_string())
            )));
        }
        Ok(())
    }

    /// Refuses unless the images just built are those the snapshot
    /// measured (tag → id, as `manifest.toml` records them). A snapshot
    /// that holds no cell measured no image (a run stopped before its
    /// builds or its first cell ended): any image will do. Nor did it
    /// measure an image it does not record: a check that measures while
    /// its images build records each server image before that server's
    /// first cell, so one it never recorded it never ran.
    pub fn check_images(&self, built: &BTreeMap<String, String>) -> Result<()> {
        if self.results.cells.is_empty() {
            return Ok(());
        }
        for (tag, id) in built {
            match self.manifest.images.get(tag) {
                None => {}
                Some(was) if was == id => {}
                Some(was) => {
                    return Err(self.refuse(&format!(
                        "image {tag} is now {id}, the snapshot measured {}; what it runs has changed since, so start a new run",
                        was
                    )))
                }
            }
        }
        Ok(())
    }

    /// When the snapshot's first run started, and its run id.
    pub fn started(&self) -> (String, String) {
        (
            self.manifest.started_utc.clone(),
            self.manifest.run_id.clone(),
        )
    }

    /// When it was resumed before.
    pub fn resumed_utc(&self) -> Vec<String> {
        self.manifest.resumed_utc.clone()
    }

    /// Where its earlier invocations' time went, as they recorded it when
    /// they closed (none: a run killed before it could, or one made before
    /// phases were measured).
    pub fn phases(&self) -> Option<rpclab_model::phases::Phases> {
        self.manifest.phases.clone()
    }

    /// The seed of its rounds' order, when it ran in rounds.
    pub fn rounds_seed(&self) -> Option<u64> {
        self.manifest.rounds_seed
    }

    fn refuse(&self, what: &str) -> anyhow::Error {
        Refused(format!("cannot resume {}: {what}", self.dir.display())).into()
    }
}

/// The first key (a dotted path under `path`) where `was` and `now`
/// differ, with both values; `None` when they are equal.
fn first_difference(path: &str, was: Option<&Value>, now: Option<&Value>) -> Option<String> {
    match (was, now) {
        (Some(Value::Table(a)), Some(Value::Table(b))) => a
            .keys()
            .chain(b.keys())
            .find_map(|k| first_difference(&format!("{path}.{k}"), a.get(k), b.get(k))),
        (a, b) if a == b => None,
        (a, b) => Some(format!(
            "`{path}` (snapshot: {}, now: {})",
            shown(a),
            shown(b)
        )),
    }
}

fn shown(value: Option<&Value>) -> String {
    value.map_or("absent".to_owned(), Value::to_string)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table(text: &str) -> Value {
        toml::from_str(text).unwrap()
    }

    #[test]
    fn the_first_difference_names_its_key_and_both_values() {
        let a = table("profile = \"smoke\"\n[cpus]\nserver = \"0\"\nclient = \"1\"\n");
        let b = table("profile = \"smoke\"\n[cpus]\nserver = \"0-1\"\nclient = \"1\"\n");
        assert_eq!(first_difference("lab", Some(&a), Some(&a)), None);
        assert_eq!(
            first_difference("lab", Some(&a), Some(&b)).unwrap(),
            "`lab.cpus.server` (snapshot: \"0\", now: \"0-1\")"
        );
        let c = table(
            "profile = \"smoke\"\n[cpus]\nserver = \"0\"\nclient = \"1\"\nregistry = \"0\"\n",
        );
        assert_eq!(
            first_difference("lab", Some(&a), Some(&c)).unwrap(),
            "`lab.cpus.registry` (snapshot: absent, now: \"0\")"
        );
    }

    #[test]
    fn a_complete_snapshot_is_refused_and_an_incomplete_one_opened() {
        let dir = tempfile::tempdir().unwrap();
        let mut results: Results = serde_json::from_str(
            &std::fs::read_to_string(
                Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/results.json"),
            )
            .unwrap(),
        )
        .unwrap();
        // A committed snapshot's manifest, with the keys a resume reads set.
        let committed = crate::basics::host::repo_root()
            .join("results/20261205T011016Z-vm-e6f6c7b/manifest.toml");
        let mut manifest =
            RunManifest::from_toml(&std::fs::read_to_string(committed).unwrap()).unwrap();
        manifest.resumed_utc = vec!["2026-01-01T00:00:00Z".into()];
        manifest.rounds_seed = Some(7);
        manifest.images = BTreeMap::from([("rpclab/a:1".into(), "sha256:1".into())]);
        std::fs::write(
            dir.path().join("manifest.toml"),
            manifest.to_toml().unwrap(),
        )
        .unwrap();
        results.complete = true;
        crate::store::snapshot::write_results(dir.path(), &results).unwrap();
        let e = Interrupted::open(dir.path()).err().unwrap();
        assert!(e.is::<Refused>());
        assert!(e.to_string().contains("it is complete"), "{e}");

        results.complete = false;
        crate::store::snapshot::write_results(dir.path(), &results).unwrap();
        let i = Interrupted::open(dir.path()).unwrap();
        assert_eq!(i.resumed_utc(), ["2026-01-01T00:00:00Z"]);
        assert_eq!(i.rounds_seed(), Some(7));
        let built = |id: &str| BTreeMap::from([("rpclab/a:1".to_owned(), id.to_owned())]);
        assert!(i.check_images(&built("sha256:1")).is_ok());
        // Nothing measured: nothing an image could have changed.
        let mut none = Interrupted::open(dir.path()).unwrap();
        none.results.cells.clear();
        assert!(none.check_images(&built("sha256:2")).is_ok());
        let e = i.check_images(&built("sha256:2")).unwrap_err();
        assert!(
            e.to_string()
                .contains("image rpclab/a:1 is now sha256:2, the snapshot measured sha256:1"),
            "{e}"
        );
        // An image the snapshot never recorded, it never ran (a check
        // killed before that server's image was built).
        let mut more = built("sha256:1");
        more.insert("rpclab/b:1".into(), "sha256:9".into());
        assert!(i.check_images(&more).is_ok());
        // A Docker run goes on on Docker only, a cluster's on a cluster.
        assert!(i.check_engine(false).is_ok());
        let e = i.check_engine(true).unwrap_err();
        assert!(e.to_string().contains("run on a Docker engine"), "{e}");
        let mut on_cluster = Interrupted::open(dir.path()).unwrap();
        on_cluster.manifest.pods = vec![rpclab_model::manifest::PodRecord {
            namespace: "rpclab-run".into(),
            pod: "server".into(),
            role: "server".into(),
            node: "node".into(),
            qos: "Guaranteed".into(),
            cpu: "1".into(),
            cpuset: "0".into(),
            static_policy: true,
            image: "rpclab/a:1".into(),
            pull: "Never".into(),
            pushed_digest: None,
            image_id: "sha256:1".into(),
            ip: "10.0.0.2".into(),
        }];
        assert!(on_cluster.check_engine(true).is_ok());
        let e = on_cluster.check_engine(false).unwrap_err();
        assert!(
            e.to_string().contains("resume it with --engine kubernetes"),
            "{e}"
        );
    }
}
