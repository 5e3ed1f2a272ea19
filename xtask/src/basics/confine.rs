//! How every lab container is confined.
//!
//! The servers under test are Java deserialization endpoints (Hessian, Java
//! serialization, RMI, fastjson, Kryo: a family with a long history of
//! remote code execution) and they share the host's network. So no lab
//! container runs as it would by default: each runs as the unprivileged
//! `rpclab` user (created in `images/runtime`, hence in every image), with
//! every Linux capability dropped, `no-new-privileges`, a pids limit and a
//! memory limit, and a read-only root filesystem whose only writable places
//! are tmpfs mounts (`/tmp`, the home folder, and the work folders a server
//! declares). No container may mount the Docker socket.
//!
//! A [`Policy`] (the model's type, since the run's `manifest.toml` records
//! it as it was applied) is computed from a server's manifest (its
//! `jvm_flags` and its `[confinement]` table, see [`Confinement`], by
//! [`server`]) or fixed for the lab's own containers ([`registry`],
//! [`client`], [`echo`]); [`apply`] writes it into the container's create
//! body.

use anyhow::{bail, Context, Result};
use bollard::models::ContainerCreateBody;
use rpclab_model::manifest::Policy;
use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

/// What a server needs beyond the lab's confinement (`confine`: a non-root
/// user, every capability dropped, no-new-privileges, pids and memory
/// limits, a read-only root filesystem with tmpfs scratch), each departure
/// with its reason. Absent: the defaults, which every server meets unless it
/// is shown otherwise.
#[derive(Clone, Debug, Default, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Confinement {
    /// Linux capabilities added back after dropping all of them
    /// (`NET_BIND_SERVICE`, ...); needs `reason`.
    pub cap_add: Vec<String>,
    /// Why `cap_add` is needed.
    pub reason: Option<String>,
    /// Memory limit in JVM size syntax (`3G`, `2560m`); by default it is
    /// derived from `jvm_flags` (`-Xmx`, `-XX:MaxDirectMemorySize`).
    pub memory: Option<String>,
    /// Process (thread) limit, over the lab's default for servers.
    pub pids_limit: Option<u32>,
    /// Folders the server writes besides `/tmp` and its home folder, each
    /// mounted as a tmpfs (absolute paths).
    pub tmpfs: Vec<String>,
    /// Why the root filesystem cannot be read-only, when it cannot; the
    /// server then runs with a writable one.
    pub writable_rootfs: Option<String>,
}

/// The `rpclab` user's uid and gid, as `images/runtime/Dockerfile` creates it.
pub const UID: u32 = 10001;
pub const GID: u32 = 10001;
/// Its home folder (a tmpfs at run time).
pub const HOME: &str = "/home/rpclab";

const MIB: u64 = 1 << 20;
const GIB: u64 = 1 << 30;

/// Native memory a JVM needs beyond its heap and direct buffers: metaspace,
/// code cache, thread stacks, GC structures.
const JVM_NATIVE_HEADROOM: u64 = GIB;
/// Threads a server may have: thread-per-connection servers at the lab's
/// highest levels (200 connections) use a few hundred.
const SERVER_PIDS: u32 = 4096;
/// ZooKeeper's: 2 GiB, not less, so that its JVM still sees a "server class"
/// machine (1792 MiB or more) and picks G1 as it did unconfined, instead
/// of the serial collector.
const REGISTRY_MEMORY: u64 = 2 * GIB;
const REGISTRY_PIDS: u32 = 512;
const CLIENT_MEMORY: u64 = 2 * GIB;
const CLIENT_PIDS: u32 = 1024;

/// `/tmp` of a JVM container. `exec`: JVMs extract native libraries there
/// (Netty's epoll transport) and map them executable; with `noexec`, Netty
/// would fall back to its NIO transport and change what is measured.
const JVM_TMP: &str = "rw,exec,nosuid,nodev,size=512m";
/// `/tmp` of the client and echo containers (static binaries, no JIT).
const PLAIN_TMP: &str = "rw,noexec,nosuid,nodev,size=64m";

