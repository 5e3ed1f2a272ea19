//! What a cluster must give before a run starts anything on it, each
//! shortfall one line: every permission the run uses (the verb and the
//! resource that is missing, by `SelfSubjectAccessReview`), a schedulable
//! node running the static CPU manager policy when whole CPUs are asked
//! for (its kubelet's own configuration, through the API server's node
//! proxy), and enough allocatable CPU on it for the run's exclusive Pods.
//! (An image the cluster cannot pull is known only when a Pod tries: the
//! start of that Pod fails with the kubelet's reason and the Pod's event.)

use super::Cluster;
use anyhow::{bail, Context, Result};
use k8s_openapi::api::authorization::v1::{
    ResourceAttributes, SelfSubjectAccessReview, SelfSubjectAccessReviewSpec,
};
use k8s_openapi::api::core::v1::Node;
use kube::api::{Api, ListParams, PostParams};

/// Every verb on every resource a run uses: (verb, group, resource,
/// subresource, cluster-scoped). docs/kubernetes.md's Role grants these.
pub const NEEDED: &[(&str, &str, &str, &str, bool)] = &[
    ("create", "", "namespaces", "", true),
    ("patch", "", "namespaces", "", true),
    ("list", "", "namespaces", "", true),
    ("delete", "", "namespaces", "", true),
    ("list", "", "nodes", "", true),
    ("get", "", "nodes", "proxy", true),
    ("list", "", "pods", "", true),
    ("create", "", "pods", "", false),
    ("patch", "", "pods", "", false),
    ("get", "", "pods", "", false),
    ("delete", "", "pods", "", false),
    ("get", "", "pods", "log", false),
    ("create", "", "pods", "exec", false),
    ("get", "", "pods", "exec", false),
    ("create", "", "configmaps", "", false),
    ("patch", "", "configmaps", "", false),
    ("delete", "", "configmaps", "", false),
    ("list", "", "events", "", false),
];

/// What a run will ask of the cluster's CPUs.
pub struct Ask {
    /// Whole CPUs its exclusive Pods take at once (0: none is exclusive).
    pub exclusive_cpus: u32,
}

/// What the checks found of the node the run will use.
#[derive(Debug)]
pub struct NodeFacts {
    pub name: String,
    pub static_policy: bool,
    /// Allocatable CPU, in millicores.
    pub allocatable_millis: u64,
}

/// Connects to the cluster of the kubeconfig and checks it for a run
/// `run_id` whose exclusive Pods take `exclusive_cpus` whole CPUs at once
/// (one line for what is missing), then says what it found: the cluster
/// and its node.
pub async fn connect_checked(run_id: &str, exclusive_cpus: u32) -> Result<(Cluster, NodeFacts)> {
    let cluster = Cluster::connect().await?;
    let node = check(
        &cluster,
        &super::pod::namespace_of(run_id),
        &Ask { exclusive_cpus },
    )
    .await?;
    crate::say!(
        "Kubernetes {} at {} (kubeconfig {}): node {} with {} allocatable CPU, static CPU manager policy {}",
        cluster.version,
        cluster.server,
        cluster.kubeconfig.display(),
        node.name,
        node.allocatable_millis as f64 / 1000.0,
        if node.static_policy { "on" } else { "off" }
    );
    Ok((cluster, node))
}

