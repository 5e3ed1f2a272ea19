//! Everything rpclab asks of the Docker engine, over its API (`bollard`).
//!
//! The lab never shells out to the `docker` CLI: the API gives typed errors,
//! works with any engine the environment points at (`DOCKER_HOST`), and lets
//! the lab label, follow and clean up exactly what it created.
//!
//! Every container and image the lab creates carries [`LABEL_MANAGED`], so
//! `lab clean` (and the clean-up on error or Ctrl-C) can find them all, even
//! those of a run that was killed.

use crate::definitions::hosts::Endpoint;
use crate::engine::containers::{run_labels, Containers};
pub use crate::engine::containers::{
    ContainerRole, ContainerSpec, LabContainer, Network, LABEL_MANAGED, LABEL_RUN,
};
use anyhow::{anyhow, bail, Context, Result};
use bollard::models::{ContainerCreateBody, HostConfig};
use bollard::query_parameters::{
    BuildImageOptionsBuilder, CreateContainerOptionsBuilder, CreateImageOptionsBuilder,
    ListContainersOptionsBuilder, ListImagesOptionsBuilder, LogsOptionsBuilder,
    RemoveContainerOptionsBuilder, RemoveImageOptionsBuilder,
};
use bollard::{body_full, Docker};
use futures_util::StreamExt;
use std::collections::HashMap;
use std::path::Path;
use std::sync::{Arc, Mutex};

/// Label on images: hash of every input of the build.
pub const LABEL_INPUT_HASH: &str = "io.rpclab.input-hash";

/// A connection to the Docker engine.
#[derive(Clone)]
pub struct Engine {
    docker: Docker,
    pub version: String,
    /// Where it answers, as the user wrote it (or the environment's default).
    pub endpoint: Endpoint,
    /// The engine's id (`docker info`'s `ID`). Two engines on one machine
    /// may share it (it comes from `/etc/docker/key.json`, not from the data
    /// root), so an engine is known by [`Engine::identity`].
    pub engine_id: String,
    /// The machine's name as the engine reports it.
    pub hostname: String,
    /// Where the engine keeps its images and containers (`DockerRootDir`).
    pub data_root: String,
    /// The folder of the TLS files a `tcp://` endpoint was connected with.
    tls_cert_path: Option<std::path::PathBuf>,
    /// Image tag → the id this process built or verified for it on this
    /// engine (the image builder pins what it builds; [`Engine::start`]
    /// runs the pinned id, since tags are shared by everything on the
    /// engine). Shared by the clones of this connection; every engine of a
    /// multi-host run has images, and so pins, of its own.
    pins: Arc<Mutex<HashMap<String, String>>>,
}

impl Engine {
    /// Connects to the local engine (or `DOCKER_HOST`) and checks it answers.
    pub async fn connect() -> Result<Engine> {
        Engine::connect_to(&Endpoint::Default, None).await
    }

    /// Connects to `endpoint` and checks it answers; `tls_cert_path` is the
    /// folder of `ca.pem`, `cert.pem` and `key.pem` for a `tcp://` endpoint
    /// (else `DOCKER_CERT_PATH`). The error is one line naming the endpoint.
    pub async fn connect_to(endpoint: &Endpoint, tls_cert_path: Option<&Path>) -> Result<Engine> {
        let unreachable = |detail: String| -> anyhow::Error {
            if *endpoint == Endpoint::Default {
                no_daemon(&detail)
            } else {
                // One line, whatever the transport's message spans.
                let detail = detail.split_whitespace().collect::<Vec<_>>().join(" ");
                anyhow!("cannot reach the Docker engine at {endpoint}: {detail}")
            }
        };
        let docker = client(endpoint, tls_cert_path).map_err(unreachable)?;
        // A quick first answer: an engine that does not answer in 10 s is
        // reported, not waited for as long as a build may take.
        let first = tokio::time::timeout(
            std::time::Duration::from_secs(10),
            docker.negotiate_version(),
        )
        .await
        .map_err(|_| unreachable("no answer in 10 s".into()))?;
        let docker = first.map_err(|e| unreachable(e.to_string()))?;
        let version = docker
            .version()
            .await
            .map_err(|e| unreachable(e.to_string()))?;
        let info = docker
            .info()
            .await
            .map_err(|e| unreachable(e.to_string()))?;
        Ok(Engine {
            docker,
            version: version.version.unwrap_or_else(|| "unknown".into()),
            endpoint: endpoint.clone(),
            engine_id: info.id.unwrap_or_default(),
            hostname: info.name.unwrap_or_default(),
            data_root: info.docker_root_dir.unwrap_or_default(),
            tls_cert_path: tls_cert_path.map(Path::to_owned),
            pins: Arc::default(),
        })
    }

