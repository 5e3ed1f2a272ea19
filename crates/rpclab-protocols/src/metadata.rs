//! A generic call's metadata, as ghz's `-m`/`-M` take it: a JSON object of
//! string values, or an array of such objects used round-robin (call `n`
//! gets set `n mod len`), each value a [`Text`] with ghz's template values.
//!
//! For gRPC the pairs are request headers. A key HTTP/2 or gRPC forbids is
//! refused before any load, in one line that names it and what to do
//! ([`check_key`]): a server would reset the stream, and every call would
//! fail the same way. A key ending in `-bin` is a binary header: its value
//! is base64, checked when parsed and sent as base64 (gRPC's wire form of
//! binary metadata). For Dubbo the same pairs are the invocation's
//! attachments.
//!
//! A set with no template value is encoded once ([`HeaderBlocks`]); a set
//! with one is encoded per call into one buffer with the request's fixed
//! header fields.

use crate::protocols::grpc::frame::{put_integer, put_literal};
use crate::template::{CallValues, Method, Needs, Segment, Text};
use base64::Engine as _;
use bytes::{BufMut, Bytes, BytesMut};
use serde_json::Value as Json;

/// One metadata pair.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Pair {
    pub key: String,
    pub value: Text,
}

/// Every metadata set, one per call in turn.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Metadata {
    sets: Vec<Vec<Pair>>,
}

/// How the metadata is used: gRPC headers are checked against HTTP/2's
/// rules; Dubbo attachments only need to be strings.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Use {
    GrpcHeaders,
    DubboAttachments,
}

impl Metadata {
    /// No metadata.
    pub const EMPTY: Metadata = Metadata { sets: Vec::new() };

    /// Parses `-m`'s JSON (`flag` names it in errors). An element of the
    /// wrong shape, a value that is not a string or an action ghz does not
    /// have is an error naming it.
    pub fn parse(json: &Json, flag: &str, method: &Method, used: Use) -> Result<Metadata, String> {
        let sets = match json {
            Json::Object(_) => vec![set(json, flag, method, used)?],
            Json::Array(items) if !items.is_empty() => items
                .iter()
                .enumerate()
                .map(|(i, item)| set(item, &format!("{flag}[{i}]"), method, used))
                .collect::<Result<_, _>>()?,
            Json::Array(_) => {
                return Err(format!(
                    "{flag}: an empty array; give an object, or objects"
                ))
            }
            other => {
                return Err(format!(
                    "{flag}: an object of string values (or an array of them) expected, got {}",
                    crate::protocols::grpc_generic::request::json_type(other)
                ))
            }
        };
        Ok(Metadata { sets })
    }

    /// Every set, in turn (none without metadata).
    pub fn sets(&self) -> &[Vec<Pair>] {
        &self.sets
    }

    pub fn is_empty(&self) -> bool {
        self.sets.iter().all(Vec::is_empty)
    }

    /// The pairs of call `number`.
    pub fn set_of(&self, number: u64) -> &[Pair] {
        if self.sets.is_empty() {
            return &[];
        }
        &self.sets[(number % self.sets.len() as u64) as usize]
    }

    /// What a call must take before its values are rendered.
    pub fn needs(&self) -> Needs {
        self.sets
            .iter()
            .flatten()
            .fold(Needs::NONE, |n, p| n.union(p.value.needs()))
    }

    /// Whether every set is the same on every call.
    pub fn fixed(&self) -> bool {
        self.sets
            .iter()
            .flatten()
            .all(|p| p.value.fixed().is_some())
    }

    /// The values that hold a template action, as written, for the report.
    pub fn templates(&self) -> Vec<String> {
        self.sets
            .iter()
            .flatten()
            .filter(|p| p.value.fixed().is_none())
            .map(|p| format!("{}: {}", p.key, p.value.written()))
            .collect()
    }

    /// The pairs of call `call`, rendered (Dubbo's attachments).
    pub fn rendered(&self, call: &CallValues) -> Vec<(String, String)> {
        self.set_of(call.number)
            .iter()
            .map(|p| (p.key.clone(), p.value.render(call)))
            .collect()
    }
}

