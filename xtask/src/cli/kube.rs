//! `--engine`: which engine runs a command's containers, and the
//! Kubernetes commands' entry points. The Kubernetes engine is compiled in
//! with xtask's `kubernetes` feature (`cargo xtask-kube`, docs/kubernetes.md):
//! kube-rs and the API's types add minutes to a cold build, which the Docker
//! lab and CI's critical path do without. Without the feature, each entry
//! point is one line that says how to get it.

#[cfg(feature = "kubernetes")]
use crate::cli::kube_cluster;
use anyhow::Result;

/// Which engine runs a command's containers.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum EngineChoice {
    /// The Docker engine (`DOCKER_HOST`, or `[hosts]`).
    #[default]
    Docker,
    /// The Kubernetes cluster of `KUBECONFIG` (or `~/.kube/config`).
    Kubernetes,
}

/// What an xtask built without the engine says, for `what`.
#[cfg(not(feature = "kubernetes"))]
fn without_the_engine(what: &str) -> anyhow::Error {
    anyhow::anyhow!(
        "{what} needs the Kubernetes engine, which this xtask was built without: \
         run it as `cargo xtask-kube lab ...` (xtask with its `kubernetes` feature; docs/kubernetes.md)"
    )
}

/// Ok when this xtask has the Kubernetes engine; else the one line that
/// says how to get it, for `what`.
pub fn available(what: &str) -> Result<()> {
    #[cfg(feature = "kubernetes")]
    {
        let _ = what;
        Ok(())
    }
    #[cfg(not(feature = "kubernetes"))]
    Err(without_the_engine(what))
}

/// `lab ps --engine kubernetes`: the lab's Pods.
pub async fn ps() -> Result<()> {
    #[cfg(feature = "kubernetes")]
    return kube_cluster::ps().await;
    #[cfg(not(feature = "kubernetes"))]
    Err(without_the_engine("--engine kubernetes"))
}

/// `lab clean --engine kubernetes`: every lab namespace, and its Pods.
pub async fn clean() -> Result<()> {
    #[cfg(feature = "kubernetes")]
    return kube_cluster::clean().await;
    #[cfg(not(feature = "kubernetes"))]
    Err(without_the_engine("--engine kubernetes"))
}

/// `lab kube-check`: the engine's end-to-end check on a real cluster.
pub async fn check(image: &str, with_registry: bool, image_registry: Option<&str>) -> Result<()> {
    #[cfg(feature = "kubernetes")]
    return kube_cluster::check(image, with_registry, image_registry).await;
    #[cfg(not(feature = "kubernetes"))]
    {
        let _ = (image, with_registry, image_registry);
        Err(without_the_engine("lab kube-check"))
    }
}