    /// Whether the engine answers a ping within `within`, asked on a fresh
    /// connection: an engine that is stopping no longer accepts new
    /// connections but may still answer on those this process holds, so
    /// only a new one tells whether it is there ([`crate::engine::outage`]).
    /// Any answer counts, an API error too (the fresh client has not
    /// negotiated its API version, and an older engine refuses it with
    /// 400): only a transport error, a connection refused, a socket that
    /// is gone or no answer in time, means that it does not answer.
    pub async fn answers(&self, within: std::time::Duration) -> bool {
        let Ok(docker) = client(&self.endpoint, self.tls_cert_path.as_deref()) else {
            return false;
        };
        match tokio::time::timeout(within, docker.ping()).await {
            Ok(Ok(_)) => true,
            Ok(Err(e)) => is_an_answer(&e),
            Err(_) => false,
        }
    }

    /// An engine value for tests of what is done with engines: it is never
    /// asked anything (its client points at a closed loopback port). Test
    /// engines share id and machine, as two engines of one machine do, and
    /// differ by data root.
    #[cfg(test)]
    pub fn unconnected(data_root: &str, endpoint: Endpoint) -> Engine {
        Engine {
            docker: Docker::connect_with_http("tcp://127.0.0.1:9", 1, bollard::API_DEFAULT_VERSION)
                .expect("an HTTP client"),
            version: "test".into(),
            endpoint,
            engine_id: "SHARED:ID".into(),
            hostname: "this-machine".into(),
            data_root: format!("/var/lib/{data_root}"),
            tls_cert_path: None,
            pins: Arc::default(),
        }
    }

    /// What tells this engine from any other: its id, machine and data
    /// root together (two engines of one machine share the first two).
    pub fn identity(&self) -> String {
        format!("{} {} {}", self.engine_id, self.hostname, self.data_root)
    }

    /// Same engine, whatever the endpoint spelling.
    pub fn same_engine(&self, other: &Engine) -> bool {
        self.identity() == other.identity()
    }

    /// Pins `tag` on this engine to `id` (see [`Engine::pinned`]).
    pub fn pin(&self, tag: &str, id: &str) {
        let mut pins = self.pins.lock().unwrap_or_else(|e| e.into_inner());
        pins.insert(tag.to_owned(), id.to_owned());
    }

    /// The id this process built or verified for `image` on this engine,
    /// or `image` itself when it did neither.
    pub fn pinned(&self, image: &str) -> String {
        let pins = self.pins.lock().unwrap_or_else(|e| e.into_inner());
        pins.get(image).cloned().unwrap_or_else(|| image.to_owned())
    }

    /// This connection, sharing the pins of `other`, another connection
    /// to the same engine ([`Engine::same_engine`]).
    pub fn sharing_pins_of(self, other: &Engine) -> Engine {
        Engine {
            pins: other.pins.clone(),
            ..self
        }
    }

    pub fn api(&self) -> &Docker {
        &self.docker
    }

    /// The id of `image`, or None when the engine does not have it.
    pub async fn image_id(&self, image: &str) -> Result<Option<String>> {
        match self.docker.inspect_image(image).await {
            Ok(i) => Ok(i.id),
            Err(bollard::errors::Error::DockerResponseServerError {
                status_code: 404, ..
            }) => Ok(None),
            Err(e) => Err(e).with_context(|| format!("cannot inspect image {image}")),
        }
    }

    /// The value of `label` on `image`, if both exist.
    pub async fn image_label(&self, image: &str, label: &str) -> Result<Option<String>> {
        match self.docker.inspect_image(image).await {
            Ok(i) => Ok(i
                .config
                .and_then(|c| c.labels)
                .and_then(|mut l| l.remove(label))),
            Err(bollard::errors::Error::DockerResponseServerError {
                status_code: 404, ..
            }) => Ok(None),
            Err(e) => Err(e).with_context(|| format!("cannot inspect image {image}")),
        }
    }

