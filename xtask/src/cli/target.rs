//! `--target`: a service the lab did not start, measured as a server of
//! its own (`lab bench`, `lab capacity --target`).
//!
//! The flags become a server folder, as a user could write by hand
//! ([`crate::definitions::manifest::Manifest::target`]): a `server.toml`
//! with `target = "HOST:PORT"` and the client options, and the files those
//! name copied beside it (a `.proto` compiled into a descriptor set, so
//! that its imports need not be copied). It is written under
//! `target/rpclab-targets/<name>/` and read by the run as a
//! `--servers-dir` folder is: the same readiness probe, cells, priming and
//! snapshot, with nothing of the service built, started, pinned, confined
//! or costed.

use crate::basics::tree::{files_under, has_extension};
use anyhow::{bail, Context, Result};
use rpclab_protocols::protocols::ProtocolName;
use std::path::{Path, PathBuf};

/// Where the folders are written, under the repository's root.
pub const TARGETS_DIR: &str = "target/rpclab-targets";

/// The flags that describe a service the lab did not start.
#[derive(clap::Args, Clone, Default)]
pub struct TargetArgs {
    /// The running service's address, `HOST:PORT` (the client reaches it
    /// from the host's network).
    #[arg(long, value_name = "HOST:PORT")]
    pub target: Option<String>,
    /// Its protocol: `grpc`, `dubbo` or `thrift` (their generic calls of
    /// your own method), or any protocol the client speaks (`thrift` for
    /// a server of the lab's contract: `--protocol thrift --option
    /// transport=framed`).
    #[arg(long, default_value = "grpc", requires = "target")]
    pub protocol: String,
    /// The method: `package.Service/Method` (gRPC), `interface/method`
    /// (Dubbo), `Service.method` (Thrift).
    #[arg(long, requires = "target")]
    pub call: Option<String>,
    /// The request, as JSON (with the client's template values).
    #[arg(long, requires = "target", conflicts_with = "data_file")]
    pub data: Option<String>,
    /// The request from a file: JSON, or a data array.
    #[arg(long, requires = "target")]
    pub data_file: Option<PathBuf>,
    /// The reply every call must get, as JSON (matchers allowed).
    #[arg(long, requires = "target", conflicts_with = "expect_file")]
    pub expect: Option<String>,
    /// The expected reply from a file.
    #[arg(long, requires = "target")]
    pub expect_file: Option<PathBuf>,
    /// gRPC metadata or Dubbo attachments, as a JSON object.
    #[arg(long, requires = "target")]
    pub metadata: Option<String>,
    /// The service's `.proto` file (gRPC), compiled here.
    #[arg(long, requires = "target", conflicts_with = "protoset")]
    pub proto: Option<PathBuf>,
    /// The folders the `.proto` file's imports are found in.
    #[arg(short = 'i', long, requires = "proto", value_delimiter = ',')]
    pub import_paths: Vec<PathBuf>,
    /// A descriptor set of the service's types (gRPC) [default: the
    /// service's reflection].
    #[arg(long, requires = "target")]
    pub protoset: Option<PathBuf>,
    /// The `.thrift` file that declares the service; the `.thrift` files
    /// of its folder come with it, for its includes.
    #[arg(long, requires = "target")]
    pub idl: Option<PathBuf>,
    /// Any other client option of the protocol, `KEY=VALUE`; repeatable
    /// (docs/your-own-service.md lists them).
    #[arg(long = "option", value_name = "KEY=VALUE", requires = "target")]
    pub options: Vec<String>,
    /// The name the snapshot gives the service.
    #[arg(long, default_value = "target", requires = "target")]
    pub name: String,
    /// The version the snapshot records for it [default: unknown].
    #[arg(long, requires = "target")]
    pub service_version: Option<String>,
}

impl TargetArgs {
    /// The protocol module's name: a short name's generic protocol, or
    /// the name as given.
    fn protocol_name(&self) -> Result<ProtocolName> {
        let name = match self.protocol.as_str() {
            "grpc" => "grpc-generic",
            "dubbo" => "dubbo-generic",
            "thrift" if self.call.is_some() => "thrift-generic",
            other => other,
        };
        name.parse::<ProtocolName>()
            .map_err(|e| anyhow::anyhow!("--protocol: {e}"))
    }
}

