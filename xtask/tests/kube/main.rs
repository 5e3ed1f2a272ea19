//! The Kubernetes engine against a real cluster (`--test kube`): the
//! cluster of `KUBECONFIG`, else tools/k8s/up's
//! (`/var/lib/rpclab-k8s/kubeconfig`). With no cluster reachable each test
//! says so and passes without testing anything. No mock of the Kubernetes
//! API: the tests drive `cargo xtask lab kube-check` and read the cluster
//! back with kube-rs.
//!
//! On this machine: `export KUBECONFIG=$(tools/k8s/up)`,
//! `tools/k8s/load-image rpclab/client:latest rpclab/zookeeper:3.9`, then
//! `cargo test -p xtask --test kube -- --test-threads 1`; `tools/k8s/down`.
//! The image registry's test wants `tools/k8s/registry up` too (the
//! registry of `RPCLAB_TEST_IMAGE_REGISTRY`, else 127.0.0.1:5000): without
//! one answering it says SKIPPED.

#[path = "../common/mod.rs"]
mod common;

use k8s_openapi::api::core::v1::{Namespace, ServiceAccount};
use kube::api::{Api, DeleteParams, ListParams, PostParams};
use std::path::PathBuf;
use std::process::Output;

/// The cluster has one exclusive core: one test on it at a time.
static CLUSTER: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

/// The kubeconfig the tests use.
fn kubeconfig() -> PathBuf {
    std::env::var_os("KUBECONFIG")
        .map(PathBuf::from)
        .unwrap_or_else(|| "/var/lib/rpclab-k8s/kubeconfig".into())
}

/// A client of the cluster, and the test's turn on it ([`CLUSTER`]), or
/// None (and why, printed) when there is none.
async fn cluster() -> Option<(kube::Client, tokio::sync::MutexGuard<'static, ()>)> {
    let path = kubeconfig();
    let skip = |why: String| {
        eprintln!("SKIPPED: no Kubernetes cluster ({why}); start one with tools/k8s/up");
        None
    };
    let file = match kube::config::Kubeconfig::read_from(&path) {
        Ok(f) => f,
        Err(e) => return skip(format!("{}: {e}", path.display())),
    };
    let config = match kube::Config::from_custom_kubeconfig(file, &Default::default()).await {
        Ok(c) => c,
        Err(e) => return skip(e.to_string()),
    };
    let client = kube::Client::try_from(config).ok()?;
    match tokio::time::timeout(
        std::time::Duration::from_secs(5),
        client.apiserver_version(),
    )
    .await
    {
        Ok(Ok(_)) => Some((client, CLUSTER.lock().await)),
        Ok(Err(e)) => skip(e.to_string()),
        Err(_) => skip("no answer in 5 s".into()),
    }
}

fn kube_check(args: &[&str], kubeconfig: &std::path::Path) -> Output {
    let mut all = vec!["lab", "kube-check"];
    all.extend_from_slice(args);
    common::xtask_command(&all)
        .env("KUBECONFIG", kubeconfig)
        .output()
        .expect("xtask runs")
}

/// The lab namespaces of kube-check runs still on the cluster.
async fn check_namespaces(client: &kube::Client) -> Vec<String> {
    let api: Api<Namespace> = Api::all(client.clone());
    api.list(&ListParams::default().labels("io.rpclab.managed=true"))
        .await
        .expect("namespaces listed")
        .items
        .into_iter()
        .filter_map(|n| n.metadata.name)
        .filter(|n| n.starts_with("rpclab-kube-check-"))
        .collect()
}