    /// Tries to pull `image`; false when no registry is reachable.
    pub async fn try_pull(&self, image: &str) -> bool {
        let (repo, tag) = image.rsplit_once(':').unwrap_or((image, "latest"));
        let opts = CreateImageOptionsBuilder::default()
            .from_image(repo)
            .tag(tag)
            .build();
        let mut stream = self.docker.create_image(Some(opts), None, None);
        while let Some(item) = stream.next().await {
            if item.is_err() {
                return false;
            }
        }
        self.image_id(image).await.ok().flatten().is_some()
    }

    /// Imports a root filesystem tarball as `repo:tag` (what `docker import` does).
    pub async fn import_rootfs(&self, tarball: Vec<u8>, repo: &str, tag: &str) -> Result<()> {
        let opts = CreateImageOptionsBuilder::default()
            .from_src("-")
            .repo(repo)
            .tag(tag)
            .changes(vec![format!("LABEL {LABEL_MANAGED}=true")])
            .build();
        let mut stream =
            self.docker
                .create_image(Some(opts), Some(body_full(tarball.into())), None);
        while let Some(item) = stream.next().await {
            item.with_context(|| format!("importing the root filesystem as {repo}:{tag} failed"))?;
        }
        Ok(())
    }

    /// Builds `tag` from a tar build context. Build output goes to `log`;
    /// on failure the error carries the last lines of it.
    pub async fn build(
        &self,
        tag: &str,
        dockerfile: &str,
        context_tar: Vec<u8>,
        build_args: &HashMap<String, String>,
        labels: &HashMap<String, String>,
        log: &mut dyn FnMut(&str),
    ) -> Result<()> {
        let opts = BuildImageOptionsBuilder::default()
            .dockerfile(dockerfile)
            .t(tag)
            .rm(true)
            .forcerm(true)
            .networkmode("host")
            .buildargs(build_args)
            .labels(labels)
            .build();
        let mut stream = self
            .docker
            .build_image(opts, None, Some(body_full(context_tar.into())));
        let mut tail: Vec<String> = Vec::new();
        while let Some(item) = stream.next().await {
            let info = match item {
                Ok(info) => info,
                Err(bollard::errors::Error::DockerStreamError { error }) => {
                    bail!(
                        "building {tag} failed: {error}\n--- last build output ---\n{}",
                        tail.join("")
                    )
                }
                Err(e) => return Err(anyhow!(e).context(format!("building {tag} failed"))),
            };
            if let Some(line) = info.stream {
                log(&line);
                tail.push(line);
                if tail.len() > 40 {
                    tail.remove(0);
                }
            }
            if let Some(err) = info.error {
                bail!(
                    "building {tag} failed: {err}\n--- last build output ---\n{}",
                    tail.join("")
                );
            }
        }
        Ok(())
    }

    /// Creates and starts a container on `spec.network`, pinned to
    /// `cpuset`, labelled as the lab's, confined by `spec.confinement`.
    pub async fn start(&self, spec: ContainerSpec<'_>) -> Result<String> {
        self.start_with(spec, None).await
    }