/// The folder `args` describe, written under `root`'s
/// [`TARGETS_DIR`] (what was there before is replaced); paths in the
/// flags are relative to `invoked_from`. Returns the folder and the
/// server's name.
pub fn write_folder(
    root: &Path,
    invoked_from: &Path,
    args: &TargetArgs,
) -> Result<(PathBuf, String)> {
    let Some(target) = &args.target else {
        bail!("give the running service's address: --target HOST:PORT");
    };
    check_name(&args.name)?;
    let protocol = args.protocol_name()?;
    if protocol.call_option().is_some() && args.call.is_none() {
        bail!(
            "--protocol {} calls a method of your service: give it with --call (gRPC package.Service/Method, Dubbo interface/method, Thrift Service.method)",
            args.protocol
        );
    }
    let dir = root.join(TARGETS_DIR).join(&args.name);
    if dir.exists() {
        std::fs::remove_dir_all(&dir).with_context(|| format!("cannot clear {}", dir.display()))?;
    }
    std::fs::create_dir_all(&dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let mut options = toml::Table::new();
    let mut put = |key: &str, value: String| {
        options.insert(key.to_owned(), toml::Value::String(value));
    };
    if let Some(call) = &args.call {
        put("call", call.clone());
    }
    for (key, value) in [
        ("data", &args.data),
        ("expect", &args.expect),
        ("metadata", &args.metadata),
    ] {
        if let Some(value) = value {
            put(key, value.clone());
        }
    }
    let from = |p: &Path| invoked_from.join(p);
    for (key, file, name) in [
        ("data_file", &args.data_file, "request.json"),
        ("expect_file", &args.expect_file, "reply.json"),
        ("protoset", &args.protoset, "service.protoset"),
    ] {
        if let Some(file) = file {
            copy(&from(file), &dir.join(name), key)?;
            put(key, name.to_owned());
        }
    }
    if let Some(proto) = &args.proto {
        let imports: Vec<String> = args
            .import_paths
            .iter()
            .map(|p| from(p).display().to_string())
            .collect();
        let pool = rpclab_protocols::protocols::grpc_generic::proto_files::compile(
            &from(proto).display().to_string(),
            &imports,
        )
        .map_err(|e| anyhow::anyhow!(e))?;
        std::fs::write(dir.join("service.protoset"), pool.encode_to_vec())?;
        put("protoset", "service.protoset".to_owned());
    }
    if let Some(idl) = &args.idl {
        put("idl", copy_idl(&from(idl), &dir)?);
    }
    for option in &args.options {
        let Some((key, value)) = option.split_once('=') else {
            bail!("--option {option}: give KEY=VALUE");
        };
        if protocol.file_options().contains(&key) {
            let name = Path::new(value)
                .file_name()
                .with_context(|| format!("--option {option}: not a file"))?
                .to_string_lossy()
                .into_owned();
            copy(&from(Path::new(value)), &dir.join(&name), key)?;
            put(key, name);
        } else {
            put(key, value.to_owned());
        }
    }
    let manifest = manifest_text(&args.name, protocol, target, &args.service_version, options);
    std::fs::write(dir.join("server.toml"), manifest)?;
    Ok((dir, args.name.clone()))
}

/// A name for the folder and the snapshot's cells: letters, digits, `-`.
fn check_name(name: &str) -> Result<()> {
    let fine = !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
    if !fine {
        bail!("--name {name}: use letters, digits, `-` and `_` only");
    }
    Ok(())
}

/// `server.toml` of the service: what the lab reads of a folder.
fn manifest_text(
    name: &str,
    protocol: ProtocolName,
    target: &str,
    version: &Option<String>,
    options: toml::Table,
) -> String {
    let mut variant = toml::Table::new();
    variant.insert("name".into(), "service".into());
    variant.insert(
        "version".into(),
        version.clone().unwrap_or_else(|| "unknown".into()).into(),
    );
    let mut readiness = toml::Table::new();
    // A running service answers at once, or it is not the one asked for.
    readiness.insert("timeout_s".into(), toml::Value::Integer(10));
    let mut m = toml::Table::new();
    m.insert("name".into(), name.into());
    m.insert("framework".into(), name.into());
    m.insert("protocol".into(), protocol.as_str().into());
    m.insert("language".into(), "other".into());
    m.insert(
        "description".into(),
        format!("A service the lab did not start, at {target} (--target).").into(),
    );
    m.insert("target".into(), target.into());
    m.insert("client_options".into(), toml::Value::Table(options));
    m.insert("readiness".into(), toml::Value::Table(readiness));
    m.insert(
        "variant".into(),
        toml::Value::Array(vec![toml::Value::Table(variant)]),
    );
    format!(
        "# Written by `cargo xtask lab bench --target`: a service the lab did not start.\n{}",
        toml::to_string(&m).expect("a table serialises")
    )
}

/// Copies the file `from` (given as `--<key>`) to `to`.
fn copy(from: &Path, to: &Path, key: &str) -> Result<()> {
    std::fs::copy(from, to).map(drop).with_context(|| {
        format!(
            "--{} {}: cannot read it",
            key.replace('_', "-"),
            from.display()
        )
    })
}

/// Copies the `.thrift` files of `idl`'s folder and below (its includes
/// are read relative to it) into `dir/idl/`; returns `idl`'s path there.
fn copy_idl(idl: &Path, dir: &Path) -> Result<String> {
    if !idl.is_file() {
        bail!("--idl {}: no such file", idl.display());
    }
    let folder = idl.parent().unwrap_or(Path::new("."));
    let into = dir.join("idl");
    for path in files_under(folder, |p| has_extension(p, "thrift"))? {
        let relative = path.strip_prefix(folder).expect("under the folder");
        let to = into.join(relative);
        std::fs::create_dir_all(to.parent().expect("a file's folder"))?;
        std::fs::copy(&path, &to)?;
    }
    let name = idl.file_name().expect("a file").to_string_lossy();
    Ok(format!("idl/{name}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::definitions::manifest;

    fn scratch(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("rpclab-target-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    #[test]
    fn the_folder_is_one_the_lab_reads_as_a_target() {
        let root = scratch("root");
        let here = scratch("here");
        std::fs::write(here.join("req.json"), r#"{"sku": "a"}"#).unwrap();
        let args = TargetArgs {
            target: Some("127.0.0.1:50071".into()),
            protocol: "grpc".into(),
            call: Some("shop.v1.Inventory/Reserve".into()),
            data_file: Some("req.json".into()),
            metadata: Some(r#"{"tenant": "a"}"#.into()),
            name: "staging".into(),
            ..TargetArgs::default()
        };
        let (dir, name) = write_folder(&root, &here, &args).unwrap();
        assert_eq!(name, "staging");
        // Beside the lab's own servers, as a run reads it.
        let read = manifest::load_with(
            &crate::basics::host::repo_root(),
            std::slice::from_ref(&dir),
        )
        .unwrap();
        let m = read.iter().find(|m| m.name == "staging").unwrap();
        assert_eq!(m.target.as_deref(), Some("127.0.0.1:50071"));
        assert_eq!(m.port, 50071);
        let v = &m.variants[0];
        assert_eq!(v.version, "unknown");
        assert_eq!(m.call_of(v).as_deref(), Some("shop.v1.Inventory/Reserve"));
        let options = m.client_options_of(v);
        assert_eq!(options["data_file"], "request.json");
        assert_eq!(options["metadata"], r#"{"tenant": "a"}"#);
        assert!(dir.join("request.json").is_file());
    }

    #[test]
    fn mistakes_are_refused_before_anything_runs() {
        let root = scratch("refused");
        let with = |f: fn(&mut TargetArgs)| {
            let mut args = TargetArgs {
                target: Some("127.0.0.1:1".into()),
                protocol: "grpc".into(),
                call: Some("a.B/C".into()),
                name: "t".into(),
                ..TargetArgs::default()
            };
            f(&mut args);
            write_folder(&root, &root, &args)
                .map(drop)
                .unwrap_err()
                .to_string()
        };
        assert!(with(|a| a.name = "a/b".into()).contains("--name"));
        assert!(with(|a| a.protocol = "corba".into()).contains("--protocol"));
        assert!(with(|a| a.data_file = Some("missing.json".into())).contains("--data-file"));
        assert!(with(|a| a.options = vec!["call".into()]).contains("KEY=VALUE"));
        assert!(with(|a| a.proto = Some("missing.proto".into())).contains("missing.proto"));
        assert!(with(|a| a.call = None).contains("--call"));
    }
}
