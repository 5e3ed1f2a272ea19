#!/bin/sh
# Rewrites vectors/*.bin with Weibo Motan's own motan2 codec (needs Maven and JDK 17+).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
rm -f "$here"/vectors/*.bin
mvn -B -q -f "$here/java/pom.xml" compile exec:java -Dexec.args="$here/vectors"
ls "$here/vectors" | wc -l
