//! `--image-registry REGISTRY`: the images a run uses, pushed from the
//! Docker engine (where the lab builds them) to a registry its cluster
//! pulls from, so that a cluster that is not this machine gets them.
//!
//! Each image `repo:tag` is tagged `REGISTRY/repo:tag` on the Docker engine
//! and pushed through its API (bollard's `push_image`; Docker speaks plain
//! HTTP to a registry on 127.0.0.0/8, HTTPS to any other). The push says
//! the manifest's digest; Pods then name the registry's reference with
//! `imagePullPolicy: IfNotPresent` ([`super::Cluster::use_pushed`]), and a
//! Pod's record keeps the reference and the digest it ran.
//!
//! Before anything starts: the registry must answer `GET /v2/`
//! ([`ImageRegistry::check`]), and each push must be accepted; each
//! failure is one line naming the registry, or the image and what the
//! registry said.

use crate::engine::docker::Engine;
use anyhow::{anyhow, bail, Context, Result};
use bollard::query_parameters::{
    PushImageOptionsBuilder, RemoveImageOptionsBuilder, TagImageOptionsBuilder,
};
use futures_util::StreamExt;
use std::time::{Duration, Instant};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// How long the registry has to answer `GET /v2/`.
const ANSWER_WITHIN: Duration = Duration::from_secs(10);

/// A registry the cluster pulls from: `host[:port][/path]`, no scheme.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ImageRegistry {
    address: String,
}

/// An image pushed to a registry.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct Pushed {
    /// The image as the lab knows it (`rpclab/client:latest`).
    pub image: String,
    /// Its reference in the registry (`127.0.0.1:5000/rpclab/client:latest`).
    pub reference: String,
    /// The manifest's digest the registry took (`sha256:…`).
    pub digest: String,
    /// How long the push took.
    pub seconds: f64,
}

impl ImageRegistry {
    /// `REGISTRY` as `--image-registry` takes it: `host:port`, or with a
    /// path (`registry.example.com/team`); one line for anything else.
    pub fn parse(text: &str) -> Result<ImageRegistry> {
        let bad = |why: &str| anyhow!("--image-registry {text}: {why}");
        if text.contains("://") {
            return Err(bad(
                "give host[:port][/path], without a scheme (Docker chooses HTTP or HTTPS)",
            ));
        }
        let address = text.trim_end_matches('/');
        let host = address.split('/').next().unwrap_or_default();
        if host.is_empty() || address.chars().any(|c| c.is_whitespace() || c == '@') {
            return Err(bad("not a registry address (host[:port][/path])"));
        }
        if let Some((_, port)) = host.rsplit_once(':') {
            port.parse::<u16>()
                .map_err(|_| bad(&format!("`{port}` is no port")))?;
        }
        Ok(ImageRegistry {
            address: address.to_owned(),
        })
    }

    /// The registry's `host:port`.
    pub fn host(&self) -> &str {
        self.address.split('/').next().unwrap_or(&self.address)
    }

    /// As given (`host:port[/path]`).
    pub fn address(&self) -> &str {
        &self.address
    }

    /// Whether Docker talks plain HTTP to it: a host on the loopback.
    fn plain_http(&self) -> bool {
        let host = self.host();
        let name = match host.rsplit_once(':') {
            Some((name, _)) if !host.ends_with(']') => name,
            _ => host,
        };
        let name = name.trim_start_matches('[').trim_end_matches(']');
        name == "localhost"
            || name
                .parse::<std::net::IpAddr>()
                .is_ok_and(|ip| ip.is_loopback())
    }

    /// `image`'s reference in this registry: `REGISTRY/repo:tag` (a tag
    /// `latest` where it has none; a registry host it names is dropped).
    pub fn reference(&self, image: &str) -> String {
        let mut repo = image;
        if let Some((first, rest)) = image.split_once('/') {
            if first.contains('.') || first.contains(':') || first == "localhost" {
                repo = rest;
            }
        }
        let last = repo.rsplit('/').next().unwrap_or(repo);
        if last.contains(':') || last.contains('@') {
            format!("{}/{repo}", self.address)
        } else {
            format!("{}/{repo}:latest", self.address)
        }
    }