    /// [`Engine::start`], with `files` (`(dir, tar)`) a fresh anonymous
    /// volume at `dir` holding the files of `tar`, put there through the
    /// API before the container starts: for an engine that may not see the
    /// orchestrator's filesystem, where a bind mount would not do.
    /// [`Engine::download`] reads the folder back; removing the container
    /// removes the volume.
    async fn start_with(
        &self,
        spec: ContainerSpec<'_>,
        files: Option<(&str, Vec<u8>)>,
    ) -> Result<String> {
        // The run's labels, the owner's among them (crate::basics::owner).
        let labels: HashMap<String, String> = run_labels(&spec).into_iter().collect();
        let mut body = ContainerCreateBody {
            // The image this run built or verified, by id (tags are shared).
            image: Some(self.pinned(spec.image)),
            env: Some(spec.env),
            entrypoint: spec.entrypoint,
            cmd: spec.cmd,
            labels: Some(labels),
            host_config: Some(HostConfig {
                network_mode: Some(spec.network.mode()),
                cpuset_cpus: Some(spec.cpuset.to_owned()),
                binds: (!spec.binds.is_empty()).then_some(spec.binds),
                mounts: files.as_ref().map(|(dir, _)| {
                    vec![bollard::models::Mount {
                        target: Some((*dir).to_owned()),
                        typ: Some(bollard::models::MountTypeEnum::VOLUME),
                        ..Default::default()
                    }]
                }),
                init: Some(true),
                ..Default::default()
            }),
            ..Default::default()
        };
        crate::basics::confine::apply(spec.confinement, &mut body)?;
        let opts = CreateContainerOptionsBuilder::default()
            .name(&spec.name)
            .build();
        let created = self
            .docker
            .create_container(Some(opts), body)
            .await
            .with_context(|| {
                format!("cannot create container {} from {}", spec.name, spec.image)
            })?;
        if let Some((dir, tar)) = files {
            let opts = bollard::query_parameters::UploadToContainerOptionsBuilder::default()
                .path(dir)
                .build();
            if let Err(e) = self
                .docker
                .upload_to_container(&created.id, Some(opts), body_full(tar.into()))
                .await
            {
                let _ = self.remove(&created.id).await;
                return Err(anyhow!(e).context(format!(
                    "cannot put the files of container {} into {dir}",
                    spec.name
                )));
            }
        }
        if let Err(e) = self
            .docker
            .start_container(
                &created.id,
                None::<bollard::query_parameters::StartContainerOptions>,
            )
            .await
        {
            let _ = self.remove(&created.id).await;
            return Err(anyhow!(e).context(format!("cannot start container {}", spec.name)));
        }
        Ok(created.id)
    }

    /// Runs `cmd` inside the running container `id` (its namespaces, its
    /// user) to its end; returns its exit code and its output, both
    /// streams. For what only the container's own network can reach.
    pub async fn exec(&self, id: &str, cmd: &[&str]) -> Result<(i64, String)> {
        use bollard::exec::{CreateExecOptions, StartExecResults};
        let exec = self
            .docker
            .create_exec(
                id,
                CreateExecOptions {
                    cmd: Some(cmd.iter().map(|c| c.to_string()).collect()),
                    attach_stdout: Some(true),
                    attach_stderr: Some(true),
                    ..Default::default()
                },
            )
            .await
            .with_context(|| format!("cannot run {cmd:?} in container {id}"))?;
        let mut text = String::new();
        if let StartExecResults::Attached { mut output, .. } =
            self.docker.start_exec(&exec.id, None).await?
        {
            while let Some(chunk) = output.next().await {
                text.push_str(&chunk?.to_string());
            }
        }
        let code = self
            .docker
            .inspect_exec(&exec.id)
            .await?
            .exit_code
            .unwrap_or(-1);
        Ok((code, text))
    }

    /// Restarts a container's process (same container, same settings).
    pub async fn restart(&self, id: &str) -> Result<()> {
        self.docker
            .restart_container(
                id,
                None::<bollard::query_parameters::RestartContainerOptions>,
            )
            .await
            .with_context(|| format!("cannot restart container {id}"))
    }

    /// Whether the container is still running, and its exit code if not.
    pub async fn exit_code(&self, id: &str) -> Result<Option<i64>> {
        let info = self
            .docker
            .inspect_container(
                id,
                None::<bollard::query_parameters::InspectContainerOptions>,
            )
            .await?;
        let state = info.state.unwrap_or_default();
        Ok(if state.running.unwrap_or(false) {
            None
        } else {
            Some(state.exit_code.unwrap_or(-1))
        })
    }

    /// Runs a one-off container to its end and removes it: its exit code
    /// and the last `lines` lines of its output.
    pub async fn run_to_end(&self, spec: ContainerSpec<'_>, lines: usize) -> Result<(i64, String)> {
        let id = self.start(spec).await?;
        let code = self.wait(&id).await;
        let log = self.log_tail(&id, lines).await;
        self.remove(&id).await?;
        Ok((code?, log))
    }

