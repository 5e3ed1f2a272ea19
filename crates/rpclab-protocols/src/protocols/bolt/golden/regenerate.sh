#!/usr/bin/env bash
# Regenerates the bolt golden vectors with the real SOFA-RPC, one folder per
# release the lab runs (servers/sofa-rpc's variants):
#   vectors/5.13/  sofa-rpc-all 5.13.2 (bolt 1.6.10, sofa-hessian 3.5.5)
#   vectors/5.5/   sofa-rpc-all 5.5.9  (bolt 1.4.6,  sofa-hessian 3.3.6)
# A ConsumerConfig calls a ProviderConfig through a recording proxy, so the
# files are the bytes a SOFA consumer sends and a SOFA provider answers.
# Needs Java 17+ and Maven (artifacts from Maven Central).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
pom="$here/java/pom.xml"
gen() { # folder sofa-version curator-version zookeeper-version
  local out="$here/vectors/$1"
  mvn -B -q -Dstyle.color=never -f "$pom" clean package -DskipTests \
    -Dsofa.version="$2" -Dcurator.version="$3" -Dzookeeper.version="$4"
  rm -rf "$out"
  # --add-opens: SOFA-RPC reflects into Throwable (ProviderInvoker) on Java 17.
  java --add-opens=java.base/java.lang=ALL-UNNAMED --add-opens=java.base/java.util=ALL-UNNAMED \
    -Dorg.slf4j.simpleLogger.defaultLogLevel=warn \
    -cp "$here/java/target/server.jar" rpclab.bolt.golden.Generate "$out"
}
gen 5.5 5.5.9 2.9.1 3.4.6
# Last, so that java/target holds the default (newest) build.
gen 5.13 5.13.2 4.3.0 3.5.7
