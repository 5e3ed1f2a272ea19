//! The images the lab builds, and building them only when their inputs change.
//!
//! The chain is `base` → `runtime` → `jdk` → one image per server variant,
//! plus `runtime` → `client`. A Java server's build stage starts from
//! `jdk` → `maven` (the plugins and test runner every pom uses), so what all
//! servers share is fetched once; its dependency layer is keyed by the pom's
//! content (see docs/adding-a-framework.md), so servers with the same pom
//! share it. A Java server folder without a Dockerfile is built by the
//! shared `images/java-server/Dockerfile` from its manifest's `[build]`
//! table ([`server_context`]). Every image is labelled with a hash of all its
//! inputs (the files of its build context, its build arguments and the ids
//! of its parent images); a warm `lab run` finds the label unchanged and
//! builds nothing.
//!
//! Tags are shared by everything on the engine (another worktree's run may
//! retag `rpclab/jdk:17` at any moment), so what this process builds or
//! verifies is pinned by image id: a build's parents are passed as ids, and
//! [`crate::engine::docker::Engine::pinned`] gives `Engine::start` the id to run, never a tag that may have
//! moved since.
//!
//! The base is `debian:bookworm-slim` where a registry can be reached. Where
//! none can, the lab makes the same Debian release with debootstrap and
//! imports the root filesystem through the API, so nothing ever needs to be
//! pulled.

use crate::basics::host::StaticBinaries;
use crate::definitions::lab::Build;
use crate::definitions::manifest::{Language, Manifest, Variant};
use crate::engine::docker::{Engine, LABEL_INPUT_HASH, LABEL_MANAGED};
use anyhow::{anyhow, bail, Context, Result};
use futures_util::StreamExt;
use sha2::{Digest, Sha256};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;

pub const BASE: &str = "rpclab/base:bookworm";
pub const RUNTIME: &str = "rpclab/runtime:bookworm";
pub const JDK: &str = "rpclab/jdk:17";
/// The JDK plus the Maven plugins and test runner every Java server uses
/// (`images/maven`): the build stage of every Java server starts from it.
pub const MAVEN: &str = "rpclab/maven:17";
pub const CLIENT: &str = "rpclab/client:latest";
pub const ZOOKEEPER: &str = "rpclab/zookeeper:3.9";

/// Modification time of every file in a build context: 2020-01-01T00:00:00Z.
const FIXED_MTIME: u64 = 1_577_836_800;

/// A build context assembled in memory: a tar with fixed timestamps and
/// owners, so that its hash depends on file contents and names only.
///
/// The fixed timestamp is not zero: Maven's resource copy skips a file whose
/// time is not newer than its (missing, hence time-zero) destination, and
/// an image built from epoch-dated files silently lacks its resources.
pub struct BuildContext {
    builder: tar::Builder<Vec<u8>>,
}

impl BuildContext {
    pub fn new() -> BuildContext {
        BuildContext {
            builder: tar::Builder::new(Vec::new()),
        }
    }

    /// Adds `src` (a file or a folder, recursively, sorted) as `dest`.
    pub fn add(&mut self, src: &Path, dest: &str) -> Result<()> {
        if src.is_dir() {
            let entries = inputs(src)?;
            self.add_dir_entry(dest)?;
            for (entry, name) in entries {
                self.add(&entry, &format!("{dest}/{name}"))?;
            }
            Ok(())
        } else {
            let data =
                std::fs::read(src).with_context(|| format!("cannot read {}", src.display()))?;
            let mode = file_mode(src);
            self.add_bytes(dest, &data, mode)
        }
    }

    pub fn add_bytes(&mut self, dest: &str, data: &[u8], mode: u32) -> Result<()> {
        let mut header = tar::Header::new_gnu();
        header.set_size(data.len() as u64);
        header.set_mode(mode);
        header.set_mtime(FIXED_MTIME);
        header.set_uid(0);
        header.set_gid(0);
        header.set_entry_type(tar::EntryType::Regular);
        self.builder.append_data(&mut header, dest, data)?;
        Ok(())
    }