/// The permissions the run's user lacks, as `verb resource` lines; the
/// namespaced ones are asked of a namespace named like the run's.
pub async fn missing_permissions(cluster: &Cluster, namespace: &str) -> Result<Vec<String>> {
    let api: Api<SelfSubjectAccessReview> = Api::all(cluster.client().clone());
    let mut missing = Vec::new();
    for (verb, group, resource, sub, cluster_scoped) in NEEDED {
        let review = SelfSubjectAccessReview {
            spec: SelfSubjectAccessReviewSpec {
                resource_attributes: Some(ResourceAttributes {
                    verb: Some((*verb).into()),
                    group: Some((*group).into()),
                    resource: Some((*resource).into()),
                    subresource: (!sub.is_empty()).then(|| (*sub).into()),
                    namespace: (!cluster_scoped).then(|| namespace.to_owned()),
                    ..Default::default()
                }),
                ..Default::default()
            },
            ..Default::default()
        };
        let answer = api.create(&PostParams::default(), &review).await.context(
            "cannot ask the API server what this user may do (create selfsubjectaccessreviews)",
        )?;
        if !answer.status.is_some_and(|s| s.allowed) {
            let what = if sub.is_empty() {
                (*resource).to_owned()
            } else {
                format!("{resource}/{sub}")
            };
            missing.push(format!("{verb} {what}"));
        }
    }
    Ok(missing)
}

/// Checks the cluster before anything starts: one line for the first
/// thing missing.
pub async fn check(cluster: &Cluster, namespace: &str, ask: &Ask) -> Result<NodeFacts> {
    let missing = missing_permissions(cluster, namespace).await?;
    if let Some(first) = missing.first() {
        bail!(
            "the Kubernetes user of {} may not {first} (missing permissions: {}); see docs/kubernetes.md for the Role a run needs",
            cluster.kubeconfig.display(),
            missing.join(", ")
        );
    }
    let nodes: Api<Node> = Api::all(cluster.client().clone());
    let list = nodes
        .list(&ListParams::default())
        .await
        .context("cannot list the cluster's nodes")?;
    let mut best: Option<NodeFacts> = None;
    for node in list.items {
        let name = node.metadata.name.clone().unwrap_or_default();
        let schedulable = !node
            .spec
            .as_ref()
            .and_then(|s| s.unschedulable)
            .unwrap_or(false)
            && node
                .spec
                .as_ref()
                .and_then(|s| s.taints.as_ref())
                .is_none_or(|t| t.iter().all(|t| t.effect != "NoSchedule"));
        if !schedulable {
            continue;
        }
        let millis = node
            .status
            .as_ref()
            .and_then(|s| s.allocatable.as_ref())
            .and_then(|a| a.get("cpu"))
            .map(|q| millicores(&q.0))
            .unwrap_or(0);
        let static_policy = cluster.static_policy(&name).await.unwrap_or(false);
        let facts = NodeFacts {
            name,
            static_policy,
            allocatable_millis: millis,
        };
        let better = best.as_ref().is_none_or(|b| {
            (facts.static_policy, facts.allocatable_millis)
                > (b.static_policy, b.allocatable_millis)
        });
        if better {
            best = Some(facts);
        }
    }
    let Some(node) = best else {
        bail!(
            "the cluster of {} has no schedulable node",
            cluster.kubeconfig.display()
        );
    };
    if ask.exclusive_cpus > 0 && !node.static_policy {
        bail!(
            "node {} does not run the static CPU manager policy (kubelet cpuManagerPolicy), so its Pods would share CPUs: turn it on, or run with shared CPUs",
            node.name
        );
    }
    let wanted = u64::from(ask.exclusive_cpus) * 1000;
    if wanted > node.allocatable_millis {
        bail!(
            "node {} has {} allocatable CPU, and the run's exclusive Pods need {}",
            node.name,
            node.allocatable_millis as f64 / 1000.0,
            ask.exclusive_cpus
        );
    }
    Ok(node)
}

/// A CPU quantity (`2`, `1500m`, `0.5`) in millicores.
pub fn millicores(q: &str) -> u64 {
    match q.strip_suffix('m') {
        Some(m) => m.parse().unwrap_or(0),
        None => q
            .parse::<f64>()
            .map(|c| (c * 1000.0).round() as u64)
            .unwrap_or(0),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn cpu_quantities_read_as_millicores() {
        assert_eq!(super::millicores("1"), 1000);
        assert_eq!(super::millicores("1500m"), 1500);
        assert_eq!(super::millicores("0.5"), 500);
        assert_eq!(super::millicores("junk"), 0);
    }
}
