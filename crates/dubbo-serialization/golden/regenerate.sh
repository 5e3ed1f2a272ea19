#!/usr/bin/env bash
# Regenerates golden/vectors/*.bin with com.alibaba:dubbo 2.5.10's own "dubbo"
# serialization (GenericObjectOutput). Needs Java 17+ and Maven.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
rm -f "$here"/vectors/*.bin
mvn -B -q -Dstyle.color=never -f "$here/java/pom.xml" compile exec:exec \
  -Dgolden.main=rpclab.golden.Generate -Dgolden.dir="$here/vectors"