    /// Waits for the container to exit and returns its exit code.
    pub async fn wait(&self, id: &str) -> Result<i64> {
        let mut stream = self
            .docker
            .wait_container(id, None::<bollard::query_parameters::WaitContainerOptions>);
        match stream.next().await {
            Some(Ok(r)) => Ok(r.status_code),
            // bollard reports a non-zero exit as an error carrying the code.
            Some(Err(bollard::errors::Error::DockerContainerWaitError { code, .. })) => Ok(code),
            Some(Err(e)) => Err(e.into()),
            None => Ok(self.exit_code(id).await?.unwrap_or(-1)),
        }
    }

    /// The last `lines` lines of the container's output.
    pub async fn log_tail(&self, id: &str, lines: usize) -> String {
        let opts = LogsOptionsBuilder::default()
            .stdout(true)
            .stderr(true)
            .tail(&lines.to_string())
            .build();
        let mut out = String::new();
        let mut stream = self.docker.logs(id, Some(opts));
        while let Some(Ok(chunk)) = stream.next().await {
            out.push_str(&String::from_utf8_lossy(&chunk.into_bytes()));
        }
        out
    }

    /// Follows the container's output line by line until it exits.
    pub fn follow_logs(&self, id: &str) -> impl futures_util::Stream<Item = String> + '_ {
        let opts = LogsOptionsBuilder::default()
            .stdout(true)
            .stderr(true)
            .follow(true)
            .build();
        self.docker
            .logs(id, Some(opts))
            .filter_map(|chunk| async move {
                chunk
                    .ok()
                    .map(|c| String::from_utf8_lossy(&c.into_bytes()).into_owned())
            })
    }

    /// The folder `path` of a container (running or exited) as a tar whose
    /// entries start with the folder's name.
    pub async fn download(&self, id: &str, path: &str) -> Result<Vec<u8>> {
        let opts = bollard::query_parameters::DownloadFromContainerOptionsBuilder::default()
            .path(path)
            .build();
        let mut stream = self.docker.download_from_container(id, Some(opts));
        let mut tar = Vec::new();
        while let Some(chunk) = stream.next().await {
            tar.extend_from_slice(
                &chunk.with_context(|| format!("cannot read {path} of container {id}"))?,
            );
        }
        Ok(tar)
    }

    /// Removes a container, running or not.
    pub async fn remove(&self, id: &str) -> Result<()> {
        let opts = RemoveContainerOptionsBuilder::default()
            .force(true)
            .v(true)
            .build();
        match self.docker.remove_container(id, Some(opts)).await {
            Ok(())
            | Err(bollard::errors::Error::DockerResponseServerError {
                status_code: 404, ..
            }) => Ok(()),
            Err(e) => Err(e).with_context(|| format!("cannot remove container {id}")),
        }
    }

    /// Every container a lab run created (of `run_id` only, when given).
    pub async fn lab_containers(&self, run_id: Option<&str>) -> Result<Vec<LabContainer>> {
        // Only containers of a run: the legacy builder's intermediate
        // containers inherit an image's labels, but they belong to an image
        // build (which removes them), never to a run.
        let mut labels = vec![format!("{LABEL_MANAGED}=true")];
        labels.push(match run_id {
            Some(run) => format!("{LABEL_RUN}={run}"),
            None => LABEL_RUN.to_owned(),
        });
        let filters = HashMap::from([("label".to_owned(), labels)]);
        let opts = ListContainersOptionsBuilder::default()
            .all(true)
            .filters(&filters)
            .build();
        let list = self
            .docker
            .list_containers(Some(opts))
            .await
            .context("cannot list containers")?;
        Ok(list
            .into_iter()
            .filter_map(|c| {
                let name = c.names.and_then(|n| n.first().cloned()).unwrap_or_default();
                let labels: std::collections::BTreeMap<String, String> =
                    c.labels.unwrap_or_default().into_iter().collect();
                let run = labels.get(LABEL_RUN).cloned().unwrap_or_default();
                c.id.map(|id| LabContainer {
                    id,
                    name: name.trim_start_matches('/').to_owned(),
                    run,
                    labels,
                })
            })
            .collect())
    }

    /// Removes every lab container (of `run_id` only, when given).
    pub async fn remove_lab_containers(&self, run_id: Option<&str>) -> Result<usize> {
        let containers = self.lab_containers(run_id).await?;
        for c in &containers {
            self.remove(&c.id).await?;
        }
        Ok(containers.len())
    }

    /// Removes every image the lab built or imported.
    pub async fn remove_lab_images(&self) -> Result<usize> {
        let filters = HashMap::from([("label".to_owned(), vec![format!("{LABEL_MANAGED}=true")])]);
        let opts = ListImagesOptionsBuilder::default()
            .all(false)
            .filters(&filters)
            .build();
        let images = self
            .docker
            .list_images(Some(opts))
            .await
            .context("cannot list images")?;
        let mut removed = 0;
        // Children first: newer images are built on older ones.
        let mut images: Vec<_> = images.into_iter().collect();
        images.sort_by_key(|i| std::cmp::Reverse(i.created));
        for image in images {
            let opts = RemoveImageOptionsBuilder::default().force(true).build();
            if self
                .docker
                .remove_image(&image.id, Some(opts), None)
                .await
                .is_ok()
            {
                removed += 1;
            }
        }
        Ok(removed)
    }
}

