//! `[build]` of a server.toml: what the shared JVM server Dockerfile
//! ([`SHARED_DOCKERFILE`]) needs to know of one server.
//!
//! Every Java server's image is built the same way (a pom-only stage, the
//! dependency layer, the offline package with the tests, a runtime stage on
//! `rpclab/jdk`), so a server folder without a Dockerfile of its own holds
//! only what differs: which Maven properties the variants' `build_args` set,
//! test properties, Debian packages the build needs, and the jar that proves
//! the variant's version is the one built. This module checks that table
//! against the variants and turns it into the build arguments of the shared
//! Dockerfile. A server whose image differs in shape (the IceGrid servers'
//! runtime stage) keeps a Dockerfile of its own and no `[build]` table.

use anyhow::{bail, Result};
use serde::Deserialize;
use std::collections::{BTreeMap, HashMap};

/// The Dockerfile of every Java server whose folder has none, relative to
/// the repository root (the root of every server's build context).
pub const SHARED_DOCKERFILE: &str = "images/java-server/Dockerfile";

/// The build argument a variant sets to build another Maven project file of
/// its folder (`pom.xml` when not set), e.g. grpc-java 0.7's `pom-0.7.xml`.
pub const POM_ARG: &str = "POM";

/// `[build]`: how the shared Dockerfile builds this server.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct JavaBuild {
    /// Maven property → the variant build argument that sets it
    /// (`{ "dubbo.version" = "DUBBO_VERSION" }`). Passed to the dependency
    /// layer, so it is keyed by them; a property a variant does not set
    /// keeps the pom's default.
    pub maven_properties: BTreeMap<String, String>,
    /// Maven properties of the package step only, which runs the server's
    /// tests (`{ "rpclab.test.quick" = "true" }`).
    pub test_properties: BTreeMap<String, String>,
    /// Debian packages the Maven build runs (a code generator such as
    /// `thrift-compiler`), installed before the dependency layer.
    pub debian_packages: Vec<String>,
    /// A jar the build must leave in `lib/`, with `{version}` for the
    /// variant's `version` (`"dubbo-{version}.jar"`): the image holds the
    /// version the variant reports, not the pom's default.
    pub version_jar: Option<String>,
}

impl JavaBuild {
    /// Whether the table says anything (a server with its own Dockerfile
    /// must leave it out: nothing would read it).
    pub fn is_empty(&self) -> bool {
        self.maven_properties.is_empty()
            && self.test_properties.is_empty()
            && self.debian_packages.is_empty()
            && self.version_jar.is_none()
    }

    /// Checks the table against one variant's build arguments: each is
    /// `POM` or sets a Maven property, and every word the Dockerfile's shell
    /// splits is one plain word.
    pub fn check(&self, variant: &str, build_args: &HashMap<String, String>) -> Result<()> {
        for (arg, value) in build_args {
            if arg != POM_ARG && !self.maven_properties.values().any(|a| a == arg) {
                bail!(
                    "variant `{variant}`: build argument `{arg}` sets nothing: the shared \
                     Dockerfile reads only `{POM_ARG}` and the arguments [build] \
                     maven_properties maps to Maven properties"
                );
            }
            plain(
                &format!("variant `{variant}`: build argument `{arg}`"),
                value,
            )?;
        }
        for (property, value) in &self.test_properties {
            plain("[build] test_properties", property)?;
            plain(&format!("[build] test_properties `{property}`"), value)?;
        }
        for property in self.maven_properties.keys() {
            plain("[build] maven_properties", property)?;
        }
        for package in &self.debian_packages {
            plain("[build] debian_packages", package)?;
        }
        if let Some(jar) = &self.version_jar {
            if !jar.contains("{version}") {
                bail!("[build] version_jar `{jar}` names no `{{version}}`");
            }
            plain("[build] version_jar", &jar.replace("{version}", "0"))?;
        }
        Ok(())
    }

