#!/usr/bin/env bash
# Regenerates golden/vectors/*.bin: real JRMP conversations between the JDK's
# RMI client and a JDK RMI server / Spring 5.3 RmiServiceExporter, recorded
# on the client's sockets. Needs Java 17+ and Maven.
#
# Run with `java -cp` (not exec:java) so that every class comes from the
# system class loader: RMI then annotates class descriptors with a null
# codebase, as in the lab's servers (`java -jar`), instead of the URLs of
# Maven's class loader.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
target="$here/java/target"
mvn -B -q -Dstyle.color=never -f "$here/java/pom.xml" compile dependency:build-classpath \
  -Dmdep.outputFile="$target/classpath.txt"
rm -f "$here"/vectors/*.bin
java -cp "$target/classes:$(cat "$target/classpath.txt")" rpclab.jrmpgolden.Generate "$here/vectors"
