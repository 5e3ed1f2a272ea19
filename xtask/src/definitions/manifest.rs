//! Server manifests: `servers/<name>/server.toml`.
//!
//! A server folder is everything the lab knows about a server under test:
//! its source, this manifest and, unless the shared JVM server Dockerfile
//! builds it from the manifest's `[build]` table ([`java_build`]), its own
//! Dockerfile. `lab list` and `lab run`
//! know nothing that a manifest does not say, and a typo in one is an error
//! naming the file, line and column (serde's `deny_unknown_fields`).

use crate::definitions::java_build::{self, JavaBuild};
use anyhow::{bail, Context, Result};
pub use rpclab_protocols::protocols::ProtocolName;
use serde::Deserialize;
use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

/// The registry a server needs started beside it.
#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum Registry {
    None,
    Zookeeper,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Readiness {
    /// Seconds to wait for the first successful verified call.
    #[serde(default = "default_ready_timeout")]
    pub timeout_s: u64,
    /// The operation probed; `hello` by default.
    #[serde(default = "default_probe")]
    pub operation: rpclab_model::contract::Operation,
}

fn default_ready_timeout() -> u64 {
    120
}

fn default_probe() -> rpclab_model::contract::Operation {
    rpclab_model::contract::Operation::Hello
}

impl Default for Readiness {
    fn default() -> Self {
        Readiness {
            timeout_s: default_ready_timeout(),
            operation: default_probe(),
        }
    }
}

pub use crate::basics::confine::Confinement;

/// The JVM a Java server variant is built and run on: the JDK of the image
/// its Dockerfile starts from (`RPCLAB_JDK_IMAGE`, `images/jdk`). A typed
/// key, so that a run's manifest says which JVM produced its numbers and a
/// JVM the lab cannot provide is an error with the manifest's line, not a
/// silent substitution. Only `17` exists: Debian bookworm (the lab's base)
/// and bookworm-backports have no other OpenJDK, and no registry serves a
/// JDK; see docs/methodology.md, "The JVM".
#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq)]
pub enum Jvm {
    /// Debian bookworm's OpenJDK 17 (`rpclab/jdk:17`, `images::JDK`).
    #[serde(rename = "17")]
    Jdk17,
}

impl Jvm {
    /// The JVM's name as manifests and snapshots write it.
    pub fn as_str(self) -> &'static str {
        match self {
            Jvm::Jdk17 => "17",
        }
    }
}

impl std::fmt::Display for Jvm {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The language a server is written in, which decides how the lab builds
/// and runs it (a Java server gets the Maven and JDK images and a JVM).
/// Only a Java folder may leave its Dockerfile to the shared one; a server
/// in any other language brings its own Dockerfile and runs no JVM.
#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum Language {
    Java,
    /// A Rust server (`fixtures/servers/grpc-shop`).
    Rust,
    /// Any other language: the folder's Dockerfile builds it.
    Other,
}

/// One buildable version (or configuration) of a server.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Variant {
    pub name: String,
    /// The framework's exact version.
    pub version: String,
    #[serde(default)]
    pub build_args: HashMap<String, String>,
    #[serde(default)]
    pub notes: Option<String>,
    /// Why this variant cannot be built or run, when it cannot. The lab lists
    /// it with the reason and never runs it.
    #[serde(default)]
    pub unavailable: Option<String>,
    /// Server environment for this variant, over the server-level `env`
    /// (e.g. a runtime serialization switch).
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    /// Client protocol options for this variant, over the server-level ones.
    #[serde(default)]
    pub client_options: BTreeMap<String, String>,
    /// Contract operations this variant cannot carry at all (e.g. a
    /// serialization with no POJO type), with the reason. Their scenarios
    /// are recorded as not run for this variant instead of as failures.
    #[serde(default)]
    pub cannot_carry: Option<CannotCarry>,
    /// The JVM of this variant, over the server-level `jvm`.
    #[serde(default)]
    pub jvm: Option<Jvm>,
}

/// Operations a variant cannot carry, and why.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CannotCarry {
    /// Contract operation names (`order-echo`, `orders-echo`, ...).
    pub operations: Vec<String>,
    pub reason: String,
}