/// The CPUs of a cpuset (`0-1,3`).
fn cpus(set: &str) -> Vec<u32> {
    set.split(',')
        .filter_map(|part| match part.split_once('-') {
            Some((a, b)) => Some((a.parse().ok()?..=b.parse().ok()?).collect::<Vec<u32>>()),
            None => Some(vec![part.parse().ok()?]),
        })
        .flatten()
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn pods_are_made_labelled_pinned_recorded_and_removed() {
    let Some((client, _one)) = cluster().await else {
        return;
    };
    let out = kube_check(&[], &kubeconfig());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "kube-check failed:\n{stderr}");
    let report: serde_json::Value =
        serde_json::from_slice(out.stdout.trim_ascii()).expect("one JSON line");
    // Every call verified: the probe inside the server's Pod.
    assert!(
        report["probe"]
            .as_str()
            .unwrap()
            .starts_with("ok: hello verified"),
        "{report}"
    );
    // Labelled as the Docker engine's containers, the owner's among them.
    let labels = &report["labels"];
    for key in [
        "io.rpclab.managed",
        "io.rpclab.run",
        "io.rpclab.role",
        "io.rpclab.owner.pid",
        "io.rpclab.owner.boot",
    ] {
        assert!(labels[key].is_string(), "no {key}: {labels}");
    }
    assert_eq!(labels["io.rpclab.role"], "server");
    // The server's Pod on a core of its own, recorded from inside it; every
    // other Pod on CPUs disjoint from it; every Pod's node, policy and
    // image digest recorded.
    let pods = report["pods"].as_array().unwrap();
    let server = pods
        .iter()
        .find(|p| p["role"] == "server")
        .expect("the server's record");
    assert_eq!(server["qos"], "Guaranteed", "{server}");
    let server_set = server["cpuset"].as_str().unwrap().to_owned();
    assert!(
        server_set.parse::<u32>().is_ok(),
        "one CPU, read inside the Pod: {server}"
    );
    for p in pods {
        assert!(!p["node"].as_str().unwrap().is_empty(), "{p}");
        assert_eq!(p["static_policy"], true, "{p}");
        assert!(p["image_id"].as_str().unwrap().contains("sha256:"), "{p}");
    }
    // The client ran while the server held its core: on the shared pool,
    // which no longer has that core.
    let client_pod = pods.iter().find(|p| p["role"] == "client").unwrap();
    assert_eq!(client_pod["qos"], "Burstable", "{client_pod}");
    let client_cpus = cpus(client_pod["cpuset"].as_str().unwrap());
    assert!(
        !client_cpus.is_empty() && !client_cpus.contains(&server_set.parse().unwrap()),
        "the client on the server's exclusive CPU: {client_pod}"
    );
    // A server calibration runs where the server runs: exclusive too.
    assert!(
        pods.iter()
            .any(|p| p["role"] == "calibration" && p["cpuset"] == server_set.as_str()),
        "{report}"
    );
    // The client runs as the lab's user, not root.
    assert!(
        report["client_uid"].as_str().unwrap().starts_with("10001"),
        "{report}"
    );
    // Removed: the namespace is gone, as the cluster says.
    assert_eq!(report["namespace_gone"], true);
    let namespace = report["namespace"].as_str().unwrap();
    let api: Api<Namespace> = Api::all(client.clone());
    assert!(
        api.get_opt(namespace).await.unwrap().is_none(),
        "{namespace} left"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn an_image_the_node_lacks_is_one_line_with_the_pods_event_and_nothing_is_left() {
    let Some((client, _one)) = cluster().await else {
        return;
    };
    let out = kube_check(&["--image", "rpclab/not-on-the-node:1"], &kubeconfig());
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    let line = stderr
        .lines()
        .find(|l| l.starts_with("error:"))
        .unwrap_or_default();
    assert!(
        line.contains("cannot start its image rpclab/not-on-the-node:1")
            && line.contains("ErrImageNeverPull")
            && line.contains("event:"),
        "{stderr}"
    );
    assert_eq!(check_namespaces(&client).await, Vec::<String>::new());
}

#[tokio::test(flavor = "multi_thread")]
async fn no_cluster_is_one_line_naming_the_kubeconfig() {
    let _one = CLUSTER.lock().await;
    let out = kube_check(&[], std::path::Path::new("/nonexistent/kubeconfig"));
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(
            "no Kubernetes cluster reachable with the kubeconfig /nonexistent/kubeconfig"
        ),
        "{stderr}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_user_without_permissions_is_told_the_verb_and_resource() {
    let Some((client, _one)) = cluster().await else {
        return;
    };
    // A service account with no role at all, in a namespace of the test's.
    let ns = format!("rpclab-kube-test-{}", std::process::id());
    let namespaces: Api<Namespace> = Api::all(client.clone());
    let mut namespace = Namespace::default();
    namespace.metadata.name = Some(ns.clone());
    namespaces
        .create(&PostParams::default(), &namespace)
        .await
        .unwrap();
    let accounts: Api<ServiceAccount> = Api::namespaced(client.clone(), &ns);
    let mut account = ServiceAccount::default();
    account.metadata.name = Some("nobody".into());
    let result = async {
        // The service account controller may not have made it yet: make it.
        accounts.create(&PostParams::default(), &account).await?;
        let request = k8s_openapi::api::authentication::v1::TokenRequest::default();
        let token = accounts
            .create_token_request("nobody", &PostParams::default(), &request)
            .await?
            .status
            .expect("a token")
            .token;
        anyhow::Ok(token)
    }
    .await;
    let token = match result {
        Ok(t) => t,
        Err(e) => {
            let _ = namespaces.delete(&ns, &DeleteParams::default()).await;
            panic!("cannot make a token: {e:#}");
        }
    };
    let admin = std::fs::read_to_string(kubeconfig()).unwrap();
    let file: serde_json::Value = {
        let parsed = kube::config::Kubeconfig::from_yaml(&admin).unwrap();
        serde_json::to_value(parsed).unwrap()
    };
    let cluster = &file["clusters"][0]["cluster"];
    let restricted = serde_json::json!({
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": "c", "cluster": cluster}],
        "users": [{"name": "nobody", "user": {"token": token}}],
        "contexts": [{"name": "c", "context": {"cluster": "c", "user": "nobody"}}],
        "current-context": "c",
    });
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("kubeconfig");
    std::fs::write(&path, serde_json::to_string(&restricted).unwrap()).unwrap();
    let out = kube_check(&[], &path);
    let _ = namespaces.delete(&ns, &DeleteParams::default()).await;
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("may not create namespaces (missing permissions: create namespaces,"),
        "{stderr}"
    );
    assert!(stderr.contains("create pods/exec"), "{stderr}");
}

/// `lab clean --engine kubernetes` leaves a live check's namespace alone
/// and says whose it is; once the check is killed, it removes it.
#[tokio::test(flavor = "multi_thread")]
async fn a_killed_check_leaves_a_namespace_that_lab_clean_removes() {
    let Some((client, _one)) = cluster().await else {
        return;
    };
    let mut child = common::xtask_command(&["lab", "kube-check"])
        .env("KUBECONFIG", kubeconfig())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    // Kill it once its namespace holds a Pod.
    let started = std::time::Instant::now();
    loop {
        if !check_namespaces(&client).await.is_empty() {
            break;
        }
        assert!(
            started.elapsed().as_secs() < 60,
            "kube-check made no namespace in 60 s"
        );
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    }
    tokio::time::sleep(std::time::Duration::from_secs(2)).await;
    // While it lives, its namespace stays, and the line names its pid.
    let live = common::xtask_command(&["lab", "clean", "--engine", "kubernetes"])
        .env("KUBECONFIG", kubeconfig())
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&live.stdout).into_owned();
    // A check lasts tens of seconds after its namespace appears (its Pods
    // start, a calibration, a probe); should it have ended already, there is
    // no live run to spare, and the rest still holds.
    let alive = child.try_wait().unwrap().is_none();
    eprintln!("lab clean ran beside a live check: {alive}");
    if alive {
        assert!(live.status.success(), "{said}");
        assert!(
            said.contains("left run ") && said.contains(&format!("kill {}", child.id())),
            "{said}"
        );
        assert!(!check_namespaces(&client).await.is_empty(), "{said}");
    }
    child.kill().unwrap();
    let _ = child.wait();
    let out = common::xtask_command(&["lab", "clean", "--engine", "kubernetes"])
        .env("KUBECONFIG", kubeconfig())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("lab namespace(s)"),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    assert_eq!(check_namespaces(&client).await, Vec::<String>::new());
    let pods: Api<k8s_openapi::api::core::v1::Pod> = Api::all(client.clone());
    let left = pods
        .list(&ListParams::default().labels("io.rpclab.managed=true"))
        .await
        .unwrap();
    assert!(left.items.is_empty(), "pods left: {}", left.items.len());
}

