# rpclab Maven image of one line (the servers of one framework, e.g. every
# Dubbo server): the Maven image plus every dependency and plugin of the
# line's poms (poms/<server>/<file>, distinct contents only; xtask assembles
# the context), so that servers of a line fetch what they share once, and a
# new server whose pom is a copy of one of them fetches nothing again. Each
# server's own dependency layer still builds its pom online over this, so
# whatever go-offline misses (or another variant's versions) is fetched
# there and nothing is assumed present.
ARG RPCLAB_MAVEN_IMAGE=rpclab/maven:17
FROM ${RPCLAB_MAVEN_IMAGE}
COPY poms/ /tmp/poms/
RUN set -eu; \
    mkdir -p /tmp/empty/java; \
    for pom in /tmp/poms/*/*.xml; do \
        echo "resolving $pom"; \
        mvn -B -q -f "$pom" org.apache.maven.plugins:maven-dependency-plugin:3.8.1:go-offline -Dcontract.dir=/tmp/empty; \
    done; \
    rm -rf /tmp/poms /tmp/empty