impl Variant {
    /// Why this variant does not run `operation`'s scenarios, if it does not.
    pub fn cannot_carry(&self, operation: rpclab_model::contract::Operation) -> Option<&str> {
        let c = self.cannot_carry.as_ref()?;
        let name = operation.to_string();
        c.operations.contains(&name).then_some(c.reason.as_str())
    }
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Manifest {
    pub name: String,
    /// Family for `--only` (`grpc` selects every gRPC server).
    pub framework: String,
    /// The client's protocol module: one of `rpclab_protocols`' list, so an
    /// unknown name is an error with the file, line and the names spoken.
    pub protocol: ProtocolName,
    pub language: Language,
    pub description: String,
    /// The port the lab starts it on; a `target`'s own (absent, or the
    /// same).
    #[serde(default)]
    pub port: u16,
    /// A service the lab does not start, at `HOST:PORT` (`lab bench
    /// --target` writes such a folder): nothing of it is built, started,
    /// pinned, confined or costed; the client, in its container on the
    /// host's network and pinned to the client's CPUs, calls it there.
    #[serde(default)]
    pub target: Option<String>,
    #[serde(default = "no_registry")]
    pub registry: Registry,
    #[serde(default)]
    pub jvm_flags: Vec<String>,
    /// The JVM of every variant (17 for a Java server when not given).
    #[serde(default)]
    pub jvm: Option<Jvm>,
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    /// Passed to the client's protocol module (e.g. Thrift's transport).
    /// [`SERVER_HOST`] in a value is the host the client reaches the
    /// server at (an IceGrid locator's `-h`), filled in by the run.
    #[serde(default)]
    pub client_options: BTreeMap<String, String>,
    /// The server listens on the address in `RPCLAB_BIND` (127.0.0.1 when
    /// unset), so it can serve a client on another machine
    /// (docs/multi-host.md); a server without it binds 127.0.0.1 only.
    #[serde(default)]
    pub bind_from_env: bool,
    #[serde(default)]
    pub readiness: Readiness,
    /// Departures from the lab's container confinement, with reasons.
    #[serde(default)]
    pub confinement: Confinement,
    /// How the shared JVM server Dockerfile builds this server, when its
    /// folder has no Dockerfile of its own ([`java_build`]).
    #[serde(default)]
    pub build: JavaBuild,
    #[serde(rename = "variant")]
    pub variants: Vec<Variant>,
    /// What is left before the lab runs this server, written by `cargo xtask
    /// new server` (docs/adding-a-framework.md). While it is not empty the
    /// server is not runnable yet: `lab list` shows the list and `lab run`
    /// records every variant as not run with it.
    #[serde(default)]
    pub todo: Vec<String>,
    /// The folder the manifest was read from (not in the file).
    #[serde(skip)]
    pub dir: PathBuf,
    /// For a folder from outside the repository's `servers/`
    /// (`--servers-dir`, a lab's `servers_dirs`), the path it was given
    /// as; `None` for the lab's own servers.
    #[serde(skip)]
    pub outside: Option<PathBuf>,
}

/// Where the files a server's client options name are found: its folder
/// on this machine, or the folder as the client's and the probe's
/// containers mount it.
pub const FILES_IN_CONTAINERS: &str = "/server";

/// In a client option's value, the host the client reaches the server at,
/// as the run knows it only once it has chosen the machines: 127.0.0.1 on
/// one machine or in a run's private network, the server's machine's
/// address when the client is on another (an IceGrid locator names the
/// registry's host, which is the server's container's).
pub const SERVER_HOST: &str = "{server_host}";

fn no_registry() -> Registry {
    Registry::None
}

impl Manifest {
    /// Why no variant of this server can run with this build of the lab:
    /// its scaffold checklist is not done. Listed by `lab list` and
    /// recorded in snapshots, never silently skipped.
    pub fn blocked(&self) -> Option<String> {
        (!self.todo.is_empty()).then(|| {
            format!(
                "made by `cargo xtask new server` and its checklist (server.toml's `todo`) is not done: {}",
                self.todo
                    .iter()
                    .enumerate()
                    .map(|(i, t)| format!("{}. {t}", i + 1))
                    .collect::<Vec<_>>()
                    .join("; ")
            )
        })
    }

    /// The Dockerfile of this server's images, relative to the repository
    /// root: its folder's own, or the shared one of the JVM servers.
    pub fn dockerfile(&self) -> String {
        if self.dir.join("Dockerfile").is_file() {
            format!("servers/{}/Dockerfile", self.name)
        } else {
            java_build::SHARED_DOCKERFILE.to_owned()
        }
    }

    /// Whether the shared JVM server Dockerfile builds this server.
    pub fn shared_dockerfile(&self) -> bool {
        self.dockerfile() == java_build::SHARED_DOCKERFILE
    }

    /// Why `variant` cannot run, if it cannot.
    pub fn not_runnable(&self, variant: &Variant) -> Option<String> {
        variant.unavailable.clone().or_else(|| self.blocked())
    }