    /// Checks the registry answers `GET /v2/` (200, or 401 where it wants
    /// a login); one line naming it and why not. A loopback registry is
    /// asked over plain HTTP, as Docker and containerd talk to it; any
    /// other is only reached (a TCP connection: its HTTPS is Docker's).
    pub async fn check(&self) -> Result<()> {
        let host = self.host();
        let with_port = if host.ends_with(']') || !host.contains(':') {
            format!("{host}:{}", if self.plain_http() { 80 } else { 443 })
        } else {
            host.to_owned()
        };
        let url = if self.plain_http() {
            format!("http://{host}/v2/")
        } else {
            format!("https://{host}/v2/")
        };
        let fail = |why: String| {
            anyhow!(
                "the image registry {} does not answer GET {url}: {why}",
                self.address
            )
        };
        let asked = async {
            let mut stream = tokio::net::TcpStream::connect(&with_port).await?;
            if !self.plain_http() {
                return Ok::<_, std::io::Error>(None);
            }
            let request = format!(
                "GET /v2/ HTTP/1.1\r\nHost: {host}\r\nUser-Agent: rpclab\r\nConnection: close\r\n\r\n"
            );
            stream.write_all(request.as_bytes()).await?;
            let mut head = Vec::new();
            let mut buf = [0u8; 512];
            while !head.windows(2).any(|w| w == b"\r\n") {
                let n = stream.read(&mut buf).await?;
                if n == 0 {
                    break;
                }
                head.extend_from_slice(&buf[..n]);
            }
            Ok(Some(String::from_utf8_lossy(&head).into_owned()))
        };
        let answer = tokio::time::timeout(ANSWER_WITHIN, asked)
            .await
            .map_err(|_| fail(format!("no answer in {} s", ANSWER_WITHIN.as_secs())))?
            .map_err(|e| fail(e.to_string()))?;
        let Some(head) = answer else {
            return Ok(());
        };
        let status = head.lines().next().unwrap_or_default();
        let code = status.split_whitespace().nth(1).unwrap_or_default();
        if code == "200" || code == "401" {
            return Ok(());
        }
        Err(fail(if status.is_empty() {
            "the connection closed without an answer".into()
        } else {
            format!("it answered `{status}`, not a registry's 200 or 401")
        }))
    }
}

/// Pushes `images` (each on `engine`) to `registry`, one after the
/// other: what was pushed, or one line for the first that was not.
pub async fn push_all(
    engine: &Engine,
    registry: &ImageRegistry,
    images: &[&str],
) -> Result<Vec<Pushed>> {
    let mut pushed = Vec::new();
    for image in images {
        let one = push(engine, registry, image).await?;
        crate::say!(
            "pushed {} as {} ({}) in {:.1} s",
            one.image,
            one.reference,
            one.digest,
            one.seconds
        );
        pushed.push(one);
    }
    Ok(pushed)
}

/// Tags `image` as its reference in `registry` and pushes it through the
/// Docker engine's API; the digest the registry took.
pub async fn push(engine: &Engine, registry: &ImageRegistry, image: &str) -> Result<Pushed> {
    let started = Instant::now();
    if engine.image_id(image).await?.is_none() {
        bail!(
            "cannot push {image} to {}: no such image on the Docker engine",
            registry.address
        );
    }
    let reference = registry.reference(image);
    let (repo, tag) = split_tag(&reference);
    let docker = engine.api();
    docker
        .tag_image(
            image,
            Some(
                TagImageOptionsBuilder::default()
                    .repo(repo)
                    .tag(tag)
                    .build(),
            ),
        )
        .await
        .with_context(|| format!("cannot tag {image} as {reference}"))?;
    let refused = |why: &str| {
        anyhow!(
            "the image registry {} refused {image} (pushed as {reference}): {}",
            registry.address,
            one_line(why)
        )
    };
    let mut stream = docker.push_image(
        repo,
        Some(PushImageOptionsBuilder::default().tag(tag).build()),
        None,
    );
    let mut digest = Err(refused("the push ended without a digest"));
    while let Some(item) = stream.next().await {
        let info = match item {
            Ok(info) => info,
            Err(e) => {
                digest = Err(refused(&stream_error(&e)));
                break;
            }
        };
        if let Some(error) = info.error_detail.and_then(|d| d.message).or(info.error) {
            digest = Err(refused(&error));
            break;
        }
        if let Some(d) = info.status.as_deref().and_then(digest_of) {
            digest = Ok(d);
        }
    }
    // The registry's tag goes from the Docker engine again (the image
    // keeps its own name), pushed or not.
    if reference != image {
        let untag = RemoveImageOptionsBuilder::default().noprune(true).build();
        let _ = docker.remove_image(&reference, Some(untag), None).await;
    }
    let digest = digest?;
    Ok(Pushed {
        image: image.to_owned(),
        reference,
        digest,
        seconds: (started.elapsed().as_secs_f64() * 10.0).round() / 10.0,
    })
}

