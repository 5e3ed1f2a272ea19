#!/bin/sh
# Rewrites vectors/<line>/*.bin with Dubbo's own codec, for Apache Dubbo 3.3
# and com.alibaba Dubbo 2.6 (needs Maven and JDK 17+; kryo reflects into
# java.base, hence the --add-opens the Dubbo servers' jvm_flags also give).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
export MAVEN_OPTS="${MAVEN_OPTS:-} --add-opens=java.base/java.lang=ALL-UNNAMED --add-opens=java.base/java.lang.reflect=ALL-UNNAMED --add-opens=java.base/java.lang.invoke=ALL-UNNAMED --add-opens=java.base/java.util=ALL-UNNAMED --add-opens=java.base/java.util.concurrent=ALL-UNNAMED --add-opens=java.base/java.util.concurrent.atomic=ALL-UNNAMED --add-opens=java.base/java.util.regex=ALL-UNNAMED --add-opens=java.base/java.math=ALL-UNNAMED --add-opens=java.base/java.net=ALL-UNNAMED --add-opens=java.base/java.nio=ALL-UNNAMED --add-opens=java.base/java.text=ALL-UNNAMED --add-opens=java.base/java.time=ALL-UNNAMED --add-opens=java.base/java.io=ALL-UNNAMED --add-opens=java.base/java.security=ALL-UNNAMED --add-opens=java.sql/java.sql=ALL-UNNAMED"
for line in 3.3 2.6; do
  profile="dubbo$(echo "$line" | tr -d .)"
  rm -rf "$here/vectors/$line"
  mkdir -p "$here/vectors/$line"
  mvn -B -q -f "$here/java/pom.xml" -P "$profile" clean compile exec:java -Dexec.args="$here/vectors/$line"
  echo "$line: $(ls "$here/vectors/$line" | wc -l) frames"
done
# The generic invocation's frames (Dubbo 3.3, hessian2): client/tests/integration/dubbo_generic_golden.rs.
mvn -B -q -f "$here/java/pom.xml" -P dubbo33 compile exec:java \
  -Dmain.class=rpclab.golden.GenericFrames -Dexec.args="$here/vectors/3.3"
echo "3.3: $(ls "$here/vectors/3.3"/generic-* | wc -l) generic frames"
