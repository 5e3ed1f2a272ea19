//! Provider discovery in ZooKeeper, as a Motan referer does it with
//! `motan-registry-zookeeper`:
//!
//! ```text
//! /motan/<group>/<service>/server/<ip:port>             available providers
//! /motan/<group>/<service>/unavailableServer/<ip:port>  registered, not (yet) available
//! ```
//!
//! A node's data is the provider URL (`URL.toFullStr()`), e.g.
//! `motan2://127.0.0.1:8002/rpclab.contract.BenchService?group=rpclab&serialization=hessian2&...`,
//! written by zkclient: with registry type `zookeeper` its default
//! `SerializableSerializer` stores the Java serialization of the `String`
//! (`AC ED 00 05 74 <u16 length> <modified UTF-8>`); with type `zk` Motan's
//! `StringSerializer` stores the bytes as UTF-8. Both are read.
//!
//! A provider sits under `unavailableServer` until its application turns
//! the registry heartbeat switcher on; finding it only there is reported as
//! exactly that, since it is the usual mistake.

use super::codec::SERVICE;
use crate::discovery::{Listed, ServiceUrl, ZooKeeper};
use crate::protocol::CallError;

/// The path of the available providers of the contract's service in `group`.
pub fn server_path(group: &str) -> String {
    format!("/motan/{group}/{SERVICE}/server")
}

/// Lists the available motan2 providers of the service in `group`.
pub async fn lookup(zk: &ZooKeeper, group: &str) -> Result<Vec<ServiceUrl>, CallError> {
    let path = server_path(group);
    let nodes = match zk.children_with_data(&path).await {
        Ok(nodes) => nodes,
        // No such path (zookeeper-client's NoNode, "node not exists"):
        // nothing registered (yet), said below with the likely reason.
        Err(CallError::Connect(m)) if m.ends_with("node not exists") => Vec::new(),
        Err(e) => return Err(e),
    };
    let listed = parse_nodes(&nodes);
    if listed.providers.is_empty() {
        let unavailable = format!("/motan/{group}/{SERVICE}/unavailableServer");
        let parked = zk.children(&unavailable).await.unwrap_or_default();
        let why = if !parked.is_empty() {
            format!(
                "; {} registered under {unavailable} ({}) but not available: the provider has \
                 not turned Motan's registry heartbeat switcher on \
                 (MotanSwitcherUtil.setSwitcherValue(\"{}\", true))",
                parked.len(),
                parked.join(", "),
                "feature.configserver.heartbeat"
            )
        } else if !listed.skipped.is_empty() {
            listed.skipped_note()
        } else {
            " (is the provider's group the client's `group` option?)".to_owned()
        };
        return Err(CallError::Connect(format!(
            "registry {}: no motan2 provider under {path}{why}",
            zk.url()
        )));
    }
    Ok(listed.providers)
}

/// The motan2 provider URLs among `(child name, node data)` pairs, and why
/// the others were skipped.
pub fn parse_nodes(nodes: &[(String, Vec<u8>)]) -> Listed {
    let mut listed = Listed::default();
    for (name, data) in nodes {
        let url = node_url(data)
            .and_then(|url| ServiceUrl::parse(&url))
            .map_err(|e| format!("{name}: {e}"));
        listed.add("motan2", name, url);
    }
    listed
}

/// The URL a node holds: a Java-serialized `String` or plain UTF-8.
pub fn node_url(data: &[u8]) -> Result<String, String> {
    const STREAM_HEADER: [u8; 4] = [0xac, 0xed, 0x00, 0x05];
    const TC_STRING: u8 = 0x74;
    const TC_LONGSTRING: u8 = 0x7c;
    let Some(rest) = data.strip_prefix(&STREAM_HEADER) else {
        return String::from_utf8(data.to_vec())
            .map_err(|_| "node data is neither a Java-serialized String nor UTF-8".to_owned());
    };
    let (len, text) = match rest.split_first() {
        Some((&TC_STRING, r)) if r.len() >= 2 => {
            (usize::from(u16::from_be_bytes([r[0], r[1]])), &r[2..])
        }
        Some((&TC_LONGSTRING, r)) if r.len() >= 8 => {
            let n = u64::from_be_bytes(r[..8].try_into().expect("8 bytes"));
            (usize::try_from(n).unwrap_or(usize::MAX), &r[8..])
        }
        _ => return Err("node data is a Java-serialized object, not a String".to_owned()),
    };
    if text.len() != len {
        return Err(format!(
            "Java-serialized String of {len} bytes with {} bytes of data",
            text.len()
        ));
    }
    modified_utf8(text)
}