/// Every Linux capability name, as Docker takes them in `CapAdd`.
const CAPABILITIES: &[&str] = &[
    "AUDIT_CONTROL",
    "AUDIT_READ",
    "AUDIT_WRITE",
    "BLOCK_SUSPEND",
    "BPF",
    "CHECKPOINT_RESTORE",
    "CHOWN",
    "DAC_OVERRIDE",
    "DAC_READ_SEARCH",
    "FOWNER",
    "FSETID",
    "IPC_LOCK",
    "IPC_OWNER",
    "KILL",
    "LEASE",
    "LINUX_IMMUTABLE",
    "MAC_ADMIN",
    "MAC_OVERRIDE",
    "MKNOD",
    "NET_ADMIN",
    "NET_BIND_SERVICE",
    "NET_BROADCAST",
    "NET_RAW",
    "PERFMON",
    "SETFCAP",
    "SETGID",
    "SETPCAP",
    "SETUID",
    "SYSLOG",
    "SYS_ADMIN",
    "SYS_BOOT",
    "SYS_CHROOT",
    "SYS_MODULE",
    "SYS_NICE",
    "SYS_PACCT",
    "SYS_PTRACE",
    "SYS_RAWIO",
    "SYS_RESOURCE",
    "SYS_TIME",
    "SYS_TTY_CONFIG",
    "WAKE_ALARM",
];

/// The defaults every container starts from.
fn base(user: String, memory_bytes: u64, memory_basis: String, pids_limit: u32) -> Policy {
    Policy {
        user,
        cap_drop: vec!["ALL".into()],
        cap_add: Vec::new(),
        cap_add_reason: None,
        no_new_privileges: true,
        pids_limit,
        memory_bytes,
        memory_basis,
        read_only_rootfs: true,
        writable_rootfs_reason: None,
        tmpfs: BTreeMap::new(),
    }
}

/// A JVM container: `/tmp` (executable, see [`JVM_TMP`]) and the home
/// folder (Dubbo, SOFA-RPC and others write caches and logs under
/// `~`) on tmpfs.
fn jvm(memory_bytes: u64, memory_basis: String, pids_limit: u32) -> Policy {
    let mut p = base(rpclab_user(), memory_bytes, memory_basis, pids_limit);
    p.tmpfs.insert("/tmp".into(), JVM_TMP.into());
    p.tmpfs.insert(HOME.into(), owned_tmpfs("64m"));
    p
}

/// A server under test, from its manifest's `[confinement]` table and
/// JVM flags.
pub fn server(c: &Confinement, jvm_flags: &[String]) -> Result<Policy> {
    let (memory_bytes, memory_basis) = match &c.memory {
        Some(text) => {
            let bytes = parse_size(text)
                .with_context(|| format!("memory = \"{text}\" is not a size like 3G"))?;
            (bytes, format!("[confinement] memory = \"{text}\""))
        }
        None => jvm_memory(jvm_flags)?.with_context(|| {
            "no memory limit can be derived: give -Xmx in jvm_flags or \
             [confinement] memory = \"<size>\""
                .to_owned()
        })?,
    };
    let mut p = jvm(
        memory_bytes,
        memory_basis,
        c.pids_limit.unwrap_or(SERVER_PIDS),
    );
    if c.pids_limit == Some(0) {
        bail!("pids_limit = 0 would allow no process at all");
    }
    for cap in &c.cap_add {
        let name = cap.trim_start_matches("CAP_");
        if !CAPABILITIES.contains(&name) {
            bail!("cap_add names `{cap}`, which is not a Linux capability (e.g. NET_BIND_SERVICE)");
        }
        p.cap_add.push(name.to_owned());
    }
    if !p.cap_add.is_empty() {
        match c.reason.as_deref().map(str::trim) {
            Some(r) if !r.is_empty() => p.cap_add_reason = Some(r.to_owned()),
            _ => bail!("cap_add needs a reason = \"...\" saying why the server needs it"),
        }
    } else if c.reason.is_some() {
        bail!("reason explains cap_add, which is empty; remove it");
    }
    for dir in &c.tmpfs {
        if !dir.starts_with('/') || dir == "/" || dir.contains(',') || dir.contains(':') {
            bail!("tmpfs entry `{dir}` must be an absolute folder other than /");
        }
        if p.tmpfs.contains_key(dir) {
            bail!("tmpfs entry `{dir}` is mounted by default already");
        }
        p.tmpfs.insert(dir.clone(), owned_tmpfs("256m"));
    }
    if let Some(why) = &c.writable_rootfs {
        if why.trim().is_empty() {
            bail!("writable_rootfs must say why the root filesystem cannot be read-only");
        }
        p.read_only_rootfs = false;
        p.writable_rootfs_reason = Some(why.trim().to_owned());
    }
    Ok(p)
}