    /// The JVM `variant` runs on: the variant's, the server's, or 17 for a
    /// Java server; `None` for a server that runs no JVM.
    pub fn jvm_of(&self, variant: &Variant) -> Option<Jvm> {
        variant.jvm.or(self.jvm).or(match self.language {
            Language::Java => Some(Jvm::Jdk17),
            Language::Rust | Language::Other => None,
        })
    }

    /// The server's environment for `variant`: the server-level table with
    /// the variant's entries over it.
    pub fn env_of(&self, variant: &Variant) -> BTreeMap<String, String> {
        let mut env = self.env.clone();
        env.extend(variant.env.clone());
        env
    }

    /// The client's protocol options for `variant`, merged the same way,
    /// as the manifest writes them (a file relative to the folder).
    pub fn client_options_of(&self, variant: &Variant) -> BTreeMap<String, String> {
        let mut options = self.client_options.clone();
        options.extend(variant.client_options.clone());
        options
    }

    /// [`Manifest::client_options_of`] as a client calling `target`
    /// (`HOST:PORT`) takes them: [`SERVER_HOST`] replaced by its host, and
    /// every file the options name ([`ProtocolName::file_options`]) under
    /// `folder`: the server's folder here ([`Manifest::dir`]) for a probe
    /// this process makes, or [`FILES_IN_CONTAINERS`] for a container that
    /// mounts it there.
    pub fn client_options_at(
        &self,
        variant: &Variant,
        folder: &Path,
        target: &str,
    ) -> BTreeMap<String, String> {
        let mut options = self.client_options_of(variant);
        let host = target.rsplit_once(':').map_or(target, |(host, _)| host);
        for value in options.values_mut() {
            if value.contains(SERVER_HOST) {
                *value = value.replace(SERVER_HOST, host);
            }
        }
        for key in self.protocol.file_options() {
            if let Some(file) = options.get_mut(*key) {
                *file = folder.join(&*file).display().to_string();
            }
        }
        options
    }

    /// The files (relative to the folder) the client options of `variant`
    /// name: what the client's containers must see.
    pub fn named_files(&self, variant: &Variant) -> Vec<String> {
        let options = self.client_options_of(variant);
        let mut files: Vec<String> = self
            .protocol
            .file_options()
            .iter()
            .filter_map(|key| options.get(*key).cloned())
            .collect();
        files.sort();
        files.dedup();
        files
    }

    /// The method `variant`'s cells call, for a server of a generic
    /// protocol (`package.Service/Method`); `None` for the contract's.
    pub fn call_of(&self, variant: &Variant) -> Option<String> {
        let key = self.protocol.call_option()?;
        let call = self.client_options_of(variant).get(key)?.clone();
        Some(rpclab_protocols::protocols::grpc_generic::method_of(&call).unwrap_or(call))
    }

    /// What a run records of a folder from outside the repository: its
    /// path as given, and the hashes of its manifest, Dockerfile and the
    /// files `variant`'s options name.
    pub fn folder_record(&self, variant: &Variant) -> Option<rpclab_model::manifest::ServerFolder> {
        use sha2::Digest;
        let outside = self.outside.as_ref()?;
        let mut names = vec!["server.toml".to_owned(), "Dockerfile".to_owned()];
        names.extend(self.named_files(variant));
        let files = names
            .into_iter()
            .filter_map(|name| {
                let bytes = std::fs::read(self.dir.join(&name)).ok()?;
                Some((name, hex::encode(sha2::Sha256::digest(&bytes))))
            })
            .collect();
        Some(rpclab_model::manifest::ServerFolder {
            path: outside.display().to_string(),
            files,
        })
    }

    /// The image tag of a variant. Variants that differ only at run time
    /// (`env`, `client_options`) share the image of the first variant with
    /// the same build arguments, so it is built once.
    pub fn image(&self, variant: &Variant) -> String {
        let first = self
            .variants
            .iter()
            .find(|v| v.build_args == variant.build_args)
            .unwrap_or(variant);
        format!("rpclab/server-{}:{}", self.name, sanitize_tag(&first.name))
    }
}

fn sanitize_tag(s: &str) -> String {
    s.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '.' || c == '-' || c == '_' {
                c
            } else {
                '-'
            }
        })
        .collect()
}

/// Parses TOML into `T`, with errors that name the file, line and column.
pub fn parse_toml<T: serde::de::DeserializeOwned>(path: &Path, text: &str) -> Result<T> {
    toml::from_str(text).map_err(|e| {
        let (line, col) = e.span().map(|s| line_col(text, s.start)).unwrap_or((0, 0));
        anyhow::anyhow!("{}:{line}:{col}: {}", path.display(), e.message())
    })
}