fn set(json: &Json, at: &str, method: &Method, used: Use) -> Result<Vec<Pair>, String> {
    let Json::Object(fields) = json else {
        return Err(format!(
            "{at}: an object of string values expected, got {}",
            crate::protocols::grpc_generic::request::json_type(json)
        ));
    };
    let mut pairs = Vec::with_capacity(fields.len());
    for (key, value) in fields {
        let Json::String(text) = value else {
            return Err(format!(
                "{at}: `{key}`: a string value expected, got {} (write it in quotes)",
                crate::protocols::grpc_generic::request::json_type(value)
            ));
        };
        if used == Use::GrpcHeaders {
            check_key(key).map_err(|e| format!("{at}: {e}"))?;
        }
        let value = Text::parse(text, method).map_err(|e| format!("{at}: `{key}`: {e}"))?;
        if used == Use::GrpcHeaders {
            if key.ends_with("-bin") {
                let Some(fixed) = value.fixed() else {
                    return Err(format!(
                        "{at}: `{key}`: a binary header's value is base64 and cannot hold a template action"
                    ));
                };
                let bytes = decode_base64(fixed).map_err(|e| {
                    format!(
                        "{at}: `{key}` is a binary header (-bin): its value must be base64 ({e})"
                    )
                })?;
                let wire = base64::engine::general_purpose::STANDARD_NO_PAD.encode(bytes);
                pairs.push(Pair {
                    key: key.clone(),
                    value: Text::parse(&wire, method).expect("base64 holds no action"),
                });
                continue;
            }
            // The values a call draws are ASCII; what the user wrote around
            // them is checked here.
            let literals = value.segments().iter().filter_map(|s| match s {
                Segment::Literal(text) => Some(text.as_str()),
                Segment::Value { .. } => None,
            });
            for literal in literals {
                if let Some(bad) = literal.chars().find(|c| !(' '..='~').contains(c)) {
                    return Err(format!(
                        "{at}: `{key}`: {bad:?} cannot be in a gRPC header's value (printable ASCII only); \
                         send other bytes base64 under a key ending in -bin"
                    ));
                }
            }
        }
        pairs.push(Pair {
            key: key.clone(),
            value,
        });
    }
    if used == Use::GrpcHeaders {
        // HTTP/2 counts 32 bytes a field (RFC 9113 §6.5.2); the largest
        // values a run may draw.
        let widest = CallValues::fixed(u64::MAX, u64::MAX, 0, i128::from(i64::MAX), 0);
        let size: usize = pairs
            .iter()
            .map(|p| 32 + p.key.len() + p.value.len(&widest))
            .sum();
        if size > MAX_METADATA {
            return Err(format!(
                "{at}: {size} bytes of metadata; gRPC servers take {MAX_METADATA} bytes of \
                 headers by default (grpc-java, grpc-go), send less"
            ));
        }
    }
    Ok(pairs)
}

/// The most metadata a set may hold, in HTTP/2's measure: the header list
/// size gRPC servers accept by default, which also keeps the request's
/// header block within one HEADERS frame.
const MAX_METADATA: usize = 8192;

/// Standard or URL-safe base64, padded or not (gRPC's peers accept both).
fn decode_base64(text: &str) -> Result<Vec<u8>, base64::DecodeError> {
    use base64::engine::general_purpose::{STANDARD_NO_PAD, URL_SAFE_NO_PAD};
    let trimmed = text.trim_end_matches('=');
    STANDARD_NO_PAD
        .decode(trimmed)
        .or_else(|_| URL_SAFE_NO_PAD.decode(trimmed))
}

/// The connection-specific headers HTTP/2 forbids (RFC 9113 §8.2.2).
const CONNECTION_SPECIFIC: &[&str] = &[
    "connection",
    "keep-alive",
    "proxy-connection",
    "transfer-encoding",
    "upgrade",
];

/// The headers rpclab writes itself on every gRPC request.
const OWN: &[&str] = &["content-type", "user-agent", "te", "host"];

