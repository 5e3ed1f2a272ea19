//! `cargo xtask new server`: a new server folder, copied from an existing one.
//!
//! A new server of a protocol the lab already speaks starts as a copy of a
//! folder that speaks it (`--like`, or `--protocol`, which picks the first
//! such folder). The copy gets its own name, port and registry, every
//! `servers/<old>` path in its text files becomes `servers/<new>` (a Java
//! server has no Dockerfile: the shared one builds it from its pom and its
//! manifest's `[build]`; a Dockerfile of its own takes the folder as
//! `SERVER_DIR` and names none), and its
//! manifest gets a `todo` list: the honest checklist of what the copy does
//! not do yet. While the list is not empty `lab list` shows the server as not
//! runnable yet, with the list, and `lab run` skips it: a copy runs its
//! original's code, and numbers under a new name would be a duplicate
//! presented as a new framework. A protocol no folder speaks gets a
//! template folder whose Dockerfile fails until it is written; a protocol
//! the load client does not speak yet is refused (`--protocol` is one of
//! its list): its module comes first (docs/adding-a-framework.md).

use crate::definitions::manifest::{self, Language, Manifest, ProtocolName};
use anyhow::{bail, Context, Result};
use clap::{Args, Subcommand};
use std::path::{Path, PathBuf};

#[derive(Subcommand)]
pub enum NewCommand {
    /// A new `servers/<NAME>/`, copied from an existing server folder (or a
    /// template for a protocol no folder speaks), with the checklist of what
    /// is left.
    Server(ServerArgs),
}

#[derive(Args, Clone, Debug)]
pub struct ServerArgs {
    /// The new folder's name (`servers/<NAME>`): lower case, digits, `.` and `-`.
    pub name: String,
    /// The existing server folder to copy.
    #[arg(
        long,
        conflicts_with = "protocol",
        required_unless_present = "protocol"
    )]
    pub like: Option<String>,
    /// The client protocol module the server speaks (one the load client
    /// has); copies the first folder that speaks it, or writes a template
    /// when none does.
    #[arg(long)]
    pub protocol: Option<ProtocolName>,
    /// The server's port (default: the first free one above the copied
    /// server's).
    #[arg(long)]
    pub port: Option<u16>,
    /// The registry started beside it: `none` or `zookeeper` (default: the
    /// copied server's).
    #[arg(long)]
    pub registry: Option<String>,
}

pub fn run(root: &Path, command: NewCommand) -> Result<()> {
    match command {
        NewCommand::Server(args) => {
            let made = new_server(root, &args)?;
            match &made.from {
                Some(from) => println!("created {} from servers/{from}", made.dir.display()),
                None => println!("created {} from the template", made.dir.display()),
            }
            println!("{}", made.checklist());
            Ok(())
        }
    }
}

/// What [`new_server`] made.
pub struct Scaffold {
    pub dir: PathBuf,
    /// The folder it was copied from, if any.
    pub from: Option<String>,
    pub todo: Vec<String>,
}

impl Scaffold {
    /// The checklist as printed, one item a line.
    pub fn checklist(&self) -> String {
        let mut out = String::from(
            "left to do (also in server.toml's `todo`; `lab list` shows the server as \
             not runnable yet until you remove the key):\n",
        );
        for (i, item) in self.todo.iter().enumerate() {
            out.push_str(&format!("  {}. {item}\n", i + 1));
        }
        out
    }
}

/// Creates `servers/<name>` under `root` as `args` says.
pub fn new_server(root: &Path, args: &ServerArgs) -> Result<Scaffold> {
    let name = args.name.as_str();
    if name.is_empty()
        || !name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '.')
        || !name.starts_with(|c: char| c.is_ascii_lowercase())
    {
        bail!("`{name}`: a server name is lower case letters, digits, `.` and `-`, starting with a letter");
    }
    let dest = root.join("servers").join(name);
    if dest.exists() {
        bail!("{} exists already", dest.display());
    }
    let manifests = manifest::load_all(root)?;
    let registry = match args.registry.as_deref() {
        None => None,
        Some(r @ ("none" | "zookeeper")) => Some(r.to_owned()),
        Some(other) => bail!("--registry {other}: the lab starts `none` or `zookeeper`"),
    };
    let source =
        match (&args.like, &args.protocol) {
            (Some(like), _) => Some(manifests.iter().find(|m| &m.name == like).with_context(
                || {
                    format!(
                        "--like {like}: no such server (there are: {})",
                        manifest::names(&manifests)
                    )
                },
            )?),
            (None, Some(protocol)) => manifests.iter().find(|m| m.protocol == *protocol),
            (None, None) => bail!("say --like EXISTING or --protocol P"),
        };
    let used: Vec<u16> = manifests.iter().map(|m| m.port).collect();
    let port = match args.port {
        Some(p) if used.contains(&p) => bail!(
            "--port {p} is taken by {}",
            manifest::names(manifests.iter().filter(|m| m.port == p))
        ),
        Some(p) => p,
        None => {
            let start = source.map_or(20_000, |m| m.port).saturating_add(1);
            (start..=u16::MAX)
                .find(|p| !used.contains(p))
                .context("no free port above the copied server's; say --port")?
        }
    };
    match (source, args.protocol) {
        (Some(m), _) => copy_server(m, &dest, name, port, registry.as_deref()),
        (None, Some(protocol)) => template(&dest, name, protocol, port, registry.as_deref()),
        (None, None) => unreachable!("--like always finds its source or fails above"),
    }
}