fn line_col(text: &str, offset: usize) -> (usize, usize) {
    let before = &text[..offset.min(text.len())];
    let line = before.matches('\n').count() + 1;
    let col = before
        .rfind('\n')
        .map_or(before.len(), |nl| before.len() - nl - 1)
        + 1;
    (line, col)
}

/// Reads every `servers/*/server.toml`, sorted by name.
pub fn load_all(root: &Path) -> Result<Vec<Manifest>> {
    load_with(root, &[])
}

/// The lab's servers and those of `outside`: each a server folder (with
/// a `server.toml`) or a folder of server folders, from outside the
/// repository (`lab run --servers-dir`, a lab's `servers_dirs`). Read by
/// the same rules as the lab's own; a folder that does not exist or holds
/// no server, or a name one of the lab's servers has, is an error that
/// says so before anything starts.
pub fn load_with(root: &Path, outside: &[PathBuf]) -> Result<Vec<Manifest>> {
    let servers = root.join("servers");
    let mut manifests = Vec::new();
    for dir in folders_in(&servers)? {
        manifests.push(load_one(&dir)?);
    }
    // A path as the repository's root sees it, where it is inside.
    let shown = |p: &Path| p.strip_prefix(root).map_or(p.to_owned(), Path::to_owned);
    for given in outside {
        let folders = if given.join("server.toml").is_file() {
            vec![given.clone()]
        } else if given.is_dir() {
            folders_in(given)?
        } else {
            bail!(
                "server folder {} does not exist (--servers-dir and a lab's servers_dirs \
                 take a server folder, or a folder of them)",
                shown(given).display()
            );
        };
        if folders.is_empty() {
            bail!(
                "{} has no server.toml, nor a folder with one: a server folder holds its \
                 server.toml and Dockerfile (docs/your-own-service.md)",
                shown(given).display()
            );
        }
        for dir in folders {
            let mut m = load_one(&dir)?;
            if let Some(other) = manifests.iter().find(|o| o.name == m.name) {
                bail!(
                    "{}: a server called `{}` is already in {}; rename yours (its folder and \
                     server.toml's `name`)",
                    shown(&dir.join("server.toml")).display(),
                    m.name,
                    other.outside.as_ref().map_or_else(
                        || format!("the lab (servers/{})", other.name),
                        |p| p.display().to_string()
                    )
                );
            }
            let folder = if given.join("server.toml").is_file() {
                given.clone()
            } else {
                given.join(&m.name)
            };
            m.outside = Some(shown(&folder));
            manifests.push(m);
        }
    }
    manifests.sort_by(|a, b| a.name.cmp(&b.name));
    let mut ports: HashMap<u16, &str> = HashMap::new();
    // A target's port is its service's, not one the lab gives out.
    for m in manifests.iter().filter(|m| m.target.is_none()) {
        if let Some(other) = ports.insert(m.port, &m.name) {
            bail!(
                "servers `{other}` and `{}` both declare port {}; give each its own",
                m.name,
                m.port
            );
        }
    }
    Ok(manifests)
}

/// The folders of `parent` that hold a `server.toml`, sorted.
fn folders_in(parent: &Path) -> Result<Vec<PathBuf>> {
    let entries =
        std::fs::read_dir(parent).with_context(|| format!("cannot read {}", parent.display()))?;
    let mut dirs = Vec::new();
    for entry in entries {
        let dir = entry?.path();
        if dir.join("server.toml").is_file() {
            dirs.push(dir);
        }
    }
    dirs.sort();
    Ok(dirs)
}