/// Checks a gRPC metadata key against HTTP/2's and gRPC's rules; the error
/// names the key and what to write instead.
pub fn check_key(key: &str) -> Result<(), String> {
    if key.is_empty() {
        return Err("an empty metadata key; give each value a name".into());
    }
    if key.starts_with(':') {
        return Err(format!(
            "`{key}` is an HTTP/2 pseudo-header, which the client writes itself; remove it"
        ));
    }
    if key.bytes().any(|b| b.is_ascii_uppercase()) {
        return Err(format!(
            "`{key}`: HTTP/2 header names are lower-case; write `{}`",
            key.to_ascii_lowercase()
        ));
    }
    if CONNECTION_SPECIFIC.contains(&key) {
        return Err(format!(
            "`{key}` is a connection-specific header, which HTTP/2 forbids; remove it"
        ));
    }
    if key == "te" {
        return Err(
            "`te` is sent as `te: trailers`, the only value HTTP/2 allows; remove it".into(),
        );
    }
    if OWN.contains(&key) {
        return Err(format!(
            "`{key}` is written by the client on every gRPC request; remove it"
        ));
    }
    if key.starts_with("grpc-") {
        return Err(format!(
            "`{key}`: names that start with grpc- are reserved by gRPC; choose another name"
        ));
    }
    if let Some(bad) = key
        .chars()
        .find(|c| !(c.is_ascii_lowercase() || c.is_ascii_digit() || matches!(c, '-' | '_' | '.')))
    {
        return Err(format!(
            "`{key}`: {bad:?} cannot be in a gRPC metadata key (use a-z, 0-9, -, _ and .)"
        ));
    }
    Ok(())
}

/// A request's header blocks: the fixed fields of the method's requests
/// followed by each metadata set, encoded once when no set changes from
/// call to call, else per call.
#[derive(Debug)]
pub struct HeaderBlocks {
    base: Bytes,
    /// One block per set, when every set is fixed.
    fixed: Vec<Bytes>,
    metadata: Metadata,
}

impl HeaderBlocks {
    /// `base`: the HPACK block of the request's own fields.
    pub fn new(base: Vec<u8>, metadata: &Metadata) -> HeaderBlocks {
        let fixed = if metadata.fixed() {
            let sets = metadata.sets.len().max(1);
            (0..sets as u64)
                .map(|n| {
                    let mut block = base.clone();
                    for pair in metadata.set_of(n) {
                        put_literal(&mut block, 0, &pair.key, pair.value.fixed().unwrap_or(""));
                    }
                    Bytes::from(block)
                })
                .collect()
        } else {
            Vec::new()
        };
        HeaderBlocks {
            base: Bytes::from(base),
            fixed,
            metadata: metadata.clone(),
        }
    }

    /// Whether a call's headers need [`CallValues`] with its time or UUID.
    pub fn needs(&self) -> Needs {
        self.metadata.needs()
    }