fn copy_server(
    from: &Manifest,
    dest: &Path,
    name: &str,
    port: u16,
    registry: Option<&str>,
) -> Result<Scaffold> {
    let old_path = format!("servers/{}", from.name);
    let new_path = format!("servers/{name}");
    copy_tree(&from.dir, dest, &|text| text.replace(&old_path, &new_path))?;
    // The copy's notes are its original's: start new ones.
    let _ = std::fs::remove_file(dest.join("NOTES.md"));
    std::fs::write(
        dest.join("NOTES.md"),
        format!(
            "# {name}\n\nCopied from the `{}` server folder by `cargo xtask new server`. What this server \
             is, how it differs from its original, and what was verified.\n",
            from.name
        ),
    )?;

    let mut todo = vec![format!(
        "change the server code under servers/{name}/src: it is still servers/{}'s, so a run \
         would measure that server again under a new name",
        from.name
    )];
    if from.language == Language::Java {
        todo.push(
            "rename the Java package and main class if you like (pom.xml's mainClass names \
             it); pom.xml is left as copied, so an unchanged pom reuses the original's \
             dependency layer"
                .to_owned(),
        );
    }
    todo.push(
        "rewrite server.toml: description, framework, variants (versions, build_args, notes), \
         [build] (the Maven properties the build_args set, the jar of the version), \
         jvm_flags, env and client_options, and the comment on what the server reads"
            .to_owned(),
    );
    let old_port = from.port.to_string();
    let mentions = files_mentioning(dest, &old_port)?;
    if !mentions.is_empty() {
        todo.push(format!(
            "the old port {old_port} still appears in {} (the lab passes RPCLAB_PORT={port}; \
             a default or a client option may need it too)",
            mentions.join(", ")
        ));
    }
    todo.extend(common_todo(name));

    let toml_path = dest.join("server.toml");
    let text = std::fs::read_to_string(&toml_path)?;
    let text = rewrite_manifest(&text, name, port, registry, &from.description, &todo)?;
    std::fs::write(&toml_path, text)?;
    Ok(Scaffold {
        dir: dest.to_owned(),
        from: Some(from.name.clone()),
        todo,
    })
}

/// The checklist items every new server has, whatever it was made from.
fn common_todo(name: &str) -> Vec<String> {
    let mut todo = Vec::new();
    todo.push(format!(
        "`cargo xtask lab run --only {name} --profile smoke --results-dir /tmp/{name}-check`: \
         every call verified"
    ));
    todo.push(
        "`cargo xtask readme` (the README's server list is generated) and, if the server \
         joins the default lab, compose/lab.toml"
            .to_owned(),
    );
    todo.push("remove `todo` from server.toml".to_owned());
    todo
}