/// `repo` and `tag` of `repo:tag` (a port's colon is the repository's).
fn split_tag(reference: &str) -> (&str, &str) {
    match reference.rsplit_once(':') {
        Some((repo, tag)) if !tag.contains('/') => (repo, tag),
        _ => (reference, "latest"),
    }
}

/// The digest a push's last status gives (`latest: digest: sha256:… size: 529`).
fn digest_of(status: &str) -> Option<String> {
    let (_, after) = status.split_once("digest: ")?;
    let digest = after.split_whitespace().next()?;
    digest.starts_with("sha256:").then(|| digest.to_owned())
}

/// What a failed push stream says, without bollard's wrapping.
fn stream_error(e: &bollard::errors::Error) -> String {
    match e {
        bollard::errors::Error::DockerStreamError { error } => error.clone(),
        bollard::errors::Error::DockerResponseServerError { message, .. } => message.clone(),
        other => other.to_string(),
    }
}

fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_registry_is_host_port_and_maybe_a_path() {
        let r = ImageRegistry::parse("127.0.0.1:5000").unwrap();
        assert_eq!(r.host(), "127.0.0.1:5000");
        assert!(r.plain_http());
        let r = ImageRegistry::parse("registry.example.com/team/").unwrap();
        assert_eq!(r.address(), "registry.example.com/team");
        assert_eq!(r.host(), "registry.example.com");
        assert!(!r.plain_http());
        assert!(ImageRegistry::parse("localhost:5000").unwrap().plain_http());
        assert!(ImageRegistry::parse("[::1]:5000").unwrap().plain_http());
        for bad in ["http://127.0.0.1:5000", "", "/x", "host:port", "a b"] {
            assert!(ImageRegistry::parse(bad).is_err(), "{bad}");
        }
        assert_eq!(
            ImageRegistry::parse("127.0.0.1:5000x")
                .unwrap_err()
                .to_string(),
            "--image-registry 127.0.0.1:5000x: `5000x` is no port"
        );
    }

    #[test]
    fn an_images_reference_is_the_registry_then_its_repository_and_tag() {
        let r = ImageRegistry::parse("127.0.0.1:5000").unwrap();
        assert_eq!(
            r.reference("rpclab/client:latest"),
            "127.0.0.1:5000/rpclab/client:latest"
        );
        assert_eq!(
            r.reference("rpclab/zookeeper"),
            "127.0.0.1:5000/rpclab/zookeeper:latest"
        );
        assert_eq!(
            r.reference("localhost:5001/rpclab/x:1"),
            "127.0.0.1:5000/rpclab/x:1"
        );
        assert_eq!(
            split_tag("127.0.0.1:5000/rpclab/client:latest"),
            ("127.0.0.1:5000/rpclab/client", "latest")
        );
        assert_eq!(
            split_tag("127.0.0.1:5000/rpclab/client"),
            ("127.0.0.1:5000/rpclab/client", "latest")
        );
    }

    #[test]
    fn a_pushs_digest_is_read_from_its_last_status() {
        assert_eq!(
            digest_of("latest: digest: sha256:0123abcd size: 2419").as_deref(),
            Some("sha256:0123abcd")
        );
        assert_eq!(digest_of("Pushed"), None);
        assert_eq!(digest_of("Layer already exists"), None);
    }

    #[tokio::test]
    async fn a_registry_that_does_not_answer_is_one_line_naming_it() {
        // Port 1 on the loopback: nothing listens there.
        let r = ImageRegistry::parse("127.0.0.1:1").unwrap();
        let e = r.check().await.unwrap_err().to_string();
        assert!(
            e.starts_with(
                "the image registry 127.0.0.1:1 does not answer GET http://127.0.0.1:1/v2/: "
            ),
            "{e}"
        );
        assert!(!e.contains('\n'), "{e}");
    }
}
