# shellcheck shell=bash disable=SC2034 # the variables are for the scripts that source this
# Shared by tools/k8s/{build,up,down,load-image,check}: the pins, where the
# cluster keeps its state, runtime files and logs, its ports (all on
# 127.0.0.1) and small helpers.

K8S_TOOLS=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source-path=SCRIPTDIR source=versions
. "$K8S_TOOLS/versions"

STATE=/var/lib/rpclab-k8s           # etcd data, certificates, kubeconfigs, kubelet root, containerd root
RUN=/run/rpclab-k8s                 # pid files, containerd state and socket, runc root
LOGS=/var/log/rpclab-k8s            # one log per process, plus pods/ (the kubelet's pod logs)
KUBECONFIG_ADMIN=$STATE/kubeconfig  # cluster-admin (group system:masters), by token
CONTAINERD_SOCK=$RUN/containerd/containerd.sock
NODE_NAME=rpclab-k8s
NODE_LABEL=rpclab.io/cpu-manager=static

ETCD_PORT=2379
ETCD_PEER_PORT=2380
APISERVER_PORT=6443
KUBELET_PORT=10250
KUBELET_HEALTHZ_PORT=10248
CONTROLLER_MANAGER_PORT=10257
SCHEDULER_PORT=10259
# Virtual only: allocated by the API server, never put on an interface
# (there is no kube-proxy).
SERVICE_CIDR=10.96.0.0/24
# Pod addresses, which live only in the pods' own network namespaces: the
# bridge is no gateway and has no address of its own.
POD_CIDR=10.244.0.0/24
CNI_BRIDGE=rpclabk8s0
# The image registry of tools/k8s/registry, plain HTTP on the loopback; up
# tells the cluster's containerd so (hosts.toml under $STATE/certs.d).
REGISTRY_PORT=5000
REGISTRY_ADDR=127.0.0.1:$REGISTRY_PORT
# Its binary, cached apart from the cluster's pins (tools/k8s/registry builds it).
REGISTRY_BIN=$RPCLAB_K8S_CACHE/$GO_VERSION-registry-$REGISTRY_VERSION/bin/registry

# The processes of the cluster, in start order.
COMPONENTS=(etcd kube-apiserver kube-controller-manager kube-scheduler containerd kubelet)

say() { printf '[k8s %s] %s\n' "$(date -u +%H:%M:%S)" "$*" >&2; }
die() { say "error: $*"; exit 1; }

need_root() { [ "$(id -u)" = 0 ] || die "run as root (it mounts, makes cgroups and network namespaces)"; }

# The pid of a component this cluster started, if it still runs.
running_pid() {
	local pidfile=$RUN/$1.pid pid
	[ -f "$pidfile" ] || return 1
	pid=$(cat "$pidfile")
	[ -n "$pid" ] && kill -0 "$pid" 2>/dev/null || return 1
	# The pid must still be that program, not a reused number.
	[ "$(readlink "/proc/$pid/exe" 2>/dev/null)" = "$RPCLAB_K8S_BIN/$1" ] || return 1
	echo "$pid"
}

kubectl_() { "$RPCLAB_K8S_BIN/kubectl" --kubeconfig "$KUBECONFIG_ADMIN" "$@"; }