fn template(
    dest: &Path,
    name: &str,
    protocol: ProtocolName,
    port: u16,
    registry: Option<&str>,
) -> Result<Scaffold> {
    std::fs::create_dir_all(dest)?;
    let mut todo = vec![
        format!(
            "build the server: a Java server replaces servers/{name}/Dockerfile by a pom.xml and \
             server.toml's [build] table, and the shared images/java-server/Dockerfile builds it \
             (docs/adding-a-framework.md); a server in another language writes the Dockerfile, \
             built from the repository root context (contract/ and SERVER_DIR=servers/{name} \
             are there)"
        ),
        "write the server: bind 127.0.0.1 on RPCLAB_PORT, implement every contract operation \
         (contract/README.md)"
            .to_owned(),
        "fill in server.toml: framework, description, variants; `language = \"java\"` is \
         written, and a server in another language needs it added to the lab's `Language` \
         (xtask/src/definitions/manifest.rs) with a way to build it"
            .to_owned(),
    ];
    todo.extend(common_todo(name));
    std::fs::write(
        dest.join("Dockerfile"),
        format!(
            "# rpclab {name} server ({protocol}): written by `cargo xtask new server`; build \
             the server here.\n\
             # Build context: the repository root; xtask passes SERVER_DIR=servers/{name}.\n\
             FROM scratch\n\
             ARG SERVER_DIR\n\
             COPY ${{SERVER_DIR}}/NOT-WRITTEN-YET /\n"
        ),
    )?;
    std::fs::write(
        dest.join("NOTES.md"),
        format!("# {name}\n\nWhat this server is, its versions, and what was verified.\n"),
    )?;
    let manifest = format!(
        "name = \"{name}\"\n\
         framework = \"{name}\"\n\
         protocol = \"{protocol}\"\n\
         language = \"java\"\n\
         description = \"TODO: what runs, on which transport, with which threads.\"\n\
         port = {port}\n\
         registry = \"{}\"\n\
         {}\n\
         # The container's memory limit (a Java server derives it from -Xmx).\n\
         [confinement]\n\
         memory = \"1g\"\n\
         \n\
         [[variant]]\n\
         name = \"TODO\"\n\
         version = \"TODO\"\n",
        registry.unwrap_or("none"),
        todo_toml(&todo),
    );
    std::fs::write(dest.join("server.toml"), manifest)?;
    Ok(Scaffold {
        dir: dest.to_owned(),
        from: None,
        todo,
    })
}

/// `todo = [...]` as TOML, with its comment.
fn todo_toml(todo: &[String]) -> String {
    let mut out = String::from(
        "# Written by `cargo xtask new server`: what is left before the lab runs this\n\
         # server. `lab list` shows it and `lab run` skips the server until the key is gone.\n\
         todo = [\n",
    );
    for item in todo {
        out.push_str(&format!("    {},\n", toml_string(item)));
    }
    out.push_str("]\n");
    out
}

fn toml_string(s: &str) -> String {
    toml::Value::String(s.to_owned()).to_string()
}

/// The copied manifest with the new name, port and registry, and the
/// checklist as its `todo`, placed before the first table so that it is a
/// top-level key.
fn rewrite_manifest(
    text: &str,
    name: &str,
    port: u16,
    registry: Option<&str>,
    description: &str,
    todo: &[String],
) -> Result<String> {
    let mut out = Vec::new();
    let (mut saw_name, mut saw_port, mut saw_registry, mut placed) = (false, false, false, false);
    for line in text.lines() {
        let key = line.split('=').next().unwrap_or_default().trim();
        if !placed && line.starts_with('[') {
            if !saw_registry {
                if let Some(r) = registry {
                    out.push(format!("registry = \"{r}\""));
                }
            }
            out.push(todo_toml(todo));
            placed = true;
        }
        if placed {
            out.push(line.to_owned());
            continue;
        }
        match key {
            "name" if !saw_name => {
                saw_name = true;
                out.push(format!("name = \"{name}\""));
            }
            "port" if !saw_port => {
                saw_port = true;
                out.push(format!("port = {port}"));
            }
            "registry" if !saw_registry => {
                saw_registry = true;
                match registry {
                    Some(r) => out.push(format!("registry = \"{r}\"")),
                    None => out.push(line.to_owned()),
                }
            }
            "description" => out.push(format!(
                "description = {}",
                toml_string(&format!(
                    "TODO (copied from a server described as: {description})"
                ))
            )),
            _ => out.push(line.to_owned()),
        }
    }
    if !placed {
        out.push(todo_toml(todo));
    }
    if !saw_name || !saw_port {
        bail!("the copied server.toml has no top-level `name` or `port` line to rewrite");
    }
    Ok(out.join("\n") + "\n")
}

