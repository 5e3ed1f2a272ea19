#!/usr/bin/env bash
# Regenerates the SOAP golden vectors with the real Java stacks:
#   vectors/jaxws-ri/   JAX-WS RI (com.sun.xml.ws:jaxws-rt), Endpoint.publish
#   vectors/cxf/        Apache CXF JAX-WS frontend
# Each: the stack's own JAX-WS client calling the stack's own endpoint.
# Needs Java 17+ and Maven, and ports 18391/18392 free.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
pom="$here/java/pom.xml"
gen() {
  mvn -B -q -Dstyle.color=never -f "$pom" "$@" compile exec:java -Dexec.mainClass=rpclab.soapgolden.Generate
}
# Each profile compiles against other jars: start from a clean build.
mvn -B -q -f "$pom" clean
gen -Pjaxws-ri -Dexec.args="$here/vectors/jaxws-ri"
mvn -B -q -f "$pom" clean
gen -Pcxf -Dexec.args="$here/vectors/cxf"