    fn add_dir_entry(&mut self, dest: &str) -> Result<()> {
        let mut header = tar::Header::new_gnu();
        header.set_size(0);
        header.set_mode(0o755);
        header.set_mtime(FIXED_MTIME);
        header.set_entry_type(tar::EntryType::Directory);
        self.builder
            .append_data(&mut header, format!("{dest}/"), std::io::empty())?;
        Ok(())
    }

    pub fn finish(self) -> Result<Vec<u8>> {
        Ok(self.builder.into_inner()?)
    }
}

/// The entries of the folder `dir` that are build inputs, sorted, with
/// their names: build outputs (`target`) and editor files (dot files) are
/// not inputs.
fn inputs(dir: &Path) -> Result<Vec<(PathBuf, String)>> {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .with_context(|| format!("cannot read {}", dir.display()))?
        .map(|e| e.map(|e| e.path()))
        .collect::<std::io::Result<_>>()?;
    entries.sort();
    Ok(entries
        .into_iter()
        .map(|entry| {
            let name = entry
                .file_name()
                .and_then(|n| n.to_str())
                .unwrap_or_default()
                .to_owned();
            (entry, name)
        })
        .filter(|(_, name)| name != "target" && !name.starts_with('.'))
        .collect())
}

fn file_mode(path: &Path) -> u32 {
    use std::os::unix::fs::PermissionsExt;
    match std::fs::metadata(path) {
        Ok(m) if m.permissions().mode() & 0o111 != 0 => 0o755,
        _ => 0o644,
    }
}

/// Builds images for one lab run, printing what it builds.
pub struct Builder<'a> {
    pub engine: &'a Engine,
    pub root: &'a Path,
    pub build: &'a Build,
    /// Image tag → image id of everything built or found, for the manifest.
    pub built: HashMap<String, String>,
    pub verbose: bool,
}

impl<'a> Builder<'a> {
    pub fn new(engine: &'a Engine, root: &'a Path, build: &'a Build, verbose: bool) -> Self {
        Builder {
            engine,
            root,
            build,
            built: HashMap::new(),
            verbose,
        }
    }

    /// Builds `tag`, an image with one parent, which its Dockerfile names
    /// by the build argument `parent.0`, unless an image with the same
    /// input hash exists.
    async fn ensure_on(
        &mut self,
        tag: &str,
        dockerfile: &str,
        context: BuildContext,
        parent: (&str, &str),
    ) -> Result<()> {
        let (arg, image) = parent;
        let args = HashMap::from([(arg.to_owned(), image.to_owned())]);
        let job = self.plan(tag, dockerfile, context, args, &[image])?;
        let id = job.run(self.engine, self.verbose).await?;
        self.built.insert(tag.to_owned(), id);
        Ok(())
    }

    /// What building `tag` takes, with the hash of all its inputs (the
    /// parents' ids included, so a changed parent rebuilds its children).
    fn plan(
        &self,
        tag: &str,
        dockerfile: &str,
        context: BuildContext,
        build_args: HashMap<String, String>,
        parents: &[&str],
    ) -> Result<BuildJob> {
        let tar = context.finish()?;
        let mut hasher = Sha256::new();
        hasher.update(&tar);
        hasher.update(dockerfile.as_bytes());
        let mut args: Vec<_> = build_args.iter().collect();
        args.sort();
        for (k, v) in args {
            hasher.update(format!("\0{k}={v}").as_bytes());
        }
        for parent in parents {
            let id = self.built.get(*parent).cloned().unwrap_or_default();
            hasher.update(format!("\0parent={id}").as_bytes());
        }
        // FROM the parents this run verified, by id: their tags may have
        // moved (another checkout on the same engine may build them too).
        let mut build_args = build_args;
        for value in build_args.values_mut() {
            if let Some(id) = self.built.get(value.as_str()).filter(|id| !id.is_empty()) {
                *value = id.clone();
            }
        }
        Ok(BuildJob {
            tag: tag.to_owned(),
            dockerfile: dockerfile.to_owned(),
            tar,
            build_args,
            hash: hex::encode(hasher.finalize()),
        })
    }

