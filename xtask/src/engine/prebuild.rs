//! `cargo xtask lab build`: every image a lab definition's run needs (the
//! base chain, the JDK, ZooKeeper, each runnable server variant and the
//! load client of the profile's `client_build`), without running anything.
//!
//! A later `lab run` finds them by their content hashes and builds nothing.
//! With `[hosts]` or the host flags, each engine gets the images of the
//! roles it runs ([`chains`]), as `lab run` builds them.
//! CI starts this in the background while cargo compiles the tests, so the
//! image builds (mostly downloads) overlap with compiling (CPU); a user can
//! run it to warm a machine before a long run.

use crate::basics::host;
use crate::basics::role::Role;
use crate::definitions::hosts::{HostArgs, Roles};
use crate::definitions::lab::{Build, Lab};
use crate::definitions::manifest::{Language, Manifest, Registry, Variant};
use crate::engine::engines::Engines;
use crate::engine::images::Builder;
use anyhow::Result;
use std::path::{Path, PathBuf};

/// What `lab build` is asked for.
pub struct BuildOptions {
    pub lab: PathBuf,
    pub only: Vec<String>,
    /// Server folders from outside the repository, over the lab's
    /// `servers_dirs` (as `lab run --servers-dir`).
    pub servers_dirs: Vec<PathBuf>,
    pub profile: Option<String>,
    pub ca_certificates: Option<PathBuf>,
    pub verbose: bool,
    pub hosts: HostArgs,
}

/// Builds every image the run of `opts` would start from.
pub async fn build(root: &Path, opts: BuildOptions) -> Result<()> {
    let mut lab = Lab::load(&opts.lab)?;
    if let Some(ca) = &opts.ca_certificates {
        lab.def.build.ca_certificates = ca.clone();
    }
    let profile_name = opts.profile.unwrap_or_else(|| lab.def.profile.clone());
    let profile = lab.profile(&profile_name)?.clone();
    let mut outside = lab.servers_dirs();
    outside.extend(opts.servers_dirs.iter().cloned());
    let manifests = crate::definitions::manifest::load_with(root, &outside)?;
    let only = if opts.only.is_empty() {
        lab.def.servers.clone()
    } else {
        opts.only
    };
    let selected = crate::definitions::manifest::select(&manifests, &only)?;
    let roles = Roles::resolve(&lab.def.hosts.clone().unwrap_or_default(), &opts.hosts)?;
    let engines = Engines::connect(&roles).await?;

    let client_build = host::StaticBuild::start(root, profile.client_build)?;
    let mut builders = chains(&engines, root, &lab.def.build, opts.verbose, &selected).await?;
    let wanted: Vec<(&Manifest, &Variant)> = selected
        .iter()
        .flat_map(|m| m.variants.iter().map(move |v| (*m, v)))
        .filter(|(m, v)| m.not_runnable(v).is_none())
        .collect();
    builders[0].0.servers(&wanted).await?;
    let binaries = client_build.finish()?;
    for (builder, _) in &mut builders {
        builder.client(&binaries).await?;
    }
    for (builder, roles) in &builders {
        eprintln!(
            "built {} images on {} ({}) for {} server variants of {} (profile {profile_name})",
            builder.built.len(),
            builder.engine.endpoint,
            crate::basics::role::joined(roles),
            wanted.len(),
            opts.lab.display()
        );
    }
    Ok(())
}

/// A builder per engine of `engines`, with the base chain built on each,
/// the JDK where a Java server or the registry runs, and ZooKeeper on the
/// registry's engine when a selected server needs it; the server's engine
/// comes first. Server images and the client image are the caller's.
///
/// Each engine builds its own images rather than receiving them exported
/// from one (docs/multi-host.md, "Images on each engine"): the input-hash
/// labels then work unchanged on each engine, a warm engine builds nothing,
/// and no image (hundreds of MB) travels through the orchestrator.
pub async fn chains<'a>(
    engines: &'a Engines,
    root: &'a Path,
    build: &'a Build,
    verbose: bool,
    selected: &[&Manifest],
) -> Result<Vec<(Builder<'a>, Vec<Role>)>> {
    let any_java = selected.iter().any(|m| m.language == Language::Java);
    let any_registry = selected
        .iter()
        .any(|m| m.registry == Registry::Zookeeper && m.blocked().is_none());
    let mut builders = Vec::new();
    for (engine, roles) in engines.distinct() {
        let mut builder = Builder::new(engine, root, build, verbose);
        builder.base().await?;
        builder.runtime().await?;
        let server = roles.contains(&Role::Server);
        let registry = roles.contains(&Role::Registry) && any_registry;
        if (server && any_java) || registry {
            builder.jdk().await?;
        }
        if registry {
            builder.zookeeper().await?;
        }
        builders.push((builder, roles));
    }
    Ok(builders)
}