    /// The shared Dockerfile's build arguments for a variant (besides the
    /// images and `SERVER_DIR`, which every server image gets).
    pub fn build_args(
        &self,
        version: &str,
        build_args: &HashMap<String, String>,
    ) -> HashMap<String, String> {
        let maven_properties = self
            .maven_properties
            .iter()
            .filter_map(|(property, arg)| build_args.get(arg).map(|value| (property, value)));
        let mut args = HashMap::from([
            ("MAVEN_PROPERTIES".to_owned(), defines(maven_properties)),
            (
                "MAVEN_TEST_PROPERTIES".to_owned(),
                defines(self.test_properties.iter()),
            ),
            ("DEBIAN_PACKAGES".to_owned(), self.debian_packages.join(" ")),
            (
                "VERSION_JAR".to_owned(),
                self.version_jar
                    .as_deref()
                    .map(|jar| jar.replace("{version}", version))
                    .unwrap_or_default(),
            ),
        ]);
        if let Some(pom) = build_args.get(POM_ARG) {
            args.insert(POM_ARG.to_owned(), pom.clone());
        }
        args
    }
}

/// `-Dk=v` words, in the order given.
fn defines<'a>(properties: impl Iterator<Item = (&'a String, &'a String)>) -> String {
    properties
        .map(|(property, value)| format!("-D{property}={value}"))
        .collect::<Vec<_>>()
        .join(" ")
}

/// `value` is one word the Dockerfile's shell passes on unchanged: no
/// blank, quote, glob or expansion.
fn plain(what: &str, value: &str) -> Result<()> {
    let ok = !value.is_empty()
        && value
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_' | '+'));
    if !ok {
        bail!("{what}: `{value}` is not one word of letters, digits, `.`, `-`, `_` and `+`");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(pairs: &[(&str, &str)]) -> HashMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect()
    }

    fn grpc() -> JavaBuild {
        JavaBuild {
            maven_properties: BTreeMap::from([
                ("grpc.version".to_owned(), "GRPC_VERSION".to_owned()),
                ("protobuf.version".to_owned(), "PROTOBUF_VERSION".to_owned()),
            ]),
            test_properties: BTreeMap::from([("rpclab.test.quick".to_owned(), "true".to_owned())]),
            debian_packages: vec!["thrift-compiler".to_owned()],
            version_jar: Some("grpc-core-{version}.jar".to_owned()),
        }
    }

    #[test]
    fn a_variant_becomes_maven_defines_and_the_jar_of_its_version() {
        let variant = args(&[
            ("GRPC_VERSION", "0.7.1"),
            ("PROTOBUF_VERSION", "3.0.0-alpha-2"),
            ("POM", "pom-0.7.xml"),
        ]);
        grpc().check("0.7.1", &variant).unwrap();
        let built = grpc().build_args("0.7.1", &variant);
        assert_eq!(
            built["MAVEN_PROPERTIES"],
            "-Dgrpc.version=0.7.1 -Dprotobuf.version=3.0.0-alpha-2"
        );
        assert_eq!(built["MAVEN_TEST_PROPERTIES"], "-Drpclab.test.quick=true");
        assert_eq!(built["DEBIAN_PACKAGES"], "thrift-compiler");
        assert_eq!(built["VERSION_JAR"], "grpc-core-0.7.1.jar");
        assert_eq!(built["POM"], "pom-0.7.xml");
        // a property the variant leaves out keeps the pom's default
        let partial = grpc().build_args("1", &args(&[("GRPC_VERSION", "1")]));
        assert_eq!(partial["MAVEN_PROPERTIES"], "-Dgrpc.version=1");
        assert!(!partial.contains_key("POM"));
    }

    #[test]
    fn a_build_argument_nothing_reads_or_a_word_the_shell_splits_is_an_error() {
        let err = grpc()
            .check("1", &args(&[("GRPC_VERSON", "1")]))
            .unwrap_err()
            .to_string();
        assert!(err.contains("`GRPC_VERSON` sets nothing"), "{err}");
        let err = grpc()
            .check("1", &args(&[("GRPC_VERSION", "1 $(id)")]))
            .unwrap_err()
            .to_string();
        assert!(err.contains("not one word"), "{err}");
        let no_version = JavaBuild {
            version_jar: Some("dubbo.jar".to_owned()),
            ..JavaBuild::default()
        };
        assert!(no_version.check("1", &HashMap::new()).is_err());
        assert!(JavaBuild::default().is_empty() && !grpc().is_empty());
    }
}