    /// The Debian base: pulled where possible, else made with debootstrap.
    pub async fn base(&mut self) -> Result<()> {
        if self.found_base().await? {
            return Ok(());
        }
        let _building = build_lock(self.engine, BASE).await?;
        if self.found_base().await? {
            return Ok(());
        }
        let pulled = self.engine.try_pull(&self.build.base_image).await;
        if pulled {
            eprintln!("using {} as the base image", self.build.base_image);
            let (repo, tag) = BASE.split_once(':').expect("BASE has a tag");
            let opts = bollard::query_parameters::TagImageOptionsBuilder::default()
                .repo(repo)
                .tag(tag)
                .build();
            self.engine
                .api()
                .tag_image(&self.build.base_image, Some(opts))
                .await?;
        } else {
            let tarball = base_rootfs(self.root, self.build)?;
            let (repo, tag) = BASE.split_once(':').expect("BASE has a tag");
            self.engine.import_rootfs(tarball, repo, tag).await?;
        }
        let id = self
            .engine
            .image_id(BASE)
            .await?
            .context("the base image is missing after import")?;
        self.engine.pin(BASE, &id);
        self.built.insert(BASE.to_owned(), id);
        Ok(())
    }

    /// Whether the engine has the base (then pinned and recorded).
    async fn found_base(&mut self) -> Result<bool> {
        let Some(id) = self.engine.image_id(BASE).await? else {
            return Ok(false);
        };
        self.engine.pin(BASE, &id);
        self.built.insert(BASE.to_owned(), id);
        Ok(true)
    }

    /// `runtime`: the base plus CA certificates.
    pub async fn runtime(&mut self) -> Result<()> {
        let mut ctx = BuildContext::new();
        ctx.add(&self.root.join("images/runtime/Dockerfile"), "Dockerfile")?;
        ctx.add_dir_entry("certs")?;
        for cert in extra_certificates(&self.build.ca_certificates)? {
            let name = cert
                .file_name()
                .and_then(|n| n.to_str())
                .unwrap_or("extra.crt")
                .to_owned();
            ctx.add(&cert, &format!("certs/{name}"))?;
        }
        self.ensure_on(RUNTIME, "Dockerfile", ctx, ("RPCLAB_BASE_IMAGE", BASE))
            .await
    }

    /// `jdk`: the runtime plus JDK 17 and Maven, for every Java server.
    pub async fn jdk(&mut self) -> Result<()> {
        let mut ctx = BuildContext::new();
        ctx.add(&self.root.join("images/jdk"), "jdk")?;
        self.ensure_on(
            JDK,
            "jdk/Dockerfile",
            ctx,
            ("RPCLAB_RUNTIME_IMAGE", RUNTIME),
        )
        .await
    }

    /// The ZooKeeper registry, for servers whose manifest needs one.
    pub async fn zookeeper(&mut self) -> Result<()> {
        // Its Dockerfile expects the folder itself as the build context.
        let dir = self.root.join("images/zookeeper");
        let mut ctx = BuildContext::new();
        for (entry, name) in inputs(&dir)? {
            ctx.add(&entry, &name)?;
        }
        self.ensure_on(ZOOKEEPER, "Dockerfile", ctx, ("RPCLAB_JDK_IMAGE", JDK))
            .await
    }

    /// The client image around the statically linked client binary, plus
    /// `rpclab-echo` (run with an entrypoint override by `bench client`).
    pub async fn client(&mut self, binaries: &StaticBinaries) -> Result<()> {
        let mut ctx = BuildContext::new();
        ctx.add(&self.root.join("images/client/Dockerfile"), "Dockerfile")?;
        ctx.add(&binaries.client, "rpclab-client")?;
        ctx.add(&binaries.echo, "rpclab-echo")?;
        self.ensure_on(CLIENT, "Dockerfile", ctx, ("RPCLAB_RUNTIME_IMAGE", RUNTIME))
            .await
    }