/// Reads and checks the server folder `dir`.
fn load_one(dir: &Path) -> Result<Manifest> {
    let path = dir.join("server.toml");
    let text = std::fs::read_to_string(&path)
        .with_context(|| format!("cannot read {}", path.display()))?;
    let mut m: Manifest = parse_toml(&path, &text)?;
    let folder = dir.file_name().and_then(|n| n.to_str()).unwrap_or_default();
    if m.name != folder {
        bail!(
            "{}: name = \"{}\" must match its folder name `{folder}`",
            path.display(),
            m.name
        );
    }
    if m.variants.is_empty() {
        bail!("{}: declare at least one [[variant]]", path.display());
    }
    for v in &m.variants {
        for op in v.cannot_carry.iter().flat_map(|c| &c.operations) {
            if op.parse::<rpclab_model::contract::Operation>().is_err() {
                bail!(
                    "{}: variant `{}`: cannot_carry names `{op}`, which is not a contract \
                     operation (order-echo, orders-echo, string-1k, string-100k, string-1m, \
                     hello, empty)",
                    path.display(),
                    v.name
                );
            }
        }
    }
    m.dir = dir.to_owned();
    // A target is not confined by the lab: its [confinement] is not read.
    if m.target.is_none() {
        crate::basics::confine::server(&m.confinement, &m.jvm_flags)
            .with_context(|| format!("{}: [confinement]", path.display()))?;
    }
    match &m.target {
        Some(target) => {
            m.port = check_target(&m, target).with_context(|| path.display().to_string())?
        }
        None if m.port == 0 => bail!(
            "{}: give the port the server listens on (`port = N`), or `target = \"HOST:PORT\"` for a service the lab does not start",
            path.display()
        ),
        None => check_build(&m).with_context(|| path.display().to_string())?,
    }
    for v in &m.variants {
        check_client_options(&m, v)
            .with_context(|| format!("{}: variant `{}`: client_options", path.display(), v.name))?;
    }
    Ok(m)
}

/// The client options of `v` as the client will take them: the method a
/// generic protocol calls is there, every file they name is in the
/// folder, and the protocol accepts them (with a descriptor set, the
/// method and the request's fields are checked against its types).
fn check_client_options(m: &Manifest, v: &Variant) -> Result<()> {
    let options = m.client_options_of(v);
    if let Some(key) = m.protocol.call_option() {
        if !options.contains_key(key) {
            bail!(
                "protocol `{}` calls a method of your own service: add `{key} = \"package.Service/Method\"` \
                 (docs/your-own-service.md)",
                m.protocol
            );
        }
    }
    for key in m.protocol.file_options() {
        let Some(file) = options.get(*key) else {
            continue;
        };
        let relative = Path::new(file);
        if relative.is_absolute()
            || relative
                .components()
                .any(|c| matches!(c, std::path::Component::ParentDir))
        {
            bail!("`{key} = \"{file}\"` must be a path inside the server's folder, relative to it");
        }
        if !m.dir.join(relative).is_file() {
            bail!(
                "`{key} = \"{file}\"` names a file that is not in {}",
                m.dir.display()
            );
        }
    }
    m.protocol
        .check(&m.client_options_at(v, &m.dir, "127.0.0.1:1"))
        .map_err(|e| anyhow::anyhow!("{e}"))
}

/// What a folder of a service the lab does not start may not have (a
/// build, a registry the lab would start, a port of another), and its
/// port.
fn check_target(m: &Manifest, target: &str) -> Result<u16> {
    let port = target
        .rsplit_once(':')
        .and_then(|(host, port)| (!host.is_empty()).then_some(port))
        .and_then(|port| port.parse::<u16>().ok())
        .filter(|port| *port != 0)
        .with_context(|| format!("`target = \"{target}\"` is not HOST:PORT"))?;
    if m.port != 0 && m.port != port {
        bail!(
            "`port = {}` is not the target's ({target}): leave it out",
            m.port
        );
    }
    if m.registry != Registry::None {
        bail!(
            "a target is called directly: the lab starts no registry for it; leave `registry` out"
        );
    }
    if m.dir.join("Dockerfile").is_file() || !m.build.is_empty() {
        bail!("a target is not built by the lab: it has no Dockerfile and no [build]");
    }
    if m.variants
        .iter()
        .any(|v| !v.build_args.is_empty() || !v.env.is_empty())
    {
        bail!("a target is not started by the lab: its variants have no build_args and no env");
    }
    Ok(port)
}

/// A folder with its own Dockerfile has no `[build]` table (nothing would
/// read it); one without is a Java server whose variants the table and a pom
/// of the folder build.
fn check_build(m: &Manifest) -> Result<()> {
    if !m.shared_dockerfile() {
        if !m.build.is_empty() {
            bail!(
                "[build] is read by the shared {}, and {} has a Dockerfile of its own",
                java_build::SHARED_DOCKERFILE,
                m.dir.display()
            );
        }
        return Ok(());
    }
    // Only a Java server builds on the shared Dockerfile.
    if m.language != Language::Java {
        bail!(
            "{} has no Dockerfile: a server that is not in Java brings its own",
            m.dir.display()
        );
    }
    for v in &m.variants {
        m.build.check(&v.name, &v.build_args)?;
        let pom = v
            .build_args
            .get(java_build::POM_ARG)
            .map_or("pom.xml", String::as_str);
        if !m.dir.join(pom).is_file() {
            bail!(
                "variant `{}`: {} has no {pom} (and no Dockerfile of its own)",
                v.name,
                m.dir.display()
            );
        }
    }
    Ok(())
}