#[tokio::test(flavor = "multi_thread")]
async fn the_runs_registry_code_starts_zookeeper_as_a_pod() {
    let Some((client, _one)) = cluster().await else {
        return;
    };
    let out = kube_check(&["--with-registry"], &kubeconfig());
    let stderr = String::from_utf8_lossy(&out.stderr);
    if stderr.contains("cannot start its image rpclab/zookeeper:3.9") {
        eprintln!(
            "SKIPPED: rpclab/zookeeper:3.9 is not on the node (tools/k8s/load-image rpclab/zookeeper:3.9)"
        );
        return;
    }
    assert!(out.status.success(), "kube-check failed:\n{stderr}");
    assert!(stderr.contains("ZooKeeper ready after"), "{stderr}");
    let report: serde_json::Value =
        serde_json::from_slice(out.stdout.trim_ascii()).expect("one JSON line");
    let registry = report["pods"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["role"] == "registry")
        .expect("the registry's record");
    // On the shared pool beside the server, not on its core.
    assert_eq!(registry["qos"], "Burstable", "{registry}");
    let server = report["pods"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["role"] == "server")
        .unwrap();
    let server_cpu: u32 = server["cpuset"].as_str().unwrap().parse().unwrap();
    assert!(
        !cpus(registry["cpuset"].as_str().unwrap()).contains(&server_cpu),
        "{report}"
    );
    assert_eq!(check_namespaces(&client).await, Vec::<String>::new());
}

