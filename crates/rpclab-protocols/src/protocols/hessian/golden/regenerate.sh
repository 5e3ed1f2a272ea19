#!/usr/bin/env bash
# Regenerates vectors/*.bin with the real Java Hessian library
# (com.caucho:hessian): calls as HessianProxy writes them, replies and faults
# as HessianSkeleton (HessianServlet) writes them. Needs Java 17+ and Maven.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
mvn -B -q -Dstyle.color=never -f "$here/java/pom.xml" compile exec:java \
  -Dexec.mainClass=rpclab.hessiangolden.Generate -Dexec.args="$here/vectors"
