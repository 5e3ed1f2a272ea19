#!/usr/bin/env bash
# Regenerates vectors/ with the real Ice for Java runtime (com.zeroc:ice
# 3.7.10): a Java client calls a Java server (and a locator) through a
# recording relay, and each direction of each TCP connection is saved as
# it crossed the wire. Needs Java 17+, Maven (Maven Central) and slice2java
# 3.7 on the PATH (Debian: apt-get install zeroc-ice-compilers).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
mvn -B -q -Dstyle.color=never -f "$here/java/pom.xml" compile exec:java \
  -Dexec.args="generate $here/vectors"