/// [`cluster`] and the address of the image registry the tests push to,
/// or None (and why, printed) when either is missing.
async fn cluster_and_image_registry(
) -> Option<(kube::Client, tokio::sync::MutexGuard<'static, ()>, String)> {
    let (client, one) = cluster().await?;
    let registry =
        std::env::var("RPCLAB_TEST_IMAGE_REGISTRY").unwrap_or_else(|_| "127.0.0.1:5000".into());
    if let Err(why) = registry_answers(&registry).await {
        eprintln!("SKIPPED: no image registry at {registry} ({why}); start one with tools/k8s/registry up");
        return None;
    }
    Some((client, one, registry))
}

/// Whether a registry answers `GET /v2/` at `address` (plain HTTP).
async fn registry_answers(address: &str) -> Result<(), String> {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let asked = async {
        let mut s = tokio::net::TcpStream::connect(address).await?;
        let request = format!("GET /v2/ HTTP/1.1\r\nHost: {address}\r\nConnection: close\r\n\r\n");
        s.write_all(request.as_bytes()).await?;
        let mut head = vec![0u8; 64];
        let n = s.read(&mut head).await?;
        Ok::<_, std::io::Error>(String::from_utf8_lossy(&head[..n]).into_owned())
    };
    match tokio::time::timeout(std::time::Duration::from_secs(5), asked).await {
        Ok(Ok(head)) if head.starts_with("HTTP/1.1 200") => Ok(()),
        Ok(Ok(head)) => Err(format!("it answered {:?}", head.lines().next())),
        Ok(Err(e)) => Err(e.to_string()),
        Err(_) => Err("no answer in 5 s".into()),
    }
}

/// `ctr` on the node's containerd (tools/k8s's: its pins and socket), in
/// the kubelet's namespace: its status and output.
fn node_ctr(args: &[&str]) -> (bool, String) {
    let script = r#". tools/k8s/lib.sh; [ -S "$CONTAINERD_SOCK" ] || { echo "no socket $CONTAINERD_SOCK"; exit 2; }
exec "$RPCLAB_K8S_BIN/ctr" --address "$CONTAINERD_SOCK" -n k8s.io "$@" 2>&1"#;
    let out = std::process::Command::new("bash")
        .arg("-c")
        .arg(script)
        .arg("_")
        .args(args)
        .current_dir(common::repo_root())
        .output()
        .expect("bash runs");
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
    )
}

