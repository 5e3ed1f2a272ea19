#!/usr/bin/env bash
# Regenerates golden/vectors/*.bin with Dubbo 3.3.6's fastjson2 serialization
# (FastJson2ObjectOutput over fastjson2 2.0.56). Needs Java 17+ and Maven.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
rm -f "$here"/vectors/*.bin
mvn -B -q -Dstyle.color=never -f "$here/java/pom.xml" compile exec:java \
  -Dexec.mainClass=rpclab.golden.Generate -Dexec.args="$here/vectors"