    /// The header block of call `call`.
    pub fn block(&self, call: &CallValues) -> Bytes {
        if !self.fixed.is_empty() {
            let i = (call.number % self.fixed.len() as u64) as usize;
            return self.fixed[i].clone();
        }
        let pairs = self.metadata.set_of(call.number);
        let size = self.base.len()
            + pairs
                .iter()
                .map(|p| 12 + p.key.len() + p.value.len(call))
                .sum::<usize>();
        let mut out = BytesMut::with_capacity(size);
        out.put_slice(&self.base);
        let mut field = Vec::new();
        for pair in pairs {
            // A literal field without indexing, its name new (RFC 7541 §6.2.2).
            field.clear();
            put_integer(&mut field, 4, 0, 0);
            put_integer(&mut field, 7, 0, pair.key.len());
            field.extend_from_slice(pair.key.as_bytes());
            put_integer(&mut field, 7, 0, pair.value.len(call));
            out.put_slice(&field);
            pair.value.write(call, &mut out);
        }
        out.freeze()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use serde_json::json;

    fn grpc(json: Json) -> Result<Metadata, String> {
        Metadata::parse(&json, "--metadata", &Method::default(), Use::GrpcHeaders)
    }

    #[test]
    fn forbidden_keys_are_one_line_that_names_them_and_what_to_do() {
        let cases = [
            ("Authorization", "`Authorization`: HTTP/2 header names are lower-case; write `authorization`"),
            (":path", "`:path` is an HTTP/2 pseudo-header, which the client writes itself; remove it"),
            ("connection", "`connection` is a connection-specific header, which HTTP/2 forbids; remove it"),
            ("keep-alive", "`keep-alive` is a connection-specific header, which HTTP/2 forbids; remove it"),
            ("te", "`te` is sent as `te: trailers`, the only value HTTP/2 allows; remove it"),
            ("content-type", "`content-type` is written by the client on every gRPC request; remove it"),
            ("grpc-timeout", "`grpc-timeout`: names that start with grpc- are reserved by gRPC; choose another name"),
            ("x auth", "`x auth`: ' ' cannot be in a gRPC metadata key (use a-z, 0-9, -, _ and .)"),
            ("", "an empty metadata key; give each value a name"),
        ];
        for (key, message) in cases {
            let e = grpc(json!({ key: "v" })).unwrap_err();
            assert_eq!(e, format!("--metadata: {message}"));
            assert!(!e.contains('\n'));
        }
        assert!(grpc(json!({"authorization": "Bearer x", "x-tenant_id.1": "t"})).is_ok());
        // Dubbo's attachments are not HTTP/2 headers.
        assert!(Metadata::parse(
            &json!({"Tenant": "t"}),
            "--metadata",
            &Method::default(),
            Use::DubboAttachments
        )
        .is_ok());
    }

    #[test]
    fn shapes_and_values_are_checked_by_index_and_key() {
        assert_eq!(
            grpc(json!([{"a": "1"}, {"b": 2}])).unwrap_err(),
            "--metadata[1]: `b`: a string value expected, got a number (write it in quotes)"
        );
        assert_eq!(
            grpc(json!([{"a": "1"}, "b"])).unwrap_err(),
            "--metadata[1]: an object of string values expected, got a string"
        );
        assert!(grpc(json!("x"))
            .unwrap_err()
            .starts_with("--metadata: an object of string values"));
        assert!(grpc(json!({"a": "{{.Nope}}"}))
            .unwrap_err()
            .starts_with("--metadata: `a`: unknown template action `{{.Nope}}`"));
        assert_eq!(
            grpc(json!({"trace-bin": "not base64!"})).unwrap_err(),
            "--metadata: `trace-bin` is a binary header (-bin): its value must be base64 (Invalid symbol 32, offset 3.)"
        );
        assert!(grpc(json!({"a": "é"}))
            .unwrap_err()
            .contains("printable ASCII only"));
        assert!(grpc(json!({"a": "{{.UUID}}\n"}))
            .unwrap_err()
            .contains("printable ASCII only"));
    }

    #[test]
    fn sets_go_round_robin_and_fixed_sets_are_encoded_once() {
        let md = grpc(json!([{"tenant": "a"}, {"tenant": "b", "k-bin": "AAEC"}])).unwrap();
        assert!(md.fixed());
        let blocks = HeaderBlocks::new(vec![0x83], &md);
        let call = |n| CallValues::new(n, 0, Needs::NONE);
        assert_eq!(&blocks.block(&call(0))[..], b"\x83\x00\x06tenant\x01a");
        // (serde_json's objects keep their keys sorted.)
        assert_eq!(
            &blocks.block(&call(1))[..],
            b"\x83\x00\x05k-bin\x04AAEC\x00\x06tenant\x01b"
        );
        assert_eq!(blocks.block(&call(2)), blocks.block(&call(0)));
    }

    #[test]
    fn a_templated_value_is_encoded_per_call() {
        let md = grpc(json!({"request-id": "r{{.RequestNumber}}", "tenant": "t"})).unwrap();
        assert!(!md.fixed());
        assert_eq!(md.templates(), ["request-id: r{{.RequestNumber}}"]);
        let blocks = HeaderBlocks::new(vec![0x83], &md);
        let block = blocks.block(&CallValues::new(1234, 0, Needs::NONE));
        assert_eq!(
            &block[..],
            b"\x83\x00\x0arequest-id\x05r1234\x00\x06tenant\x01t"
        );
    }

    proptest! {
        /// What is accepted is what gRPC's key grammar allows, less the
        /// names the client writes or HTTP/2 forbids.
        #[test]
        fn accepted_keys_are_grpc_keys(key in "[a-zA-Z0-9:_. -]{0,12}") {
            if check_key(&key).is_ok() {
                prop_assert!(!key.is_empty());
                prop_assert!(key.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b"-_.".contains(&b)));
                prop_assert!(!key.starts_with("grpc-"));
                prop_assert!(!CONNECTION_SPECIFIC.contains(&key.as_str()) && !OWN.contains(&key.as_str()));
            }
        }
    }
}