/// Docker runs a run's containers with the methods above: the trait's
/// calls are theirs, unchanged.
impl Containers for Engine {
    fn sees_local_files(&self) -> bool {
        self.endpoint == Endpoint::Default
    }

    async fn start_with(
        &self,
        spec: ContainerSpec<'_>,
        files: Option<(&str, Vec<u8>)>,
    ) -> Result<String> {
        Engine::start_with(self, spec, files).await
    }

    async fn exec(&self, id: &str, cmd: &[&str]) -> Result<(i64, String)> {
        Engine::exec(self, id, cmd).await
    }

    async fn restart(&self, id: &str) -> Result<()> {
        Engine::restart(self, id).await
    }

    async fn exit_code(&self, id: &str) -> Result<Option<i64>> {
        Engine::exit_code(self, id).await
    }

    async fn wait(&self, id: &str) -> Result<i64> {
        Engine::wait(self, id).await
    }

    async fn log_tail(&self, id: &str, lines: usize) -> String {
        Engine::log_tail(self, id, lines).await
    }

    fn follow_logs(&self, id: &str) -> impl futures_util::Stream<Item = String> + Send + '_ {
        Engine::follow_logs(self, id)
    }

    async fn download(&self, id: &str, path: &str) -> Result<Vec<u8>> {
        Engine::download(self, id, path).await
    }

    async fn remove(&self, id: &str) -> Result<()> {
        Engine::remove(self, id).await
    }

    async fn lab_containers(&self, run_id: Option<&str>) -> Result<Vec<LabContainer>> {
        Engine::lab_containers(self, run_id).await
    }

    async fn answers(&self, within: std::time::Duration) -> bool {
        Engine::answers(self, within).await
    }

    async fn remove_lab_containers(&self, run_id: Option<&str>) -> Result<usize> {
        Engine::remove_lab_containers(self, run_id).await
    }

    async fn run_to_end(&self, spec: ContainerSpec<'_>, lines: usize) -> Result<(i64, String)> {
        Engine::run_to_end(self, spec, lines).await
    }
}

/// Whether `e` is the engine's answer (an API error: 404, 409, a version
/// it refuses, ...), as opposed to a transport error (no connection, a
/// connection closed, no answer in time).
fn is_an_answer(e: &bollard::errors::Error) -> bool {
    matches!(
        e,
        bollard::errors::Error::DockerResponseServerError { .. }
            | bollard::errors::Error::DockerStreamError { .. }
            | bollard::errors::Error::DockerContainerWaitError { .. }
    )
}