/// The ZooKeeper registry (`images/zookeeper`, `-Xmx256m`): fixed limits,
/// its data folder on tmpfs.
pub fn registry() -> Policy {
    let mut p = jvm(
        REGISTRY_MEMORY,
        "fixed for ZooKeeper (-Xmx256m in its image)".into(),
        REGISTRY_PIDS,
    );
    p.tmpfs
        .insert("/var/lib/zookeeper/data".into(), owned_tmpfs("256m"));
    p
}

/// The load client, which writes only to its bind-mounted cell folder.
/// It runs as the user running the lab, so what it writes there belongs
/// to that user, except when that is root: then as `rpclab`
/// ([`prepare_bind_dir`] hands it the folder).
pub fn client() -> Policy {
    let (uid, gid) = host_user();
    let user = if uid == 0 {
        rpclab_user()
    } else {
        format!("{uid}:{gid}")
    };
    let mut p = base(
        user,
        CLIENT_MEMORY,
        "fixed for the load client".into(),
        CLIENT_PIDS,
    );
    p.tmpfs.insert("/tmp".into(), PLAIN_TMP.into());
    p
}

/// `bench client`'s echo server (the client image, no mounts).
pub fn echo() -> Policy {
    let mut p = base(
        rpclab_user(),
        CLIENT_MEMORY,
        "fixed for the echo server".into(),
        CLIENT_PIDS,
    );
    p.tmpfs.insert("/tmp".into(), PLAIN_TMP.into());
    p
}

/// Writes `policy` into a container's create body. Refuses a body
/// that bind-mounts the Docker socket (or a folder holding it).
pub fn apply(policy: &Policy, body: &mut ContainerCreateBody) -> Result<()> {
    let hc = body.host_config.get_or_insert_with(Default::default);
    for bind in hc.binds.iter().flatten() {
        if exposes_docker_socket(bind) {
            bail!("refusing to start a container with `{bind}`: no lab container may reach the Docker socket");
        }
    }
    body.user = Some(policy.user.clone());
    hc.cap_drop = Some(policy.cap_drop.clone());
    hc.cap_add = (!policy.cap_add.is_empty()).then(|| policy.cap_add.clone());
    hc.security_opt = policy
        .no_new_privileges
        .then(|| vec!["no-new-privileges:true".to_owned()]);
    hc.pids_limit = Some(i64::from(policy.pids_limit));
    let memory = i64::try_from(policy.memory_bytes).context("memory limit out of range")?;
    hc.memory = Some(memory);
    // No swap on top of it.
    hc.memory_swap = Some(memory);
    hc.readonly_rootfs = Some(policy.read_only_rootfs);
    hc.tmpfs = (!policy.tmpfs.is_empty()).then(|| {
        policy
            .tmpfs
            .iter()
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect::<HashMap<_, _>>()
    });
    Ok(())
}
fn rpclab_user() -> String {
    format!("{UID}:{GID}")
}

/// A tmpfs the `rpclab` user owns (not world-writable), of `size`.
fn owned_tmpfs(size: &str) -> String {
    format!("rw,noexec,nosuid,nodev,size={size},uid={UID},gid={GID},mode=0750")
}

/// The effective uid and gid of this process (the owner of `/proc/self`).
fn host_user() -> (u32, u32) {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata("/proc/self")
        .map(|m| (m.uid(), m.gid()))
        .unwrap_or((0, 0))
}