#[tokio::test(flavor = "multi_thread")]
async fn pods_pull_the_images_pushed_to_the_image_registry_and_record_their_digest() {
    let Some((client, _one, registry)) = cluster_and_image_registry().await else {
        return;
    };
    // The node must not have it: the Pods' image comes from the registry.
    let reference = format!("{registry}/rpclab/client:latest");
    let (listed, out) = node_ctr(&["images", "ls", "-q"]);
    if !listed {
        eprintln!("SKIPPED: cannot reach the node's containerd as tools/k8s runs it: {out}");
        return;
    }
    if out.lines().any(|l| l == reference) {
        let (removed, out) = node_ctr(&["images", "rm", "--sync", &reference]);
        assert!(removed, "cannot remove {reference} from the node: {out}");
    }
    let out = kube_check(&["--image-registry", &registry], &kubeconfig());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "kube-check failed:\n{stderr}");
    let report: serde_json::Value =
        serde_json::from_slice(out.stdout.trim_ascii()).expect("one JSON line");
    assert_eq!(report["image_registry"], registry.as_str(), "{report}");
    let pushed = report["pushed"].as_array().unwrap();
    let client_image = pushed
        .iter()
        .find(|p| p["image"] == "rpclab/client:latest")
        .unwrap_or_else(|| panic!("rpclab/client:latest not pushed: {report}"));
    assert_eq!(client_image["reference"], reference.as_str());
    let digest = client_image["digest"].as_str().unwrap();
    assert!(digest.starts_with("sha256:"), "{client_image}");
    assert!(
        stderr.contains(&format!(
            "pushed rpclab/client:latest as {reference} ({digest})"
        )),
        "{stderr}"
    );
    // Every Pod named the registry's reference, pulled it IfNotPresent, and
    // ran the digest the push gave, as the cluster reports it.
    let pods = report["pods"].as_array().unwrap();
    assert!(!pods.is_empty(), "{report}");
    for p in pods {
        assert_eq!(p["image"], reference.as_str(), "{p}");
        assert_eq!(p["pull"], "IfNotPresent", "{p}");
        assert_eq!(p["pushed_digest"], digest, "{p}");
        assert_eq!(
            p["image_id"].as_str().unwrap(),
            format!("{registry}/rpclab/client@{digest}"),
            "{p}"
        );
    }
    // Pulled from the registry: the node has the reference again, at that digest.
    let (ok, out) = node_ctr(&["images", "ls", &format!("name=={reference}")]);
    assert!(ok && out.contains(digest), "{out}");
    assert_eq!(check_namespaces(&client).await, Vec::<String>::new());
}

#[tokio::test(flavor = "multi_thread")]
async fn an_image_registry_that_does_not_answer_is_one_line_before_anything_starts() {
    let one = CLUSTER.lock().await;
    // Port 1 on the loopback: nothing listens there.
    let out = kube_check(&["--image-registry", "127.0.0.1:1"], &kubeconfig());
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    let errors: Vec<&str> = stderr.lines().filter(|l| l.starts_with("error:")).collect();
    assert_eq!(errors.len(), 1, "{stderr}");
    assert!(
        errors[0].starts_with(
            "error: the image registry 127.0.0.1:1 does not answer GET http://127.0.0.1:1/v2/: "
        ) && errors[0].contains("refused"),
        "{stderr}"
    );
    // Before anything: not even the cluster was asked.
    assert!(!stderr.contains("Kubernetes v"), "{stderr}");
    drop(one);
    if let Some((client, _one)) = cluster().await {
        assert_eq!(check_namespaces(&client).await, Vec::<String>::new());
    }
}

/// A registry that refuses every push: tools/k8s/registry's binary,
/// read-only, on a free loopback port with an empty storage folder of its
/// own; killed when dropped.
struct ReadOnlyRegistry {
    child: std::process::Child,
    address: String,
    _storage: tempfile::TempDir,
}

impl ReadOnlyRegistry {
    /// None (and why) where tools/k8s/registry has not built it.
    fn start() -> Option<ReadOnlyRegistry> {
        let out = std::process::Command::new("bash")
            .args(["-c", ". tools/k8s/lib.sh; echo \"$REGISTRY_BIN\""])
            .current_dir(common::repo_root())
            .output()
            .expect("bash runs");
        let bin = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
        if !bin.is_file() {
            eprintln!(
                "SKIPPED: no registry binary at {} (tools/k8s/registry up builds it)",
                bin.display()
            );
            return None;
        }
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .expect("a free port")
            .port();
        let address = format!("127.0.0.1:{port}");
        let storage = tempfile::tempdir().unwrap();
        let config = storage.path().join("config.yml");
        std::fs::write(
            &config,
            format!(
                "version: 0.1\nlog: {{level: error}}\nstorage:\n  filesystem: {{rootdirectory: {}}}\n  maintenance:\n    readonly: {{enabled: true}}\nhttp: {{addr: {address}}}\n",
                storage.path().join("data").display()
            ),
        )
        .unwrap();
        let child = std::process::Command::new(bin)
            .arg("serve")
            .arg(&config)
            .env("OTEL_TRACES_EXPORTER", "none")
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("the registry starts");
        Some(ReadOnlyRegistry {
            child,
            address,
            _storage: storage,
        })
    }
}

