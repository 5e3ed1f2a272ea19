#!/usr/bin/env bash
# Regenerates the golden vectors with the real Java Hessian implementations:
#   golden/vectors/caucho/        com.caucho:hessian
#   golden/vectors/dubbo-lite/    org.apache.dubbo:hessian-lite
#   golden/vectors/alibaba-lite/  com.alibaba:hessian-lite
# Needs Java 17+ and Maven (artifacts come from Maven Central).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
pom="$here/java/pom.xml"
out="$here/vectors"
gen() {
  mvn -B -q -Dstyle.color=never -f "$pom" "$@" compile exec:java -Dexec.mainClass=rpclab.golden.Generate
}
gen -Dexec.args="caucho $out"
gen -Dexec.args="lite $out"
gen -Palibaba-lite -Dexec.args="lite $out"