/// Java's modified UTF-8 (`DataOutput.writeUTF`): UTF-8 except that NUL is
/// `C0 80` and supplementary characters are surrogate pairs. URLs are ASCII;
/// the two differences are mapped, not assumed away.
fn modified_utf8(bytes: &[u8]) -> Result<String, String> {
    if let Ok(s) = std::str::from_utf8(bytes) {
        return Ok(s.to_owned());
    }
    // Decode as CESU-8 through UTF-16.
    let mut units = Vec::with_capacity(bytes.len());
    let mut i = 0;
    let bad = || "node data is not modified UTF-8".to_owned();
    while i < bytes.len() {
        let b = bytes[i];
        let (unit, n) = match b {
            0x00..=0x7f => (u16::from(b), 1),
            0xc0..=0xdf => {
                let c = *bytes.get(i + 1).ok_or_else(bad)?;
                ((u16::from(b & 0x1f) << 6) | u16::from(c & 0x3f), 2)
            }
            0xe0..=0xef => {
                let c = *bytes.get(i + 1).ok_or_else(bad)?;
                let d = *bytes.get(i + 2).ok_or_else(bad)?;
                (
                    (u16::from(b & 0x0f) << 12) | (u16::from(c & 0x3f) << 6) | u16::from(d & 0x3f),
                    3,
                )
            }
            _ => return Err(bad()),
        };
        units.push(unit);
        i += n;
    }
    String::from_utf16(&units).map_err(|_| bad())
}

#[cfg(test)]
mod tests {
    use super::*;

    const URL: &str = "motan2://127.0.0.1:8002/rpclab.contract.BenchService?group=rpclab&serialization=hessian2&nodeType=service&version=1.0";

    fn java_string(s: &str) -> Vec<u8> {
        let mut out = vec![0xac, 0xed, 0x00, 0x05, 0x74];
        out.extend_from_slice(&(s.len() as u16).to_be_bytes());
        out.extend_from_slice(s.as_bytes());
        out
    }

    #[test]
    fn reads_both_node_encodings() {
        assert_eq!(node_url(&java_string(URL)).unwrap(), URL);
        assert_eq!(node_url(URL.as_bytes()).unwrap(), URL);
        // NUL as C0 80.
        assert_eq!(
            node_url(&[0xac, 0xed, 0, 5, 0x74, 0, 3, b'a', 0xc0, 0x80]).unwrap(),
            "a\0"
        );
        for bad in [
            &[0xac, 0xed, 0, 5, 0x73, 0x72][..],
            &[0xac, 0xed, 0, 5, 0x74, 0, 9, b'a'],
            &[0xac, 0xed, 0, 5, 0x74, 0, 1, 0xff],
            &[0xff, 0xfe],
        ] {
            assert!(node_url(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn parses_provider_nodes() {
        let nodes = vec![
            ("127.0.0.1:8002".to_owned(), java_string(URL)),
            (
                "127.0.0.1:8003".to_owned(),
                b"motan://127.0.0.1:8003/x?group=rpclab".to_vec(),
            ),
            ("junk".to_owned(), vec![0xff]),
        ];
        let Listed { providers, skipped } = parse_nodes(&nodes);
        assert_eq!(providers.len(), 1);
        assert_eq!(providers[0].address(), "127.0.0.1:8002");
        assert_eq!(providers[0].params["serialization"], "hessian2");
        assert_eq!(skipped.len(), 2, "{skipped:?}");
        assert_eq!(
            server_path("rpclab"),
            "/motan/rpclab/rpclab.contract.BenchService/server"
        );
    }
}
