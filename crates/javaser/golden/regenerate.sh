#!/usr/bin/env bash
# Regenerates golden/vectors/*.bin with the JDK's ObjectOutputStream.
# Needs Java 17+ and Maven.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
mvn -B -q -Dstyle.color=never -f "$here/java/pom.xml" compile exec:java \
  -Dexec.mainClass=rpclab.golden.Generate -Dexec.args="$here/vectors"