/// Makes `dir` (to be bind-mounted into a container running as
/// [`client`]'s user) writable by that user: a no-op unless the lab
/// runs as root, when the folder is given to `rpclab`.
pub fn prepare_bind_dir(dir: &Path) -> Result<()> {
    if host_user().0 == 0 {
        std::os::unix::fs::chown(dir, Some(UID), Some(GID))
            .with_context(|| format!("cannot hand {} to uid {UID}", dir.display()))?;
    }
    Ok(())
}

/// The heap, direct memory and native headroom of a JVM run with `flags`
/// (the last occurrence of a flag wins, as in the JVM), or None without
/// `-Xmx`.
///
/// Direct buffers default to the heap size (the JVM's `MaxDirectMemorySize`
/// default, which Netty also sizes its pools from), so by default the limit
/// is twice the heap plus [`JVM_NATIVE_HEADROOM`].
fn jvm_memory(flags: &[String]) -> Result<Option<(u64, String)>> {
    let mut heap = None;
    let mut direct = None;
    for flag in flags {
        if let Some(v) = flag
            .strip_prefix("-Xmx")
            .or_else(|| flag.strip_prefix("-XX:MaxHeapSize="))
        {
            heap = Some((parse_size(v).with_context(|| format!("bad {flag}"))?, flag));
        } else if let Some(v) = flag.strip_prefix("-XX:MaxDirectMemorySize=") {
            direct = Some((parse_size(v).with_context(|| format!("bad {flag}"))?, flag));
        }
    }
    let Some((heap, heap_flag)) = heap else {
        return Ok(None);
    };
    let (direct, direct_basis) = match direct {
        Some((bytes, flag)) => (bytes, flag.clone()),
        None => (heap, "direct memory = heap (the JVM's default)".to_owned()),
    };
    let total = heap + direct + JVM_NATIVE_HEADROOM;
    Ok(Some((
        total,
        format!(
            "{heap_flag} + {direct_basis} + {} native (metaspace, code cache, threads, GC) = {}",
            human(JVM_NATIVE_HEADROOM),
            human(total)
        ),
    )))
}

/// Parses a size in the JVM's syntax: digits and an optional `k`, `m`, `g`
/// or `t` (either case; none: bytes).
pub fn parse_size(text: &str) -> Result<u64> {
    let text = text.trim();
    let (digits, unit) = match text.char_indices().last() {
        Some((i, c)) if c.is_ascii_alphabetic() => (&text[..i], c.to_ascii_lowercase()),
        _ => (text, 'b'),
    };
    let n: u64 = digits
        .parse()
        .with_context(|| format!("`{text}` is not a size (digits and k, m, g or t)"))?;
    let scale = match unit {
        'b' => 1,
        'k' => 1 << 10,
        'm' => MIB,
        'g' => GIB,
        't' => GIB << 10,
        _ => bail!("`{text}`: the unit must be k, m, g or t"),
    };
    let bytes = n
        .checked_mul(scale)
        .with_context(|| format!("`{text}` is too large"))?;
    if bytes == 0 {
        bail!("`{text}` is zero");
    }
    Ok(bytes)
}

/// `5 GiB`, `2560 MiB`: the largest unit that divides evenly.
fn human(bytes: u64) -> String {
    if bytes.is_multiple_of(GIB) {
        format!("{} GiB", bytes / GIB)
    } else if bytes.is_multiple_of(MIB) {
        format!("{} MiB", bytes / MIB)
    } else {
        format!("{bytes} B")
    }
}