/// A client of `endpoint` (nothing is asked yet); the error says why none
/// can be made, for the caller to wrap with the endpoint.
fn client(endpoint: &Endpoint, tls_cert_path: Option<&Path>) -> Result<Docker, String> {
    let timeout = 120;
    let version = bollard::API_DEFAULT_VERSION;
    match endpoint {
        Endpoint::Default => Docker::connect_with_local_defaults(),
        Endpoint::Unix(path) => Docker::connect_with_unix(&path.to_string_lossy(), timeout, version),
        Endpoint::Tcp { host, port, tls: false } => {
            Docker::connect_with_http(&format!("tcp://{host}:{port}"), timeout, version)
        }
        Endpoint::Tcp { host, port, tls: true } => {
            let dir = match tls_cert_path {
                Some(d) => d.to_owned(),
                None => std::env::var_os("DOCKER_CERT_PATH").map(std::path::PathBuf::from).ok_or_else(|| {
                    format!(
                        "tcp://{host}:{port} is TLS and no certificates were given: set [hosts] tls_cert_path or DOCKER_CERT_PATH to a folder of ca.pem, cert.pem and key.pem (or write tcp+http:// for plain HTTP)"
                    )
                })?,
            };
            for f in ["ca.pem", "cert.pem", "key.pem"] {
                if !dir.join(f).is_file() {
                    return Err(format!("{} has no {f}", dir.display()));
                }
            }
            Docker::connect_with_ssl(
                &format!("tcp://{host}:{port}"),
                &dir.join("key.pem"),
                &dir.join("cert.pem"),
                &dir.join("ca.pem"),
                timeout,
                version,
            )
        }
        Endpoint::Ssh { .. } => Docker::connect_with_ssh(&endpoint.to_string(), timeout, version),
    }
    .map_err(|e| e.to_string())
}

fn no_daemon(detail: &str) -> anyhow::Error {
    anyhow!(
        "cannot reach the Docker engine ({detail}).\n\
         rpclab needs a running Docker engine. Start it (e.g. `sudo systemctl start docker`, \
         or `sudo dockerd &` where there is no init system), or point DOCKER_HOST at one, then run the command again."
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn engine(id: &str) -> Engine {
        Engine::unconnected(id, Endpoint::Default)
    }

    #[test]
    fn a_pinned_tag_resolves_to_its_id_on_its_engine_only() {
        let (a, b) = (engine("engine-a"), engine("engine-b"));
        a.pin("rpclab/test-pinned:1", "sha256:0123");
        assert_eq!(a.pinned("rpclab/test-pinned:1"), "sha256:0123");
        assert_eq!(a.pinned("rpclab/test-unpinned:1"), "rpclab/test-unpinned:1");
        // Another engine has images of its own: the tag is not pinned there.
        assert_eq!(b.pinned("rpclab/test-pinned:1"), "rpclab/test-pinned:1");
        b.pin("rpclab/test-pinned:1", "sha256:4567");
        assert_eq!(a.pinned("rpclab/test-pinned:1"), "sha256:0123");
        assert!(!a.same_engine(&b) && a.same_engine(&engine("engine-a")));
        // A clone is the same connection, with the same pins.
        let a_again = a.clone();
        a_again.pin("rpclab/test-pinned:2", "sha256:89ab");
        assert_eq!(a.pinned("rpclab/test-pinned:2"), "sha256:89ab");
    }

    #[tokio::test]
    async fn an_unreachable_endpoint_is_one_line_naming_it() {
        let missing = Endpoint::Unix("/nonexistent/rpclab-test.sock".into());
        let e = Engine::connect_to(&missing, None).await.err().unwrap();
        let text = format!("{e:#}");
        assert!(!text.contains('\n'), "{text}");
        assert!(
            text.starts_with(
                "cannot reach the Docker engine at unix:///nonexistent/rpclab-test.sock"
            ),
            "{text}"
        );
        // TLS without certificates says what to give.
        let tls = Endpoint::Tcp {
            host: "127.0.0.1".into(),
            port: 9,
            tls: true,
        };
        let empty = tempfile::tempdir().unwrap();
        let e = Engine::connect_to(&tls, Some(empty.path()))
            .await
            .err()
            .unwrap();
        let text = format!("{e:#}");
        assert!(
            !text.contains('\n') && text.contains("has no ca.pem"),
            "{text}"
        );
        // A port where nothing listens answers nothing: one line too.
        let closed = Endpoint::Tcp {
            host: "127.0.0.1".into(),
            port: 9,
            tls: false,
        };
        let e = Engine::connect_to(&closed, None).await.err().unwrap();
        let text = format!("{e:#}");
        assert!(!text.contains('\n'), "{text}");
        assert!(
            text.starts_with("cannot reach the Docker engine at tcp+http://127.0.0.1:9"),
            "{text}"
        );
    }
}