    /// `maven`: the JDK image plus the Maven plugins and JUnit runner of
    /// every server's pom (`images/maven`).
    pub async fn maven(&mut self) -> Result<()> {
        let mut ctx = BuildContext::new();
        ctx.add(&self.root.join("images/maven"), "maven")?;
        self.ensure_on(MAVEN, "maven/Dockerfile", ctx, ("RPCLAB_JDK_IMAGE", JDK))
            .await
    }

    /// Builds the image of every (server, variant), several at a time, and
    /// returns their ids in the same order (see [`server_context`] for what
    /// each is built from).
    ///
    /// Server images depend only on the JDK, Maven and runtime images,
    /// built before, so they are independent of each other; most of a cold
    /// build is Maven fetching artifacts, which waits on the network more
    /// than it uses the CPU, so building [`PARALLEL_SERVER_BUILDS`] at once
    /// cuts a cold run's wall time without slowing any one build much.
    pub async fn servers(&mut self, wanted: &[(&Manifest, &Variant)]) -> Result<Vec<String>> {
        self.servers_each(wanted).await.into_iter().collect()
    }

    /// [`Builder::servers`], with each image's outcome on its own, so
    /// that a run that measures while images build can charge a failed
    /// build to its server alone. Every build finishes (or fails) before
    /// this returns: a failure must not leave other builds running.
    pub async fn servers_each(&mut self, wanted: &[(&Manifest, &Variant)]) -> Vec<Result<String>> {
        if wanted.iter().any(|(m, _)| m.language == Language::Java) {
            if let Err(e) = self.maven().await {
                let e = format!("{e:#}");
                return wanted.iter().map(|_| Err(anyhow!("{e}"))).collect();
            }
        }
        let mut jobs: Vec<(BuildJob, String)> = Vec::new();
        let mut failed: HashMap<String, String> = HashMap::new();
        for (m, v) in wanted {
            let tag = m.image(v);
            if jobs.iter().any(|(j, _)| j.tag == tag) || failed.contains_key(&tag) {
                continue;
            }
            let planned = server_context(self.root, m, v).and_then(|(ctx, dockerfile, args)| {
                let mut parents = vec![JDK, RUNTIME];
                if m.language == Language::Java {
                    parents.push(MAVEN);
                }
                self.plan(&tag, &dockerfile, ctx, args, &parents)
            });
            let context = format!("cannot build server {} variant {}", m.name, v.name);
            match planned {
                Ok(job) => jobs.push((job, context)),
                Err(e) => {
                    failed.insert(tag, format!("{:#}", e.context(context)));
                }
            }
        }
        let (engine, verbose) = (self.engine, self.verbose);
        let results: Vec<(String, Result<String>)> =
            futures_util::stream::iter(jobs.into_iter().map(|(job, context)| async move {
                let tag = job.tag.clone();
                (tag, job.run(engine, verbose).await.context(context))
            }))
            .buffer_unordered(PARALLEL_SERVER_BUILDS)
            .collect()
            .await;
        for (tag, result) in results {
            match result {
                Ok(id) => {
                    self.built.insert(tag, id);
                }
                Err(e) => {
                    failed.insert(tag, format!("{e:#}"));
                }
            }
        }
        wanted
            .iter()
            .map(|(m, v)| {
                let tag = m.image(v);
                match (self.built.get(&tag), failed.get(&tag)) {
                    (_, Some(e)) => Err(anyhow!("{e}")),
                    (Some(id), None) => Ok(id.clone()),
                    (None, None) => Err(anyhow!("no image was built for {tag}")),
                }
            })
            .collect()
    }
}

