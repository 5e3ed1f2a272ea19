//! What a client needs from the objects a server sends: the remote
//! reference inside a stub (to know where to call), and a readable summary
//! of a `Throwable` (to report a remote exception).

use crate::error::Error;
use crate::wire::{ObjId, Uid};
use javaser::{Content, Decoder, Object, Value};
use std::fmt;

/// A remote reference, as `RemoteObject.writeObject` writes it in a stub:
/// where the object is exported and its id.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RemoteRef {
    /// `UnicastRef` (host and port) or `UnicastRef2` (with a format byte,
    /// and possibly a client socket factory, which is skipped).
    pub ref_class: String,
    /// The host the server names (`java.rmi.server.hostname`).
    pub host: String,
    /// The port the object is exported on.
    pub port: u16,
    /// The object's id, which every call to it carries.
    pub obj_id: ObjId,
    /// For a dynamic proxy stub, its interfaces (e.g. the service's remote
    /// interface); for a generated `_Stub` class, its class name.
    pub interfaces: Vec<String>,
}

/// A cursor over the block data of an object's `writeObject` annotations.
struct Block<'a> {
    bytes: &'a [u8],
}

impl Block<'_> {
    fn take(&mut self, n: usize) -> Result<&[u8], Error> {
        if self.bytes.len() < n {
            return Err(Error::Content("remote reference data ends early".into()));
        }
        let (a, b) = self.bytes.split_at(n);
        self.bytes = b;
        Ok(a)
    }
    fn u8(&mut self) -> Result<u8, Error> {
        Ok(self.take(1)?[0])
    }
    fn i16(&mut self) -> Result<i16, Error> {
        Ok(i16::from_be_bytes(self.take(2)?.try_into().expect("2")))
    }
    fn i32(&mut self) -> Result<i32, Error> {
        Ok(i32::from_be_bytes(self.take(4)?.try_into().expect("4")))
    }
    fn i64(&mut self) -> Result<i64, Error> {
        Ok(i64::from_be_bytes(self.take(8)?.try_into().expect("8")))
    }
    fn utf(&mut self) -> Result<String, Error> {
        let n = self.i16()? as u16 as usize;
        let b = self.take(n)?;
        javaser::mutf8::decode(b)
            .ok_or_else(|| Error::Content("remote reference holds invalid modified UTF-8".into()))
    }
}

/// The `java.rmi.server.RemoteObject` class data of `o` (a stub class or
/// a `RemoteObjectInvocationHandler`), if it has one.
fn remote_object_data(o: &Object) -> Option<&[Content]> {
    let hierarchy = o.desc.hierarchy();
    hierarchy
        .iter()
        .zip(&o.class_data)
        .find(|(d, _)| d.name == "java.rmi.server.RemoteObject")
        .map(|(_, data)| data.annotations.as_slice())
}

impl RemoteRef {
    /// Reads the reference out of a stub: a dynamic proxy whose handler is a
    /// `RemoteObjectInvocationHandler` (what `exportObject` makes since Java
    /// 5), or an instance of a generated `_Stub` class (e.g. the registry's).
    pub fn from_stub(stub: &Value) -> Result<RemoteRef, Error> {
        let o = stub
            .as_object()
            .ok_or_else(|| Error::Content(format!("expected a stub object, got {}", kind(stub))))?;
        let (holder, interfaces) = match &o.desc.proxy_interfaces {
            Some(interfaces) => {
                let h = o.get("h").and_then(Value::as_object).ok_or_else(|| {
                    Error::Content("proxy stub without an invocation handler object".into())
                })?;
                (h, interfaces.clone())
            }
            None => (o, vec![o.desc.name.clone()]),
        };
        let data = remote_object_data(holder).ok_or_else(|| {
            Error::Content(format!(
                "{} is not a java.rmi.server.RemoteObject",
                holder.desc.name
            ))
        })?;
        // Block data, with any object (a client socket factory) skipped.
        let mut bytes = Vec::new();
        for c in data {
            if let Content::BlockData(b) = c {
                bytes.extend_from_slice(b);
            }
        }
        let mut r = Block { bytes: &bytes };
        let ref_class = r.utf()?;
        match ref_class.as_str() {
            "UnicastRef" => {}
            "UnicastRef2" => {
                // TCPEndpoint.write: 0 = host/port, 1 = host/port/factory.
                let format = r.u8()?;
                if format > 1 {
                    return Err(Error::Content(format!("unknown endpoint format {format}")));
                }
            }
            other => {
                return Err(Error::Content(format!(
                "remote reference type `{other}` is not supported (UnicastRef, UnicastRef2 are; \
                     activatable and custom references are not)"
            )))
            }
        }
        let host = r.utf()?;
        let port = r.i32()?;
        let port = u16::try_from(port)
            .map_err(|_| Error::Content(format!("remote reference port {port} out of range")))?;
        let num = r.i64()?;
        let space = Uid {
            unique: r.i32()?,
            time: r.i64()?,
            count: r.i16()?,
        };
        Ok(RemoteRef {
            ref_class,
            host,
            port,
            obj_id: ObjId { num, space },
            interfaces,
        })
    }

    /// `host:port`.
    pub fn address(&self) -> String {
        if self.host.contains(':') {
            format!("[{}]:{}", self.host, self.port)
        } else {
            format!("{}:{}", self.host, self.port)
        }
    }
}

fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::String(_) => "a string",
        Value::Reference(_) => "a back reference",
        Value::Object(_) => "an object",
        Value::Array(_) => "an array",
        Value::Enum(_) => "an enum",
        Value::Class(_) => "a class",
        _ => "a primitive",
    }
}

/// A remote exception: the thrown class and message, and those of its
/// causes (`cause`, an `InvocationTargetException`'s `target`, a
/// `RemoteException`'s `detail`), outermost first.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RemoteException {
    /// `(class name, detail message)` from the outermost throwable in.
    pub chain: Vec<(String, Option<String>)>,
}

/// Causes followed at most (a stream can nest them arbitrarily).
const MAX_CAUSES: usize = 8;

impl RemoteException {
    /// Summarises a `Throwable` read from an exceptional return.
    pub fn from_value(v: &Value, dec: &Decoder<'_>) -> RemoteException {
        let mut chain = Vec::new();
        let mut cur = v;
        while chain.len() < MAX_CAUSES {
            let Some(o) = cur.as_object() else {
                if chain.is_empty() {
                    chain.push((format!("(not a throwable: {})", kind(cur)), None));
                }
                break;
            };
            let message = match o.get("detailMessage") {
                Some(Value::String(s)) => Some(s.clone()),
                Some(Value::Reference(h)) => dec.handle_string(*h).map(str::to_owned),
                _ => None,
            };
            chain.push((o.desc.name.clone(), message));
            // The next throwable: the first of these that is an object (a
            // Throwable without a cause points `cause` at itself, which is
            // written as a back reference and so ends the walk).
            let next = ["target", "detail", "cause"]
                .iter()
                .filter_map(|f| o.get(f))
                .find(|v| matches!(v, Value::Object(_)));
            match next {
                Some(n) => cur = n,
                None => break,
            }
        }
        RemoteException { chain }
    }

    /// The innermost class name (the exception the server's code threw).
    pub fn root_class(&self) -> &str {
        self.chain.last().map(|(c, _)| c.as_str()).unwrap_or("")
    }
}

impl fmt::Display for RemoteException {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, (class, message)) in self.chain.iter().enumerate() {
            if i > 0 {
                f.write_str(", caused by ")?;
            }
            f.write_str(class)?;
            if let Some(m) = message {
                write!(f, ": {m}")?;
            }
        }
        Ok(())
    }
}