/// Resolves `--only` names (server folder names or frameworks) against the
/// manifests; an unknown name is an error that lists the known ones.
pub fn select<'a>(manifests: &'a [Manifest], only: &[String]) -> Result<Vec<&'a Manifest>> {
    if only.is_empty() {
        return Ok(manifests.iter().collect());
    }
    let mut chosen: Vec<&Manifest> = Vec::new();
    for name in only {
        let matches: Vec<_> = manifests
            .iter()
            .filter(|m| &m.name == name || &m.framework == name)
            .collect();
        if matches.is_empty() {
            let known: Vec<_> = manifests
                .iter()
                .map(|m| format!("{} ({})", m.name, m.framework))
                .collect();
            bail!(
                "no server or framework called `{name}`; known: {}",
                known.join(", ")
            );
        }
        for m in matches {
            if !chosen.iter().any(|c| c.name == m.name) {
                chosen.push(m);
            }
        }
    }
    Ok(chosen)
}

/// The servers' names, comma-separated, as a message lists them.
pub fn names<'a>(manifests: impl IntoIterator<Item = &'a Manifest>) -> String {
    manifests
        .into_iter()
        .map(|m| m.name.as_str())
        .collect::<Vec<_>>()
        .join(", ")
}

/// A Java Thrift server's manifest, its common fields followed by `extra`
/// (a name, variants): the engine's planning tests vary only those, and one
/// copy keeps their servers alike.
#[cfg(test)]
pub fn java_thrift_for_tests(extra: &str) -> Manifest {
    let base = "framework = \"thrift\"\nprotocol = \"thrift\"\nlanguage = \"java\"\ndescription = \"d\"\nport = 9090\njvm_flags = [\"-Xmx256m\"]\n";
    toml::from_str(&format!("{base}{extra}")).unwrap()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_icegrid_servers_locator_names_the_host_the_client_calls_them_at() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
        let all = load_with(root, &[]).unwrap();
        for name in ["ice-3.6-icegrid", "ice-3.7-icegrid"] {
            let m = all.iter().find(|m| m.name == name).unwrap();
            assert!(m.bind_from_env, "{name} binds RPCLAB_BIND");
            let v = &m.variants[0];
            for host in ["127.0.0.1", "10.0.0.7"] {
                let target = format!("{host}:{}", m.port);
                let options = m.client_options_at(v, Path::new(FILES_IN_CONTAINERS), &target);
                assert_eq!(
                    options["locator"],
                    format!("IceGrid/Locator:tcp -h {host} -p {}", m.port),
                    "{name}"
                );
                assert!(options.values().all(|value| !value.contains(SERVER_HOST)));
            }
        }
    }

    #[test]
    fn a_typo_names_the_file_line_and_column() {
        let text = "name = \"x\"\nframwork = \"grpc\"\n";
        let err = parse_toml::<Manifest>(Path::new("servers/x/server.toml"), text).unwrap_err();
        let msg = err.to_string();
        assert!(msg.starts_with("servers/x/server.toml:2:1:"), "{msg}");
        assert!(msg.contains("framwork"), "{msg}");
    }

    #[test]
    fn variants_with_the_same_build_arguments_share_one_image() {
        let text = r#"
name = "s"
framework = "f"
protocol = "grpc"
language = "java"
description = "d"
port = 1
[[variant]]
name = "a"
version = "1"
build_args = { V = "1" }
[[variant]]
name = "a-other-setting"
version = "1"
build_args = { V = "1" }
env = { X = "y" }
[[variant]]
name = "b"
version = "2"
build_args = { V = "2" }
"#;
        let m: Manifest = parse_toml(Path::new("server.toml"), text).unwrap();
        assert_eq!(m.image(&m.variants[0]), m.image(&m.variants[1]));
        assert_ne!(m.image(&m.variants[0]), m.image(&m.variants[2]));
        assert_eq!(
            m.env_of(&m.variants[1]).get("X").map(String::as_str),
            Some("y")
        );
    }

    #[test]
    fn the_jvm_is_typed_and_defaults_to_17_for_java() {
        let text = r#"
name = "s"
framework = "f"
protocol = "grpc"
language = "java"
description = "d"
port = 1
[[variant]]
name = "a"
version = "1"
[[variant]]
name = "b"
version = "1"
jvm = "17"
"#;
        let m: Manifest = parse_toml(Path::new("server.toml"), text).unwrap();
        assert_eq!(m.jvm_of(&m.variants[0]), Some(Jvm::Jdk17));
        assert_eq!(m.jvm_of(&m.variants[1]).map(Jvm::as_str), Some("17"));
        // a JVM the lab cannot provide is an error with its line
        let jdk21 = text.replace("jvm = \"17\"", "jvm = \"21\"");
        let err = parse_toml::<Manifest>(Path::new("server.toml"), &jdk21)
            .unwrap_err()
            .to_string();
        assert!(err.starts_with("server.toml:14:"), "{err}");
        assert!(err.contains("21"), "{err}");
    }

    #[test]
    fn an_unknown_protocol_or_language_names_the_file_line_and_the_known_ones() {
        let text = "name = \"s\"\nframework = \"f\"\nprotocol = \"capnp\"\nlanguage = \"java\"\n";
        let err = parse_toml::<Manifest>(Path::new("servers/s/server.toml"), text)
            .unwrap_err()
            .to_string();
        assert!(err.starts_with("servers/s/server.toml:3:"), "{err}");
        assert!(
            err.contains("unknown protocol `capnp`; this client speaks: grpc, thrift"),
            "{err}"
        );
        let cpp = text.replace("capnp", "grpc").replace("java", "cpp");
        let err = parse_toml::<Manifest>(Path::new("servers/s/server.toml"), &cpp)
            .unwrap_err()
            .to_string();
        assert!(err.starts_with("servers/s/server.toml:4:"), "{err}");
        assert!(err.contains("`cpp`") && err.contains("java"), "{err}");
    }

    #[test]
    fn a_folder_builds_with_its_own_dockerfile_or_the_shared_one_and_build_table() {
        let text = r#"
name = "s"
framework = "f"
protocol = "grpc"
language = "java"
description = "d"
port = 1
[build]
maven_properties = { "s.version" = "S_VERSION" }
[[variant]]
name = "a"
version = "1"
build_args = { S_VERSION = "1" }
"#;
        let dir = tempfile::tempdir().unwrap();
        let mut m: Manifest = parse_toml(Path::new("server.toml"), text).unwrap();
        m.dir = dir.path().to_owned();
        let err = check_build(&m).unwrap_err().to_string();
        assert!(err.contains("has no pom.xml"), "{err}");
        std::fs::write(dir.path().join("pom.xml"), "<project/>").unwrap();
        check_build(&m).unwrap();
        assert!(m.shared_dockerfile());
        m.variants[0].build_args.insert("OTHER".into(), "2".into());
        let err = check_build(&m).unwrap_err().to_string();
        assert!(err.contains("`OTHER` sets nothing"), "{err}");
        // a Dockerfile of its own reads the build arguments, and no [build]
        std::fs::write(dir.path().join("Dockerfile"), "FROM scratch\n").unwrap();
        assert_eq!(m.dockerfile(), "servers/s/Dockerfile");
        let err = check_build(&m).unwrap_err().to_string();
        assert!(err.contains("a Dockerfile of its own"), "{err}");
        m.build = JavaBuild::default();
        check_build(&m).unwrap();
    }

    #[test]
    fn line_col_counts_from_one() {
        assert_eq!(line_col("ab\ncd", 0), (1, 1));
        assert_eq!(line_col("ab\ncd", 4), (2, 2));
    }

    #[test]
    fn every_server_folder_in_the_repository_has_a_valid_policy() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
        for m in load_all(root).unwrap() {
            let p = crate::basics::confine::server(&m.confinement, &m.jvm_flags).unwrap();
            assert!(p.memory_bytes >= 1 << 30, "{}: {}", m.name, p.memory_basis);
        }
    }

    /// The repository's root and its worked example of a server folder
    /// from outside `servers/`.
    fn example() -> (PathBuf, PathBuf) {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
        (root.to_owned(), root.join("fixtures/servers"))
    }

    /// A copy of the example's folder under `parent` as `name`, its
    /// `server.toml` edited by `edit`.
    fn copy_example(parent: &Path, name: &str, edit: impl Fn(String) -> String) -> PathBuf {
        let (_, servers) = example();
        let dir = parent.join(name);
        std::fs::create_dir_all(&dir).unwrap();
        for file in ["Dockerfile", "shop.protoset", "request.json", "reply.json"] {
            std::fs::copy(servers.join("grpc-shop").join(file), dir.join(file)).unwrap();
        }
        let text = std::fs::read_to_string(servers.join("grpc-shop/server.toml")).unwrap();
        let text = edit(text.replace("name = \"grpc-shop\"", &format!("name = \"{name}\"")));
        std::fs::write(dir.join("server.toml"), text).unwrap();
        dir
    }

    #[test]
    fn a_folder_from_outside_is_read_as_the_lab_s_own_with_its_call_and_files() {
        let (root, servers) = example();
        let all = load_with(&root, std::slice::from_ref(&servers)).unwrap();
        assert!(all
            .iter()
            .any(|m| m.name == "thrift-java" && m.outside.is_none()));
        let shop = all.iter().find(|m| m.name == "grpc-shop").unwrap();
        // Shown as the repository's root sees it.
        assert_eq!(
            shop.outside.as_deref(),
            Some(Path::new("fixtures/servers/grpc-shop"))
        );
        let v = &shop.variants[0];
        assert_eq!(
            shop.call_of(v).as_deref(),
            Some("shop.v1.Inventory/Reserve")
        );
        assert_eq!(
            shop.named_files(v),
            ["reply.json", "request.json", "shop.protoset"]
        );
        let inside = shop.client_options_at(v, Path::new(FILES_IN_CONTAINERS), "127.0.0.1:50051");
        assert_eq!(inside["protoset"], "/server/shop.protoset");
        assert_eq!(inside["call"], "shop.v1.Inventory/Reserve");
        assert_eq!(shop.jvm_of(v), None);
        assert_eq!(shop.dockerfile(), "servers/grpc-shop/Dockerfile");
        let record = shop.folder_record(v).unwrap();
        assert_eq!(
            record.files.keys().collect::<Vec<_>>(),
            [
                "Dockerfile",
                "reply.json",
                "request.json",
                "server.toml",
                "shop.protoset"
            ]
        );
        assert!(record.files.values().all(|h| h.len() == 64));
        // The folder itself may be given too.
        let one = load_with(&root, &[servers.join("grpc-shop")]).unwrap();
        assert!(one.iter().any(|m| m.name == "grpc-shop"));
        // The lab's own record no folder.
        let thrift = all.iter().find(|m| m.name == "thrift-java").unwrap();
        assert!(thrift.folder_record(&thrift.variants[0]).is_none());
        assert_eq!(thrift.call_of(&thrift.variants[0]), None);
    }

    #[test]
    fn bad_server_folders_are_one_line_each_before_anything_starts() {
        let (root, _) = example();
        let tmp = tempfile::tempdir().unwrap();
        let err = |dir: &Path| {
            let e = format!("{:#}", load_with(&root, &[dir.to_owned()]).unwrap_err());
            assert!(!e.contains('\n'), "one line: {e}");
            e
        };
        let missing = err(&tmp.path().join("nowhere"));
        assert!(missing.contains("nowhere does not exist"), "{missing}");
        let empty = tmp.path().join("empty");
        std::fs::create_dir_all(empty.join("sub")).unwrap();
        let e = err(&empty);
        assert!(
            e.contains("has no server.toml, nor a folder with one"),
            "{e}"
        );

        let clash = tmp.path().join("clash");
        copy_example(&clash, "thrift-java", |t| t);
        let e = err(&clash);
        assert!(
            e.contains("a server called `thrift-java` is already in the lab (servers/thrift-java)"),
            "{e}"
        );

        let no_call = tmp.path().join("no-call");
        copy_example(&no_call, "shop2", |t| t.replace("call = ", "# call = "));
        let e = err(&no_call);
        assert!(
            e.contains("server.toml: variant `0.1`: client_options:"),
            "{e}"
        );
        assert!(e.contains("add `call = \"package.Service/Method\"`"), "{e}");

        let no_file = tmp.path().join("no-file");
        let dir = copy_example(&no_file, "shop3", |t| t);
        std::fs::remove_file(dir.join("request.json")).unwrap();
        let e = err(&no_file);
        assert!(
            e.contains("`data_file = \"request.json\"` names a file that is not in"),
            "{e}"
        );

        let outside = tmp.path().join("outside");
        copy_example(&outside, "shop4", |t| {
            t.replace("\"reply.json\"", "\"../reply.json\"")
        });
        let e = err(&outside);
        assert!(
            e.contains("must be a path inside the server's folder"),
            "{e}"
        );

        let wrong = tmp.path().join("wrong-method");
        copy_example(&wrong, "shop5", |t| {
            t.replace("Inventory/Reserve", "Inventory/Cancel")
        });
        let e = err(&wrong);
        assert!(
            e.contains(
                "service `shop.v1.Inventory` has no method `Cancel` (its methods: Reserve, Watch, ReserveAll, ReserveEach, Checkout)"
            ),
            "{e}"
        );
    }
}