/// The build context, Dockerfile and build arguments of a server variant's
/// image. The context is the repository's `contract/` and the server's
/// folder, and `SERVER_DIR` names the folder, so a Dockerfile works the same
/// with `docker build -f <dockerfile> --build-arg SERVER_DIR=servers/<name> .`
/// from the repository root and no Dockerfile names its own folder. A
/// folder with a Dockerfile gets the variant's `build_args`; one without is
/// built by the shared JVM server Dockerfile, which the context then holds
/// (so a change to it changes the input hash of every image it builds),
/// with the arguments its `[build]` table makes of the variant's.
fn server_context(
    root: &Path,
    m: &Manifest,
    v: &Variant,
) -> Result<(BuildContext, String, HashMap<String, String>)> {
    let mut ctx = BuildContext::new();
    ctx.add(&root.join("contract"), "contract")?;
    ctx.add(&m.dir, &format!("servers/{}", m.name))?;
    let dockerfile = m.dockerfile();
    let mut args = if m.shared_dockerfile() {
        ctx.add(&root.join(&dockerfile), &dockerfile)?;
        m.build.build_args(&v.version, &v.build_args)
    } else {
        v.build_args.clone()
    };
    args.insert("SERVER_DIR".into(), format!("servers/{}", m.name));
    args.insert("RPCLAB_JDK_IMAGE".into(), JDK.into());
    args.insert("RPCLAB_RUNTIME_IMAGE".into(), RUNTIME.into());
    if m.language == Language::Java {
        args.insert("RPCLAB_MAVEN_IMAGE".into(), MAVEN.into());
    }
    Ok((ctx, dockerfile, args))
}

/// Server images built at once (see [`Builder::servers`]).
pub const PARALLEL_SERVER_BUILDS: usize = 3;

/// One image to build, with the hash of its inputs.
struct BuildJob {
    tag: String,
    dockerfile: String,
    tar: Vec<u8>,
    build_args: HashMap<String, String>,
    hash: String,
}

impl BuildJob {
    /// The image's id when the engine has it with this input hash (pinned).
    async fn found(&self, engine: &Engine) -> Result<Option<String>> {
        let tag = self.tag.as_str();
        if engine.image_label(tag, LABEL_INPUT_HASH).await?.as_deref() != Some(self.hash.as_str()) {
            return Ok(None);
        }
        let id = engine.image_id(tag).await?.unwrap_or_default();
        engine.pin(tag, &id);
        Ok(Some(id))
    }

    /// Builds the image unless the engine has it with the same input hash;
    /// returns its id.
    async fn run(self, engine: &Engine, verbose: bool) -> Result<String> {
        let tag = self.tag.as_str();
        if let Some(id) = self.found(engine).await? {
            return Ok(id);
        }
        // Another process of this machine may be building the same image
        // on the same engine (CI's image builds beside its tests): wait for
        // it, then look again, instead of building it twice at once.
        let _building = build_lock(engine, &self.hash).await?;
        if let Some(id) = self.found(engine).await? {
            return Ok(id);
        }
        eprintln!("building image {tag} ...");
        let started = std::time::Instant::now();
        let labels = HashMap::from([
            (LABEL_MANAGED.to_owned(), "true".to_owned()),
            (LABEL_INPUT_HASH.to_owned(), self.hash.clone()),
        ]);
        let mut log = |line: &str| {
            if verbose {
                eprint!("  | {tag}: {line}");
            }
        };
        engine
            .build(
                tag,
                &self.dockerfile,
                self.tar,
                &self.build_args,
                &labels,
                &mut log,
            )
            .await?;
        let id = engine
            .image_id(tag)
            .await?
            .context("the engine lost an image it just built")?;
        eprintln!(
            "built image {tag} in {:.0} s",
            started.elapsed().as_secs_f64()
        );
        engine.pin(tag, &id);
        Ok(id)
    }
}

/// Held while this process builds `what` (an input hash, or the base's
/// tag) on `engine`: an exclusive lock on a file of this machine's temp
/// folder named by both, released when dropped or when the process ends,
/// however it ends. Two builds of one image at once would each pay for it
/// (the base's debootstrap, a server's Maven downloads).
async fn build_lock(engine: &Engine, what: &str) -> Result<std::fs::File> {
    let mut key = Sha256::new();
    key.update(engine.identity().as_bytes());
    key.update(b"\0");
    key.update(what.as_bytes());
    let name = format!("rpclab-build-{}.lock", &hex::encode(key.finalize())[..16]);
    let path = std::env::temp_dir().join(name);
    tokio::task::spawn_blocking(move || {
        let file = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&path)
            .with_context(|| format!("cannot open the build lock {}", path.display()))?;
        file.lock()
            .with_context(|| format!("cannot lock {}", path.display()))?;
        Ok(file)
    })
    .await?
}