impl Drop for ReadOnlyRegistry {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_push_the_registry_refuses_is_one_line_naming_the_image_and_what_it_said() {
    let Some((client, _one)) = cluster().await else {
        return;
    };
    let Some(registry) = ReadOnlyRegistry::start() else {
        return;
    };
    let started = std::time::Instant::now();
    while registry_answers(&registry.address).await.is_err() {
        assert!(
            started.elapsed().as_secs() < 30,
            "the read-only registry does not answer"
        );
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    let out = kube_check(&["--image-registry", &registry.address], &kubeconfig());
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    let errors: Vec<&str> = stderr.lines().filter(|l| l.starts_with("error:")).collect();
    assert_eq!(errors.len(), 1, "{stderr}");
    let expected = format!(
        "error: the image registry {0} refused rpclab/client:latest (pushed as {0}/rpclab/client:latest): ",
        registry.address
    );
    assert!(
        errors[0].starts_with(&expected) && errors[0].contains("Method not allowed"),
        "{stderr}"
    );
    // Refused before any Pod: no namespace made.
    assert_eq!(check_namespaces(&client).await, Vec::<String>::new());
}

/// `lab run --engine kubernetes` of thrift-java at the smoke profile: the
/// run's own code, its cells as Pods (the client calling the server's Pod
/// IP), writes a complete snapshot with every call verified and every Pod
/// in its manifest, and leaves no namespace. It builds on this machine's
/// Docker engine (its images found by hash) and loads them into the node.
#[tokio::test(flavor = "multi_thread")]
async fn a_smoke_run_on_the_cluster_writes_a_snapshot_with_its_pods() {
    let Some((client, _one)) = cluster().await else {
        return;
    };
    let (results, manifest) = smoke_run_on_the_cluster(&["--only", "thrift-java"]);
    for cell in results["cells"].as_array().unwrap() {
        assert!(cell["server_cost"].is_object(), "the server's cost: {cell}");
    }
    // Its Pods in the manifest: the server's Guaranteed on a core of its
    // own, read inside it, on a node with the static policy, its image's
    // digest the Docker image the run built; the client on the Pod network.
    let servers: Vec<_> = manifest
        .pods
        .iter()
        .filter(|p| p.role == "server")
        .collect();
    assert_eq!(servers.len(), 3, "one Pod a variant: {:?}", manifest.pods);
    for server in &servers {
        assert_eq!(server.qos, "Guaranteed", "{server:?}");
        assert!(server.cpuset.parse::<u32>().is_ok(), "{server:?}");
        assert!(server.static_policy, "{server:?}");
        assert!(!server.node.is_empty(), "{server:?}");
        let built = manifest
            .images
            .get(&server.image)
            .expect("the server image built");
        // A config digest is the Docker image id; an image the node also
        // knows from a registry is named by its manifest's digest there.
        if server.image_id.starts_with("sha256:") {
            assert_eq!(&server.image_id, built, "{server:?}");
        } else {
            assert!(server.image_id.contains("@sha256:"), "{server:?}");
        }
        assert!(server.ip.starts_with("10."), "{server:?}");
    }
    assert!(manifest.pods.iter().any(|p| p.role == "client"));
    let network = manifest.network.clone().unwrap_or_default();
    assert!(network.starts_with("pods:"), "{network}");
    // The node described from its status.
    assert!(
        manifest.hosts[0].docker_version.contains("kubelet"),
        "{:?}",
        manifest.hosts
    );
    // No namespace of the run is left.
    let api: Api<Namespace> = Api::all(client.clone());
    let left = api
        .list(&ListParams::default().labels(&format!("io.rpclab.run={}", manifest.run_id)))
        .await
        .unwrap()
        .items;
    assert!(left.is_empty(), "the run's namespace is left");
}

/// `lab run --engine kubernetes ... --profile smoke` with `args`, which
/// must succeed and write a complete snapshot whose every cell verified its
/// calls and failed none: the snapshot's results.json and manifest.
fn smoke_run_on_the_cluster(
    args: &[&str],
) -> (serde_json::Value, rpclab_model::manifest::RunManifest) {
    let dir = tempfile::tempdir().unwrap();
    let mut command = vec!["lab", "run", "--engine", "kubernetes"];
    command.extend_from_slice(args);
    command.extend_from_slice(&["--profile", "smoke", "--results-dir"]);
    command.push(dir.path().to_str().unwrap());
    let out = common::xtask_command(&command)
        .env("KUBECONFIG", kubeconfig())
        .output()
        .expect("xtask runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "the run failed:\n{stderr}");
    // The one snapshot the run wrote.
    let snapshot = std::fs::read_dir(dir.path())
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .find(|p| p.join("results.json").is_file())
        .expect("a snapshot");
    let results: serde_json::Value =
        serde_json::from_slice(&std::fs::read(snapshot.join("results.json")).unwrap()).unwrap();
    assert_eq!(results["complete"], true, "{stderr}");
    let cells = results["cells"].as_array().unwrap();
    assert!(!cells.is_empty());
    for cell in cells {
        assert!(cell["calls_ok"].as_u64().unwrap() > 0, "{cell}");
        assert_eq!(cell["calls_failed"], 0, "{cell}");
    }
    let manifest =
        toml::from_str(&std::fs::read_to_string(snapshot.join("manifest.toml")).unwrap()).unwrap();
    (results, manifest)
}

/// `lab run --image-registry` names the registry a cluster pulls the run's
/// images from: without `--engine kubernetes` it is one line, and so is a
/// registry that does not answer, before the cluster is asked.
#[test]
fn lab_run_s_image_registry_is_refused_without_a_cluster_engine_or_an_answer() {
    let run = |extra: &[&str]| {
        let mut args = vec!["lab", "run", "--only", "thrift-java", "--profile", "smoke"];
        args.extend_from_slice(extra);
        let out = common::xtask_command(&args)
            .env("KUBECONFIG", kubeconfig())
            .output()
            .expect("xtask runs");
        assert!(!out.status.success());
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        let errors: Vec<String> = stderr
            .lines()
            .filter(|l| l.starts_with("error:"))
            .map(str::to_owned)
            .collect();
        assert_eq!(errors.len(), 1, "{stderr}");
        (errors[0].clone(), stderr)
    };
    let (error, _) = run(&["--image-registry", "127.0.0.1:5000"]);
    assert!(
        error.contains("give it with --engine kubernetes"),
        "{error}"
    );
    let (error, stderr) = run(&["--engine", "kubernetes", "--image-registry", "127.0.0.1:1"]);
    assert!(
        error.starts_with("error: the image registry 127.0.0.1:1 does not answer GET"),
        "{error}"
    );
    assert!(!stderr.contains("Kubernetes v"), "{stderr}");
}

/// `lab run --engine kubernetes --image-registry`: the run's images pushed
/// there, its Pods naming them there (`IfNotPresent`), each Pod's record
/// the pushed digest as the node ran it; every call verified.
#[tokio::test(flavor = "multi_thread")]
async fn a_run_with_an_image_registry_pulls_its_pods_images_from_it() {
    let Some((_client, _one, registry)) = cluster_and_image_registry().await else {
        return;
    };
    let (_, manifest) = smoke_run_on_the_cluster(&[
        "--image-registry",
        &registry,
        "--only",
        "thrift-java",
        "--variant",
        "0.20",
    ]);
    assert!(manifest.pods.iter().any(|p| p.role == "server"));
    for pod in &manifest.pods {
        assert!(
            pod.image.starts_with(&format!("{registry}/rpclab/")),
            "{pod:?}"
        );
        assert_eq!(pod.pull, "IfNotPresent", "{pod:?}");
        let digest = pod.pushed_digest.as_deref().expect("the pushed digest");
        // A Pod that ended before its record (a calibration) may have none.
        if pod.role == "server" || !pod.image_id.is_empty() {
            assert!(
                pod.image_id.ends_with(digest),
                "the Pod ran the pushed image: {pod:?}"
            );
        }
    }
}

/// The lab's objects of `kind` on the cluster that a process `pid` made
/// (its owner label), by name.
async fn made_by<K>(client: &kube::Client, pid: u32, more: &str) -> Vec<String>
where
    K: kube::Resource<Scope = k8s_openapi::ClusterResourceScope>
        + Clone
        + serde::de::DeserializeOwned
        + std::fmt::Debug,
    K::DynamicType: Default,
{
    let api: Api<K> = Api::all(client.clone());
    api.list(&ListParams::default().labels(&format!("io.rpclab.owner.pid={pid}{more}")))
        .await
        .expect("listed")
        .items
        .into_iter()
        .filter_map(|o| o.meta().name.clone())
        .collect()
}

/// The lab's Pods a process `pid` made (with `more` labels, `,k=v`).
async fn pods_made_by(client: &kube::Client, pid: u32, more: &str) -> Vec<String> {
    let api: Api<k8s_openapi::api::core::v1::Pod> = Api::all(client.clone());
    api.list(&ListParams::default().labels(&format!("io.rpclab.owner.pid={pid}{more}")))
        .await
        .expect("pods listed")
        .items
        .into_iter()
        .filter_map(|p| p.metadata.name)
        .collect()
}

/// A run on the cluster killed (SIGKILL) while its server Pod runs leaves
/// its namespace; its `--resume` removes it, Pods and all, says so, and
/// completes the snapshot, every planned cell once.
#[tokio::test(flavor = "multi_thread")]
async fn a_killed_run_leaves_nothing_and_resumes_to_every_cell_once() {
    let Some((client, _one)) = cluster().await else {
        return;
    };
    let results = tempfile::tempdir().unwrap();
    let dir = results.path().to_str().unwrap().to_owned();
    // Four cells of at least a second each (two levels, two
    // repetitions): the run is killed once the first is written, with the
    // others still to measure and its server Pod running.
    let args = [
        "lab",
        "run",
        "--engine",
        "kubernetes",
        "--only",
        "thrift-java",
        "--variant",
        "thrift-java/0.20",
        "--profile",
        "smoke",
        "--duration",
        "1s",
        "--repetitions",
        "2",
        "--levels",
        "1,2",
    ];
    let mut first = common::xtask_command(&[&args[..], &["--results-dir", &dir]].concat())
        .env("KUBECONFIG", kubeconfig())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("xtask starts");
    let pid = first.id();
    let started = std::time::Instant::now();
    while common::lab::cells_so_far(results.path()).is_empty() {
        assert!(
            started.elapsed() < std::time::Duration::from_secs(600),
            "no cell in 600 s"
        );
        assert!(first.try_wait().unwrap().is_none(), "the run ended first");
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    }
    assert!(
        !pods_made_by(&client, pid, ",io.rpclab.role=server")
            .await
            .is_empty(),
        "the server Pod runs when the run is killed"
    );
    first.kill().unwrap();
    first.wait().unwrap();
    assert!(
        !made_by::<Namespace>(&client, pid, "").await.is_empty(),
        "a killed run leaves its namespace"
    );
    // The next run is the killed one's `--resume`, on the cluster: it
    // removes what the killed run left, then measures every planned cell
    // the snapshot lacks, exactly once.
    let snap = common::only_snapshot(results.path());
    let out = common::xtask_command(&[&args[..], &["--resume", snap.to_str().unwrap()]].concat())
        .env("KUBECONFIG", kubeconfig())
        .output()
        .expect("xtask runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "the resumed run failed:\n{stderr}");
    assert!(stderr.contains("is no longer running"), "{stderr}");
    let results_json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(snap.join("results.json")).unwrap()).unwrap();
    assert_eq!(results_json["complete"], true, "{stderr}");
    let cells = results_json["cells"].as_array().unwrap();
    assert!(!cells.is_empty(), "{stderr}");
    let ids: std::collections::BTreeSet<_> = cells.iter().map(common::lab::cell_id).collect();
    assert_eq!(ids.len(), cells.len(), "a cell measured twice: {stderr}");
    for c in cells {
        common::lab::check_cell_consistency("thrift-java", c);
    }
    let manifest = std::fs::read_to_string(snap.join("manifest.toml")).unwrap();
    assert!(manifest.contains("resumed_utc"), "{manifest}");
    assert_eq!(
        made_by::<Namespace>(&client, pid, "").await,
        Vec::<String>::new()
    );
    assert_eq!(pods_made_by(&client, pid, "").await, Vec::<String>::new());
}
