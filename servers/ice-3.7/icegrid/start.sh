#!/bin/bash
# rpclab Ice server entrypoint: ICE_DEPLOYMENT picks how the server runs.
#
#   direct   the Java server alone, adapter on tcp -h $RPCLAB_BIND -p $RPCLAB_PORT.
#   icegrid  as seed 001 deployed Ice: an IceGrid registry (its client
#            endpoint, the locator, on $RPCLAB_BIND:$RPCLAB_PORT) and an
#            IceGrid node in this container; the application (one server,
#            adapter BenchAdapter on a dynamic $RPCLAB_BIND port) is deployed
#            with icegridadmin and activated by the node at once. Clients
#            resolve `bench @ BenchAdapter` through IceGrid/Locator.
#
# RPCLAB_BIND is the interface to listen on (default 127.0.0.1; 0.0.0.0: all)
# and RPCLAB_ADVERTISE the address clients reach the server at (default the
# bind address, or 127.0.0.1 for 0.0.0.0). When they differ, the adapter
# publishes (and so registers with IceGrid) tcp -h $RPCLAB_ADVERTISE, on the
# fixed port RPCLAB_PORT + 1 under IceGrid (a published endpoint needs a
# port), and the registry publishes its locator at $RPCLAB_ADVERTISE too.
#
# ICE_THREADS sizes the server's thread pool (Ice.ThreadPool.Server.Size and
# SizeMax; Ice's own default is 1). JAVA_OPTS (the manifest's jvm_flags)
# reaches the JVM in both deployments: the node passes its environment on.
set -euo pipefail

port="${RPCLAB_PORT:-10000}"
bind="${RPCLAB_BIND:-127.0.0.1}"
advertise="${RPCLAB_ADVERTISE:-}"
if [[ -z "$advertise" ]]; then
  advertise="$bind"
  [[ "$bind" == 0.0.0.0 ]] && advertise=127.0.0.1
fi
# Where the processes of this container reach each other.
local_host="$bind"
[[ "$bind" == 0.0.0.0 ]] && local_host=127.0.0.1
threads="${ICE_THREADS:-4}"
props=(
  "--Ice.ThreadPool.Server.Size=${threads}"
  "--Ice.ThreadPool.Server.SizeMax=${threads}"
  # string-1m is 1 MiB of payload; Ice's default limit is 1024 KiB.
  "--Ice.MessageSizeMax=${ICE_MESSAGE_SIZE_MAX_KB:-65536}"
)

case "${ICE_DEPLOYMENT:-direct}" in
direct)
  # shellcheck disable=SC2086
  exec java ${JAVA_OPTS:-} -jar /app/server.jar "${props[@]}"
  ;;
icegrid) ;;
*)
  echo "ICE_DEPLOYMENT must be direct or icegrid, not '${ICE_DEPLOYMENT}'" >&2
  exit 2
  ;;
esac

locator="IceGrid/Locator:tcp -h ${local_host} -p ${port}"
registry_published=()
adapter_endpoints="tcp -h ${bind}"
adapter_published=""
if [[ "$advertise" != "$bind" ]]; then
  registry_published=("--IceGrid.Registry.Client.PublishedEndpoints=tcp -h ${advertise} -p ${port}")
  adapter_endpoints="tcp -h ${bind} -p $((port + 1))"
  adapter_published="tcp -h ${advertise} -p $((port + 1))"
fi
data=/tmp/icegrid
rm -rf "$data"
mkdir -p "$data/registry" "$data/node"

pids=()
stop() {
  # The node stops the servers it activated; then the registry.
  for ((i = ${#pids[@]} - 1; i >= 0; i--)); do
    kill -TERM "${pids[i]}" 2>/dev/null || true
    wait "${pids[i]}" 2>/dev/null || true
  done
}
trap 'stop; exit 143' TERM INT

# The registry: its locator on $RPCLAB_PORT, its other endpoints on
# dynamic ports of the local host; any user/password is accepted by icegridadmin
# (the container is the only client on the host's loopback).
icegridregistry \
  --Ice.ProgramName=icegridregistry \
  --IceGrid.InstanceName=IceGrid \
  --IceGrid.Registry.Client.Endpoints="tcp -h ${bind} -p ${port}" \
  "${registry_published[@]}" \
  --IceGrid.Registry.Server.Endpoints="tcp -h ${local_host}" \
  --IceGrid.Registry.Internal.Endpoints="tcp -h ${local_host}" \
  --IceGrid.Registry.LMDB.Path="$data/registry" \
  --IceGrid.Registry.AdminPermissionsVerifier=IceGrid/NullPermissionsVerifier \
  --IceGrid.Registry.DynamicRegistration=0 &
pids+=($!)

admin() {
  icegridadmin --Ice.Default.Locator="$locator" -u rpclab -p rpclab -e "$1"
}
wait_for() {
  local what="$1" cmd="$2"
  for _ in $(seq 1 120); do
    if admin "$cmd" >/dev/null 2>&1; then return 0; fi
    sleep 0.5
  done
  echo "IceGrid: $what not ready after 60 s" >&2
  stop
  exit 1
}
wait_for "registry" "registry ping Master"

icegridnode \
  --Ice.ProgramName=icegridnode \
  --Ice.Default.Locator="$locator" \
  --IceGrid.Node.Name=node1 \
  --IceGrid.Node.Endpoints="tcp -h ${local_host}" \
  --IceGrid.Node.Data="$data/node" \
  --IceGrid.Node.CollocateRegistry=0 &
pids+=($!)
wait_for "node" "node ping node1"

# The application: the Java server with the same properties as the direct
# deployment, its adapter registered as BenchAdapter.
app="$data/application.xml"
{
  echo '<icegrid><application name="rpclab">'
  echo '<node name="node1">'
  echo '<server id="BenchServer" exe="/app/run-server.sh" activation="always">'
  for p in "${props[@]}"; do
    kv="${p#--}"
    echo "<property name=\"${kv%%=*}\" value=\"${kv#*=}\"/>"
  done
  if [[ -n "$adapter_published" ]]; then
    echo "<property name=\"BenchAdapter.PublishedEndpoints\" value=\"${adapter_published}\"/>"
  fi
  echo "<adapter name=\"BenchAdapter\" id=\"BenchAdapter\" endpoints=\"${adapter_endpoints}\"/>"
  echo '</server></node></application></icegrid>'
} >"$app"
admin "application add $app"
echo "IceGrid: application deployed; locator ${locator}"

# Exit (and so fail the lab's liveness check) when the registry or node dies.
set +e
wait -n "${pids[@]}"
status=$?
echo "IceGrid: a process exited (status ${status}); stopping" >&2
stop
exit 1