/// Copies `src` into `dest` (following links, so the copy is a folder of its
/// own), skipping build outputs and dot files, passing each UTF-8 text file
/// through `rewrite`.
fn copy_tree(src: &Path, dest: &Path, rewrite: &dyn Fn(&str) -> String) -> Result<()> {
    std::fs::create_dir_all(dest).with_context(|| format!("cannot create {}", dest.display()))?;
    let mut entries: Vec<PathBuf> = std::fs::read_dir(src)
        .with_context(|| format!("cannot read {}", src.display()))?
        .map(|e| e.map(|e| e.path()))
        .collect::<std::io::Result<_>>()?;
    entries.sort();
    for entry in entries {
        let file = entry.file_name().unwrap_or_default().to_owned();
        let file_str = file.to_string_lossy();
        if file_str == "target" || file_str.starts_with('.') {
            continue;
        }
        let to = dest.join(&file);
        if entry.is_dir() {
            copy_tree(&entry, &to, rewrite)?;
        } else {
            let bytes = std::fs::read(&entry)
                .with_context(|| format!("cannot read {}", entry.display()))?;
            match String::from_utf8(bytes) {
                Ok(text) => std::fs::write(&to, rewrite(&text))?,
                Err(e) => std::fs::write(&to, e.into_bytes())?,
            }
            let mode = std::fs::metadata(&entry)?.permissions();
            std::fs::set_permissions(&to, mode)?;
        }
    }
    Ok(())
}

