//! `cargo xtask lab build`: every image a lab definition's run needs (the
//! base chain, the JDK, ZooKeeper, each runnable server variant and the
//! load client of the profile's `client_build`), without running anything.
//!
//! A later `lab run` finds them by their content hashes and builds nothing.
//! CI starts this in the background while cargo compiles the tests, so the
//! image builds (mostly downloads) overlap with compiling (CPU); a user can
//! run it to warm a machine before a long run.

use crate::docker::Engine;
use crate::host;
use crate::images::Builder;
use crate::lab::Lab;
use crate::manifest::{Manifest, Registry, Variant};
use anyhow::Result;
use std::path::{Path, PathBuf};

/// What `lab build` is asked for.
pub struct BuildOptions {
    pub lab: PathBuf,
    pub only: Vec<String>,
    pub profile: Option<String>,
    pub ca_certificates: Option<PathBuf>,
    pub verbose: bool,
}

/// Builds every image the run of `opts` would start from.
pub async fn build(root: &Path, opts: BuildOptions) -> Result<()> {
    let mut lab = Lab::load(&opts.lab)?;
    if let Some(ca) = &opts.ca_certificates {
        lab.def.build.ca_certificates = ca.clone();
    }
    let profile_name = opts.profile.unwrap_or_else(|| lab.def.profile.clone());
    let profile = lab.profile(&profile_name)?.clone();
    let manifests = crate::manifest::load_all(root)?;
    let only = if opts.only.is_empty() {
        lab.def.servers.clone()
    } else {
        opts.only
    };
    let selected = crate::manifest::select(&manifests, &only)?;
    let engine = Engine::connect().await?;

    let client_build = host::StaticBuild::start(root, profile.client_build)?;
    let mut builder = Builder::new(&engine, root, &lab.def.build, opts.verbose);
    builder.base().await?;
    builder.runtime().await?;
    if selected.iter().any(|m| m.language == "java") {
        builder.jdk().await?;
    }
    if selected
        .iter()
        .any(|m| m.registry == Registry::Zookeeper && m.blocked().is_none())
    {
        builder.zookeeper().await?;
    }
    let wanted: Vec<(&Manifest, &Variant)> = selected
        .iter()
        .flat_map(|m| m.variants.iter().map(move |v| (*m, v)))
        .filter(|(m, v)| m.not_runnable(v).is_none())
        .collect();
    builder.servers(&wanted).await?;
    builder.client(&client_build.finish()?).await?;
    eprintln!(
        "built {} images for {} server variants of {} (profile {profile_name})",
        builder.built.len(),
        wanted.len(),
        opts.lab.display()
    );
    Ok(())
}
