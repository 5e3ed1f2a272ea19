#!/usr/bin/env bash
# Regenerates golden/vectors/{kryo4,kryo5}/*.bin with Dubbo's own kryo
# serialization: Dubbo 2.6.12 + Kryo 4.0.1 (profile kryo4) and Dubbo 3.3.6 +
# dubbo-serialization-kryo 3.2.0 / Kryo 5.4 (profile kryo5).
# Needs Java 17+ and Maven. Dubbo's Kryo registers JDK classes whose fields
# it reflects on (java.text, java.util, ...), hence the --add-opens, the same
# as the servers' jvm_flags.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
export MAVEN_OPTS="${MAVEN_OPTS:-} --add-opens=java.base/java.lang=ALL-UNNAMED --add-opens=java.base/java.lang.reflect=ALL-UNNAMED --add-opens=java.base/java.lang.invoke=ALL-UNNAMED --add-opens=java.base/java.util=ALL-UNNAMED --add-opens=java.base/java.util.concurrent=ALL-UNNAMED --add-opens=java.base/java.util.concurrent.atomic=ALL-UNNAMED --add-opens=java.base/java.util.regex=ALL-UNNAMED --add-opens=java.base/java.math=ALL-UNNAMED --add-opens=java.base/java.net=ALL-UNNAMED --add-opens=java.base/java.nio=ALL-UNNAMED --add-opens=java.base/java.text=ALL-UNNAMED --add-opens=java.base/java.time=ALL-UNNAMED --add-opens=java.base/java.io=ALL-UNNAMED --add-opens=java.base/java.security=ALL-UNNAMED --add-opens=java.sql/java.sql=ALL-UNNAMED"
for line in kryo4 kryo5; do
  mvn -B -q -Dstyle.color=never -P "$line" -f "$here/java/pom.xml" compile exec:java \
    -Dexec.mainClass=rpclab.golden.Generate -Dexec.args="$here/vectors"
done