/// The `*.crt` files of the extra-certificates folder (none if it is absent).
fn extra_certificates(dir: &Path) -> Result<Vec<PathBuf>> {
    if !dir.exists() {
        return Ok(Vec::new());
    }
    crate::basics::tree::files_under(dir, |p| crate::basics::tree::has_extension(p, "crt"))
}

/// The base's root as a tar, from `images/runtime/debian-root`: the one
/// debootstrap made for an earlier engine of this checkout (kept under
/// `target/rpclab-base/`, by mirror), else a new one, then kept there. A
/// second engine (the multi-host client's, a test's own) gets the same
/// Debian root without a second debootstrap's downloads and unpacking,
/// and .ci/run makes it beside its first cargo build with the same
/// script, so the recipe and the tar's name are written once.
fn base_rootfs(root: &Path, build: &Build) -> Result<Vec<u8>> {
    let script = root.join("images/runtime/debian-root");
    eprintln!(
        "{} cannot be pulled (no registry reachable?); the base is a Debian root made by debootstrap from {} (kept under target/rpclab-base/)",
        build.base_image, build.debian_mirror
    );
    let out = Command::new(&script)
        .arg(&build.debian_mirror)
        .arg(root.join("target/rpclab-base"))
        .stderr(std::process::Stdio::inherit())
        .output()
        .with_context(|| format!("cannot run {}", script.display()))?;
    if !out.status.success() {
        // The script said why on standard error, in one line.
        bail!(
            "no base image: {} failed ({})",
            script.display(),
            out.status
        );
    }
    let kept = String::from_utf8_lossy(&out.stdout).trim().to_owned();
    std::fs::read(&kept).with_context(|| format!("cannot read the Debian root {kept}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entries(tar: &[u8]) -> Vec<String> {
        let mut archive = tar::Archive::new(tar);
        archive
            .entries()
            .unwrap()
            .map(|e| e.unwrap().path().unwrap().to_string_lossy().into_owned())
            .collect()
    }

    #[test]
    fn a_server_context_holds_every_source_and_resource_file_and_no_build_output() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
        let mut ctx = BuildContext::new();
        ctx.add(&root.join("servers/dubbo-3.3"), "servers/dubbo-3.3")
            .unwrap();
        let names = entries(&ctx.finish().unwrap());
        for wanted in [
            "servers/dubbo-3.3/pom.xml",
            "servers/dubbo-3.3/src/main/resources/security/serialize.allowlist",
            "servers/dubbo-3.3/src/main/resources/META-INF/dubbo/org.apache.dubbo.remoting.Transporter",
        ] {
            assert!(names.iter().any(|n| n == wanted), "{wanted} missing from {names:#?}");
        }
        assert!(!names.iter().any(|n| n.contains("/target/")));
    }

    #[test]
    fn context_files_are_not_dated_at_the_epoch() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
        let mut ctx = BuildContext::new();
        ctx.add(&root.join("contract"), "contract").unwrap();
        let tar = ctx.finish().unwrap();
        let mut archive = tar::Archive::new(&tar[..]);
        for entry in archive.entries().unwrap() {
            assert!(entry.unwrap().header().mtime().unwrap() > 0);
        }
    }

    /// Builds every buildable server image (and the chain below them) on
    /// the engine `DOCKER_HOST` names, through [`Builder::servers`] as `lab
    /// run` does, and prints how long each part took. It needs an engine
    /// and the network, so it runs only when asked for:
    /// `DOCKER_HOST=unix:///run/other.sock cargo test -p xtask --bin xtask
    /// every_server_image_builds -- --ignored --nocapture`. On an empty
    /// engine this is the lab's cold build.
    #[test]
    #[ignore = "builds every image: needs a Docker engine and the network"]
    fn every_server_image_builds() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
        let lab = crate::definitions::lab::Lab::load(&root.join("compose/lab.toml")).unwrap();
        let manifests = crate::definitions::manifest::load_all(root).unwrap();
        let wanted: Vec<(&Manifest, &Variant)> = manifests
            .iter()
            .flat_map(|m| m.variants.iter().map(move |v| (m, v)))
            .filter(|(_, v)| v.unavailable.is_none())
            .collect();
        let verbose = std::env::var_os("RPCLAB_BUILD_VERBOSE").is_some();
        tokio::runtime::Runtime::new().unwrap().block_on(async {
            let engine = Engine::connect().await.unwrap();
            let mut builder = Builder::new(&engine, root, &lab.def.build, verbose);
            let started = std::time::Instant::now();
            builder.base().await.unwrap();
            builder.runtime().await.unwrap();
            builder.jdk().await.unwrap();
            let chain = started.elapsed().as_secs_f64();
            let ids = builder.servers(&wanted).await.unwrap();
            let servers = started.elapsed().as_secs_f64() - chain;
            let images: std::collections::BTreeSet<&String> = ids.iter().collect();
            eprintln!(
                "base, runtime and jdk: {chain:.0} s; {} server images ({} variants): {servers:.0} s",
                images.len(),
                wanted.len()
            );
            assert!(ids.iter().all(|id| !id.is_empty()));
        });
    }

    #[test]
    fn no_server_dockerfile_names_its_own_folder() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
        for m in crate::definitions::manifest::load_all(root).unwrap() {
            let text = std::fs::read_to_string(root.join(m.dockerfile())).unwrap();
            for line in text.lines().filter(|l| !l.trim_start().starts_with('#')) {
                assert!(
                    !line.contains("servers/"),
                    "{}: `{line}`: take the folder from SERVER_DIR",
                    m.dockerfile()
                );
            }
        }
    }

    /// A JVM server folder without a Dockerfile is built by the shared
    /// one, which its context holds (so editing it rebuilds every JVM
    /// image) with its versions as Maven properties; an IceGrid server
    /// keeps its own, with its variant's build arguments.
    #[test]
    fn a_jvm_server_without_a_dockerfile_is_built_by_the_shared_one() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
        let manifests = crate::definitions::manifest::load_all(root).unwrap();
        let server = |name: &str| manifests.iter().find(|m| m.name == name).unwrap();
        let dubbo = server("dubbo-2.6");
        let (ctx, dockerfile, args) = server_context(root, dubbo, &dubbo.variants[0]).unwrap();
        assert_eq!(
            dockerfile,
            crate::definitions::java_build::SHARED_DOCKERFILE
        );
        assert!(entries(&ctx.finish().unwrap()).contains(&dockerfile));
        assert_eq!(args["MAVEN_PROPERTIES"], "-Ddubbo.version=2.6.12");
        assert_eq!(args["VERSION_JAR"], "dubbo-2.6.12.jar");
        assert_eq!(args["SERVER_DIR"], "servers/dubbo-2.6");
        assert!(!args.contains_key("DUBBO_VERSION"));
        let ice = server("ice-3.7-icegrid");
        let (ctx, dockerfile, args) = server_context(root, ice, &ice.variants[0]).unwrap();
        assert_eq!(dockerfile, "servers/ice-3.7-icegrid/Dockerfile");
        assert!(entries(&ctx.finish().unwrap()).contains(&dockerfile));
        assert_eq!(args["ICE_VERSION"], "3.7.10");
    }

    #[test]
    fn the_same_inputs_give_the_same_context_bytes() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
        let build = || {
            let mut ctx = BuildContext::new();
            ctx.add(&root.join("contract"), "contract").unwrap();
            ctx.finish().unwrap()
        };
        assert_eq!(build(), build());
    }
}
