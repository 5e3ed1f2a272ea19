#!/bin/sh
# How the IceGrid node starts the Java server: with the container's JAVA_OPTS
# (the manifest's jvm_flags) and the node's --Ice.Config=... arguments.
# shellcheck disable=SC2086
exec java ${JAVA_OPTS:-} -jar /app/server.jar "$@"