/// The files under `dir` (relative, sorted) whose text contains `needle`
/// as a whole number.
fn files_mentioning(dir: &Path, needle: &str) -> Result<Vec<String>> {
    let files = crate::basics::tree::files_under(dir, |p| {
        p.file_name().is_some_and(|n| n != "server.toml")
    })?;
    let mut found = Vec::new();
    for p in files {
        let text = std::fs::read_to_string(&p).unwrap_or_default();
        let whole = text.match_indices(needle).any(|(i, _)| {
            let before = text[..i].chars().next_back();
            let after = text[i + needle.len()..].chars().next();
            !before.is_some_and(|c| c.is_ascii_digit())
                && !after.is_some_and(|c| c.is_ascii_digit())
        });
        if whole {
            let rel = p.strip_prefix(dir).unwrap_or(&p);
            found.push(rel.display().to_string());
        }
    }
    found.sort();
    Ok(found)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A temporary repository root holding copies of the given server
    /// folders (links followed), as `new_server` and `manifest::load_all`
    /// read it.
    fn temp_root(servers: &[&str]) -> tempfile::TempDir {
        let repo = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
        let dir = tempfile::tempdir().unwrap();
        for s in servers {
            copy_tree(
                &repo.join("servers").join(s),
                &dir.path().join("servers").join(s),
                &|t| t.to_owned(),
            )
            .unwrap();
        }
        dir
    }

    fn args(name: &str, like: Option<&str>, protocol: Option<&str>) -> ServerArgs {
        ServerArgs {
            name: name.to_owned(),
            like: like.map(str::to_owned),
            protocol: protocol.map(|p| p.parse().unwrap()),
            port: None,
            registry: None,
        }
    }

    #[test]
    fn a_copy_is_listed_as_not_runnable_yet_with_its_checklist() {
        let root = temp_root(&["thrift-java"]);
        let made = new_server(
            root.path(),
            &args("thrift-java-hsha", Some("thrift-java"), None),
        )
        .unwrap();
        assert_eq!(made.from.as_deref(), Some("thrift-java"));

        let manifests = manifest::load_all(root.path()).unwrap();
        let original = manifests.iter().find(|m| m.name == "thrift-java").unwrap();
        let new = manifests
            .iter()
            .find(|m| m.name == "thrift-java-hsha")
            .expect("the new server's manifest loads");
        assert_eq!(new.protocol, original.protocol);
        assert_eq!(
            new.port,
            original.port + 1,
            "the first free port above the original's"
        );
        assert_eq!(new.variants.len(), original.variants.len());
        assert_eq!(new.todo, made.todo);
        assert!(original.blocked().is_none(), "the original stays runnable");

        // What `lab list` prints after "not runnable yet:", and what `lab
        // run` records for every variant it skips.
        let why = new
            .blocked()
            .expect("a scaffolded server is not runnable yet");
        assert!(why.contains("cargo xtask new server"), "{why}");
        assert!(why.contains("still servers/thrift-java's"), "{why}");
        for v in new.variants.iter().filter(|v| v.unavailable.is_none()) {
            assert_eq!(new.not_runnable(v).as_deref(), Some(why.as_str()));
        }

        // Nothing in the copy names the original's folder but the checklist
        // (which says it is a copy); the shared Dockerfile builds it as it
        // builds the original, with the original's [build] table.
        let dir = root.path().join("servers/thrift-java-hsha");
        let copied = crate::basics::tree::files_under(&dir, |p| !p.ends_with("server.toml"));
        for p in copied.unwrap() {
            if let Ok(text) = std::fs::read_to_string(&p) {
                let rest = text.replace("servers/thrift-java-hsha", "");
                assert!(!rest.contains("servers/thrift-java"), "{}", p.display());
            }
        }
        assert!(!dir.join("Dockerfile").exists());
        assert!(new.shared_dockerfile());
        assert_eq!(new.build.debian_packages, original.build.debian_packages);
        // The pom is the original's byte for byte, so the dependency layer is shared.
        assert_eq!(
            std::fs::read(dir.join("pom.xml")).unwrap(),
            std::fs::read(root.path().join("servers/thrift-java/pom.xml")).unwrap()
        );

        // Clearing the checklist makes it runnable.
        let toml = std::fs::read_to_string(dir.join("server.toml")).unwrap();
        let start = toml.find("todo = [").unwrap();
        let end = start + toml[start..].find("]\n").unwrap() + 2;
        std::fs::write(
            dir.join("server.toml"),
            format!("{}{}", &toml[..start], &toml[end..]),
        )
        .unwrap();
        let manifests = manifest::load_all(root.path()).unwrap();
        let new = manifests
            .iter()
            .find(|m| m.name == "thrift-java-hsha")
            .unwrap();
        assert!(new.blocked().is_none(), "{:?}", new.blocked());
    }

    #[test]
    fn a_linked_folder_is_copied_as_files_with_the_given_port_and_registry() {
        // dubbo-webservice links dubbo-hessian's pom and sources, as in
        // the repository.
        let repo = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
        let root = temp_root(&["dubbo-hessian"]);
        let linked = root.path().join("servers/dubbo-webservice");
        std::fs::create_dir_all(&linked).unwrap();
        std::fs::copy(
            repo.join("servers/dubbo-webservice/server.toml"),
            linked.join("server.toml"),
        )
        .unwrap();
        for f in ["pom.xml", "src"] {
            std::os::unix::fs::symlink(format!("../dubbo-hessian/{f}"), linked.join(f)).unwrap();
        }
        let mut a = args("dubbo-webservice-2", Some("dubbo-webservice"), None);
        a.port = Some(18094);
        a.registry = Some("zookeeper".into());
        new_server(root.path(), &a).unwrap();
        let dir = root.path().join("servers/dubbo-webservice-2");
        for f in ["pom.xml", "src"] {
            assert!(!dir.join(f).is_symlink(), "{f} is a link");
            assert!(dir.join(f).exists(), "{f} missing");
        }
        let manifests = manifest::load_all(root.path()).unwrap();
        let new = manifests
            .iter()
            .find(|m| m.name == "dubbo-webservice-2")
            .unwrap();
        assert_eq!(new.port, 18094);
        assert_eq!(new.registry, manifest::Registry::Zookeeper);
        assert!(new.blocked().is_some());
    }

    #[test]
    fn a_protocol_no_folder_speaks_gets_a_template_that_cannot_run() {
        let root = temp_root(&["rmi-jdk"]);
        let made = new_server(root.path(), &args("grpc-rust", None, Some("grpc"))).unwrap();
        assert!(made.from.is_none());
        assert!(
            made.todo.iter().any(|t| t.contains("`Language`")),
            "{:#?}",
            made.todo
        );
        let manifests = manifest::load_all(root.path()).unwrap();
        let new = manifests.iter().find(|m| m.name == "grpc-rust").unwrap();
        assert_eq!(new.protocol, ProtocolName::Grpc);
        assert!(new.blocked().is_some());
    }

    #[test]
    fn a_protocol_the_client_does_not_speak_is_refused_with_the_ones_it_does() {
        use clap::Parser;
        #[derive(Parser)]
        struct Cli {
            #[command(flatten)]
            server: ServerArgs,
        }
        let err = Cli::try_parse_from(["new", "capnp-rust", "--protocol", "capnp"])
            .err()
            .unwrap()
            .to_string();
        assert!(
            err.contains("unknown protocol `capnp`; this client speaks: grpc"),
            "{err}"
        );
    }

    #[test]
    fn bad_requests_are_refused_with_the_reason() {
        let root = temp_root(&["rmi-jdk"]);
        let err = |a: ServerArgs| new_server(root.path(), &a).err().unwrap().to_string();
        assert!(err(args("rmi-jdk", Some("rmi-jdk"), None)).contains("exists already"));
        assert!(err(args("Bad_Name", Some("rmi-jdk"), None)).contains("lower case"));
        assert!(err(args("x", Some("nosuch"), None)).contains("no such server"));
        let mut taken = args("x", Some("rmi-jdk"), None);
        taken.port = Some(1099);
        assert!(err(taken).contains("taken by rmi-jdk"));
        let mut registry = args("x", Some("rmi-jdk"), None);
        registry.registry = Some("etcd".into());
        assert!(err(registry).contains("--registry etcd"));
    }
}