/// Whether the bind `source:target[:options]` puts the Docker socket (or a
/// folder above it) in the container.
fn exposes_docker_socket(bind: &str) -> bool {
    let mut parts = bind.split(':');
    let source = PathBuf::from(parts.next().unwrap_or_default());
    let target = PathBuf::from(parts.next().unwrap_or_default());
    let is_named_socket = |p: &Path| p.file_name().is_some_and(|n| n == "docker.sock");
    if is_named_socket(&source) || is_named_socket(&target) {
        return true;
    }
    let mut sockets: Vec<PathBuf> = vec!["/var/run/docker.sock".into(), "/run/docker.sock".into()];
    if let Some(path) = std::env::var("DOCKER_HOST")
        .ok()
        .and_then(|h| h.strip_prefix("unix://").map(PathBuf::from))
    {
        sockets.push(path);
    }
    let source = source.canonicalize().unwrap_or(source);
    sockets.iter().any(|s| {
        let s = s.canonicalize().unwrap_or_else(|_| s.clone());
        s.starts_with(&source)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The two keys of a server manifest that its policy comes from (the
    /// manifest parser itself is tested in `manifest`, which imports this
    /// module, not the other way round).
    #[derive(serde::Deserialize)]
    #[serde(deny_unknown_fields)]
    struct Manifest {
        jvm_flags: Vec<String>,
        #[serde(default)]
        confinement: Confinement,
    }

    fn manifest(extra: &str, jvm_flags: &str) -> Result<Manifest> {
        Ok(toml::from_str(&format!(
            "jvm_flags = {jvm_flags}\n{extra}\n"
        ))?)
    }

    fn server(extra: &str, jvm_flags: &str) -> Result<Policy> {
        let m = manifest(extra, jvm_flags)?;
        super::server(&m.confinement, &m.jvm_flags)
    }

    /// The policy of a server with a 1 GiB heap and these `[confinement]` keys.
    fn confined(keys: &str) -> Result<Policy> {
        server(&format!("[confinement]\n{keys}"), r#"["-Xmx1g"]"#)
    }

    #[test]
    fn sizes_read_as_the_jvm_reads_them() {
        assert_eq!(parse_size("2G").unwrap(), 2 * GIB);
        assert_eq!(parse_size("2g").unwrap(), 2 * GIB);
        assert_eq!(parse_size("2560m").unwrap(), 2560 * MIB);
        assert_eq!(parse_size("512K").unwrap(), 512 << 10);
        assert_eq!(parse_size("1073741824").unwrap(), GIB);
        assert!(parse_size("2GB").is_err());
        assert!(parse_size("G").is_err());
        assert!(parse_size("0").is_err());
        assert!(parse_size("-1g").is_err());
    }

    #[test]
    fn a_2g_heap_gets_twice_the_heap_plus_native_headroom() {
        let p = server("", r#"["-Xms2G", "-Xmx2G"]"#).unwrap();
        assert_eq!(p.memory_bytes, 5 * GIB);
        assert!(p.memory_basis.starts_with("-Xmx2G"), "{}", p.memory_basis);
        assert!(p.memory_basis.ends_with("= 5 GiB"), "{}", p.memory_basis);
    }

    #[test]
    fn the_last_heap_flag_wins_and_direct_memory_counts_when_given() {
        let p = server(
            "",
            r#"["-Xmx4g", "-XX:MaxHeapSize=1g", "-XX:MaxDirectMemorySize=256m"]"#,
        )
        .unwrap();
        assert_eq!(p.memory_bytes, GIB + 256 * MIB + JVM_NATIVE_HEADROOM);
    }

    #[test]
    fn an_explicit_memory_key_overrides_the_jvm_flags() {
        let p = server("[confinement]\nmemory = \"3G\"", r#"["-Xmx2G"]"#).unwrap();
        assert_eq!(p.memory_bytes, 3 * GIB);
        assert_eq!(p.memory_basis, "[confinement] memory = \"3G\"");
    }

    #[test]
    fn no_heap_and_no_memory_key_is_an_error() {
        let err = server("", "[]").unwrap_err();
        assert!(format!("{err:#}").contains("-Xmx"), "{err:#}");
    }

    #[test]
    fn the_default_server_policy_is_fully_confined() {
        let p = server("", r#"["-Xmx2G"]"#).unwrap();
        assert_eq!(p.user, "10001:10001");
        assert_eq!(p.cap_drop, ["ALL"]);
        assert!(p.cap_add.is_empty());
        assert!(p.no_new_privileges);
        assert_eq!(p.pids_limit, SERVER_PIDS);
        assert!(p.read_only_rootfs);
        assert_eq!(
            p.tmpfs.keys().map(String::as_str).collect::<Vec<_>>(),
            ["/home/rpclab", "/tmp"]
        );
        assert!(p.tmpfs["/tmp"].contains("exec") && !p.tmpfs["/tmp"].contains("noexec"));
    }

    #[test]
    fn cap_add_needs_a_known_capability_and_a_reason() {
        let e = confined("cap_add = [\"NET_BIND_SERVICE\"]").unwrap_err();
        assert!(format!("{e:#}").contains("reason"), "{e:#}");
        let e = confined("cap_add = [\"NET_BIND_SERVIC\"]\nreason = \"port 80\"").unwrap_err();
        assert!(format!("{e:#}").contains("NET_BIND_SERVIC"), "{e:#}");
        let p = confined("cap_add = [\"CAP_NET_BIND_SERVICE\"]\nreason = \"port 80\"").unwrap();
        assert_eq!(p.cap_add, ["NET_BIND_SERVICE"]);
        assert_eq!(p.cap_add_reason.as_deref(), Some("port 80"));
        assert!(confined("reason = \"x\"").is_err());
    }

    #[test]
    fn declared_work_folders_become_owned_tmpfs_and_a_writable_root_needs_a_reason() {
        let p = confined("tmpfs = [\"/app/work\"]\npids_limit = 100").unwrap();
        assert!(p.tmpfs["/app/work"].contains("uid=10001"));
        assert_eq!(p.pids_limit, 100);
        assert!(confined("tmpfs = [\"work\"]").is_err());
        assert!(confined("tmpfs = [\"/tmp\"]").is_err());
        assert!(confined("writable_rootfs = \" \"").is_err());
        let p = confined("writable_rootfs = \"writes its install folder\"").unwrap();
        assert!(!p.read_only_rootfs);
        assert!(
            manifest("[confinement]\ncap_drop = [\"ALL\"]", r#"["-Xmx1g"]"#).is_err(),
            "unknown keys are errors"
        );
    }

    #[test]
    fn apply_sets_every_field_and_refuses_the_docker_socket() {
        let p = server("", r#"["-Xmx2G"]"#).unwrap();
        let mut body = ContainerCreateBody::default();
        apply(&p, &mut body).unwrap();
        let hc = body.host_config.as_ref().unwrap();
        assert_eq!(body.user.as_deref(), Some("10001:10001"));
        assert_eq!(hc.cap_drop.as_deref(), Some(&["ALL".to_owned()][..]));
        assert_eq!(hc.cap_add, None);
        assert_eq!(
            hc.security_opt.as_deref(),
            Some(&["no-new-privileges:true".to_owned()][..])
        );
        assert_eq!(hc.pids_limit, Some(4096));
        assert_eq!(hc.memory, Some(5 << 30));
        assert_eq!(hc.memory_swap, Some(5 << 30));
        assert_eq!(hc.readonly_rootfs, Some(true));
        assert_eq!(hc.tmpfs.as_ref().map(HashMap::len), Some(2));

        for bind in [
            "/var/run/docker.sock:/var/run/docker.sock",
            "/run:/host-run",
            "/:/host",
            "/somewhere/docker.sock:/s",
        ] {
            let mut body = ContainerCreateBody {
                host_config: Some(bollard::models::HostConfig {
                    binds: Some(vec![bind.to_owned()]),
                    ..Default::default()
                }),
                ..Default::default()
            };
            assert!(apply(&p, &mut body).is_err(), "{bind} was let through");
        }
        let mut body = ContainerCreateBody {
            host_config: Some(bollard::models::HostConfig {
                binds: Some(vec!["/tmp/rpclab-cell:/cell".to_owned()]),
                ..Default::default()
            }),
            ..Default::default()
        };
        apply(&p, &mut body).unwrap();
    }

    #[test]
    fn the_lab_containers_are_confined_too() {
        for p in [registry(), client(), echo()] {
            assert_ne!(p.user.split(':').next(), Some("0"));
            assert_eq!(p.cap_drop, ["ALL"]);
            assert!(p.no_new_privileges && p.read_only_rootfs);
            assert!(p.memory_bytes > 0 && p.pids_limit > 0);
            assert!(p.tmpfs.contains_key("/tmp"));
        }
        assert!(registry().tmpfs.contains_key("/var/lib/zookeeper/data"));
    }
}
