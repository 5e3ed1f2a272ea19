//! Messages: what a client sends (calls, pings, DGC acknowledgements) and
//! what a server answers (returns, ping acknowledgements).
//!
//! A call is `0x50` and a serialization stream holding, as block data, the
//! target [`ObjId`], an operation number and a hash, then the arguments
//! (objects with `writeObject`, primitives as block data). Stubs generated
//! since Java 1.2 and dynamic proxies send operation `-1` and the
//! [method hash](crate::method_hash); the registry and the DGC still use
//! the 1.1 stub protocol (an operation index and the interface hash).
//!
//! A return is `0x51` and a stream holding a return type (normal or
//! exceptional) and a [`Uid`] as block data, then the value (nothing for
//! a `void` method) or the `Throwable`.

use crate::error::Error;
pub use crate::wire::Progress;
use crate::wire::{self, ObjId, Uid};
use javaser::{ClassDesc, DecodeError, Decoder, Encoder, FieldDesc, Value, SC_SERIALIZABLE};
use std::sync::OnceLock;

/// The operation number of calls identified by a method hash.
pub const HASH_OP: i32 = -1;

/// `java.rmi.registry.Registry`'s 1.1 stub interface hash.
pub const REGISTRY_INTERFACE_HASH: i64 = 4_905_912_898_345_647_071;
/// Registry operation `lookup(String)` (bind 0, list 1, lookup 2, rebind 3,
/// unbind 4).
pub const REGISTRY_LOOKUP: i32 = 2;

/// `java.rmi.dgc.DGC`'s 1.1 stub interface hash.
pub const DGC_INTERFACE_HASH: i64 = -669_196_253_586_618_813;
/// DGC operation `dirty(ObjID[], long, Lease)` (clean is 0).
pub const DGC_DIRTY: i32 = 1;

/// Starts a call message in `out` (cleared first): the message byte, the
/// stream header and the call header. Write the arguments with the
/// returned encoder (it writes `TC_NULL` class annotations, as RMI's
/// `MarshalOutputStream` does), then [`Encoder::finish`].
pub fn begin_call(mut out: Vec<u8>, target: &ObjId, op: i32, hash: i64) -> Encoder {
    out.clear();
    out.push(wire::CALL);
    let mut enc = Encoder::with_buffer(out).with_null_class_annotations();
    target.write(&mut enc);
    enc.write_int(op);
    enc.write_long(hash);
    enc
}

/// A registry `lookup(name)` call.
pub fn lookup_call(name: &str, out: Vec<u8>) -> Vec<u8> {
    let mut enc = begin_call(
        out,
        &ObjId::REGISTRY,
        REGISTRY_LOOKUP,
        REGISTRY_INTERFACE_HASH,
    );
    enc.write_string(name);
    enc.finish()
}

/// A DGC acknowledgement of the return whose header carried `ack`.
pub fn dgc_ack(ack: &Uid) -> [u8; 1 + wire::UID_LEN] {
    let mut b = [0u8; 1 + wire::UID_LEN];
    b[0] = wire::DGC_ACK;
    b[1..].copy_from_slice(&ack.to_bytes());
    b
}

/// `java.rmi.dgc.VMID`: who holds a lease (8 address bytes and a UID).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Vmid {
    /// `addr`: the JDK writes 8 random bytes.
    pub addr: Vec<u8>,
    /// `uid`.
    pub uid: Uid,
}

struct DgcDescs {
    objid_array: ClassDesc,
    objid: ClassDesc,
    uid: ClassDesc,
    lease: ClassDesc,
    vmid: ClassDesc,
}

fn dgc_descs() -> &'static DgcDescs {
    static D: OnceLock<DgcDescs> = OnceLock::new();
    D.get_or_init(|| DgcDescs {
        objid_array: ClassDesc::new(
            "[Ljava.rmi.server.ObjID;",
            -8_713_620_060_265_225_090,
            SC_SERIALIZABLE,
            vec![],
        ),
        objid: ClassDesc::new(
            "java.rmi.server.ObjID",
            -6_386_392_263_968_365_220,
            SC_SERIALIZABLE,
            vec![
                FieldDesc::prim(b'J', "objNum"),
                FieldDesc::object("space", "Ljava/rmi/server/UID;"),
            ],
        ),
        uid: ClassDesc::new(
            "java.rmi.server.UID",
            1_086_053_664_494_604_050,
            SC_SERIALIZABLE,
            vec![
                FieldDesc::prim(b'I', "unique"),
                FieldDesc::prim(b'J', "time"),
                FieldDesc::prim(b'S', "count"),
            ],
        ),
        lease: ClassDesc::new(
            "java.rmi.dgc.Lease",
            -5_713_411_624_328_831_948,
            SC_SERIALIZABLE,
            vec![
                FieldDesc::object("vmid", "Ljava/rmi/dgc/VMID;"),
                FieldDesc::prim(b'J', "value"),
            ],
        ),
        vmid: ClassDesc::new(
            "java.rmi.dgc.VMID",
            -538_642_295_484_486_218,
            SC_SERIALIZABLE,
            vec![
                FieldDesc::object("addr", "[B"),
                FieldDesc::object("uid", "Ljava/rmi/server/UID;"),
            ],
        ),
    })
}

fn write_uid_object(enc: &mut Encoder, uid: &Uid) -> Result<(), Error> {
    // Fields in descriptor order: count, time, unique.
    enc.begin_object(&dgc_descs().uid)?;
    enc.write_short(uid.count);
    enc.write_long(uid.time);
    enc.write_int(uid.unique);
    enc.end_object()?;
    Ok(())
}

/// A DGC `dirty(ids, sequence, new Lease(vmid, lease_ms))` call: what the
/// JDK's client sends to the server of a remote reference it has just
/// received, so that the server keeps the object while the lease lasts.
pub fn dirty_call(
    ids: &[ObjId],
    sequence: i64,
    vmid: &Vmid,
    lease_ms: i64,
    out: Vec<u8>,
) -> Result<Vec<u8>, Error> {
    let d = dgc_descs();
    let mut enc = begin_call(out, &ObjId::DGC, DGC_DIRTY, DGC_INTERFACE_HASH);
    enc.begin_array(&d.objid_array, ids.len())?;
    for id in ids {
        enc.begin_object(&d.objid)?;
        enc.write_long(id.num);
        write_uid_object(&mut enc, &id.space)?;
        enc.end_object()?;
    }
    enc.end_object()?;
    enc.write_long(sequence);
    enc.begin_object(&d.lease)?;
    enc.write_long(lease_ms);
    enc.begin_object(&d.vmid)?;
    enc.begin_array(&javaser::java::byte_array_desc(), vmid.addr.len())?;
    for b in &vmid.addr {
        enc.write_byte(*b as i8);
    }
    enc.end_object()?;
    write_uid_object(&mut enc, &vmid.uid)?;
    enc.end_object()?;
    enc.end_object()?;
    Ok(enc.finish())
}

/// Normal or exceptional.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReturnStatus {
    /// The method returned; its value follows (none for `void`).
    Normal,
    /// The method (or the RMI runtime) threw; the `Throwable` follows.
    Exceptional,
}

/// A parsed return message.
#[derive(Debug)]
pub struct Return<'a> {
    /// Normal or exceptional.
    pub status: ReturnStatus,
    /// The UID the client acknowledges with a [`dgc_ack`] when the value
    /// contained remote references.
    pub ack: Uid,
    /// The value (`None` for a normal return of a `void` method).
    pub value: Option<Value>,
    /// The decoder that read it, for string handles the value refers to
    /// ([`Decoder::handle_string`]).
    pub decoder: Decoder<'a>,
}

/// Offset of the value in a return: message byte, stream header, a
/// 15-byte block (`TC_BLOCKDATA`, length, return type, UID).
const RETURN_VALUE_AT: usize = 1 + 4 + 2 + 1 + wire::UID_LEN;

/// The total length of a return whose value is a string, from its first
/// bytes (`None` when they do not tell). Lets a reader wait for a 1 MiB
/// string's bytes instead of re-parsing a growing buffer.
fn string_return_len(buf: &[u8]) -> Option<usize> {
    let head = buf.get(..RETURN_VALUE_AT + 1)?;
    if head[1..8] != [0xac, 0xed, 0x00, 0x05, 0x77, 0x0f, wire::NORMAL_RETURN] {
        return None;
    }
    let v = RETURN_VALUE_AT;
    match head[v] {
        javaser::tc::TC_STRING => {
            let n = buf.get(v + 1..v + 3)?;
            Some(v + 3 + u16::from_be_bytes([n[0], n[1]]) as usize)
        }
        javaser::tc::TC_LONGSTRING => {
            let n = i64::from_be_bytes(buf.get(v + 1..v + 9)?.try_into().ok()?);
            usize::try_from(n).ok()?.checked_add(v + 9)
        }
        _ => None,
    }
}

/// Whether a decode error of a prefix of `available` bytes may only mean
/// that the message goes on.
fn truncated(e: &DecodeError, available: usize) -> bool {
    match *e {
        DecodeError::UnexpectedEof { .. } => true,
        // The decoder reports a length larger than the rest of its input
        // this way (negative lengths are malformed whatever follows).
        DecodeError::InvalidLength { length, offset } => length >= 0 && offset <= available,
        _ => false,
    }
}

/// Parses a return message from the bytes received so far. `has_value`:
/// whether the called method returns something (a normal return of a
/// `void` method ends after its header). Messages longer than `limit` are
/// an error.
pub fn parse_return(
    buf: &[u8],
    has_value: bool,
    limit: usize,
) -> Result<Progress<Return<'_>>, Error> {
    if !starts_with(buf, wire::RETURN, "Return (0x51)")? {
        return Ok(Progress::NeedMore { total: None });
    }
    let total = if has_value {
        string_return_len(buf)
    } else {
        None
    };
    if let Some(total) = total {
        if total > limit {
            return Err(Error::TooLong { limit });
        }
        if buf.len() < total {
            return Ok(Progress::NeedMore { total: Some(total) });
        }
    }
    let body = &buf[1..];
    let parsed = (|| -> Result<Return<'_>, DecodeError> {
        let mut decoder = Decoder::new(body)?;
        let at = decoder.position();
        let status = match decoder.read_byte()? as u8 {
            wire::NORMAL_RETURN => ReturnStatus::Normal,
            wire::EXCEPTIONAL_RETURN => ReturnStatus::Exceptional,
            _ => {
                return Err(DecodeError::InvalidDescriptor {
                    offset: at,
                    what: "return type is neither NormalReturn (1) nor ExceptionalReturn (2)",
                })
            }
        };
        let ack = Uid::read(&mut decoder)?;
        let value = if has_value || status == ReturnStatus::Exceptional {
            Some(decoder.read_object()?)
        } else {
            None
        };
        Ok(Return {
            status,
            ack,
            value,
            decoder,
        })
    })();
    match parsed {
        Ok(ret) => {
            let len = 1 + ret.decoder.position();
            Ok(Progress::Done { value: ret, len })
        }
        Err(e) if truncated(&e, body.len()) => {
            if buf.len() >= limit {
                Err(Error::TooLong { limit })
            } else {
                Ok(Progress::NeedMore { total })
            }
        }
        Err(e) => Err(e.into()),
    }
}

/// A parsed call header (what a server reads first).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CallHeader {
    /// The target object.
    pub target: ObjId,
    /// Operation: [`HASH_OP`] or a 1.1 stub's operation index.
    pub op: i32,
    /// The method hash, or a 1.1 stub's interface hash.
    pub hash: i64,
}

/// Whether `buf` starts with the message byte `kind` (`false` while it is
/// empty); another byte is an error that names `expected`.
fn starts_with(buf: &[u8], kind: u8, expected: &'static str) -> Result<bool, Error> {
    match buf.first() {
        None => Ok(false),
        Some(&byte) if byte == kind => Ok(true),
        Some(&byte) => Err(Error::UnexpectedByte {
            byte,
            offset: 0,
            expected,
        }),
    }
}

/// Parses a call message whose arguments are `args` objects (read with
/// `readObject`; a call with primitive arguments is read with the
/// returned decoder). For tests and tools: a client never reads calls.
pub fn parse_call(buf: &[u8], args: usize) -> Result<Progress<(CallHeader, Vec<Value>)>, Error> {
    if !starts_with(buf, wire::CALL, "Call (0x50)")? {
        return Ok(Progress::NeedMore { total: None });
    }
    let body = &buf[1..];
    let parsed = (|| -> Result<(CallHeader, Vec<Value>, usize), DecodeError> {
        let mut dec = Decoder::new(body)?;
        let target = ObjId::read(&mut dec)?;
        let op = dec.read_int()?;
        let hash = dec.read_long()?;
        let mut values = Vec::with_capacity(args.min(body.len()));
        for _ in 0..args {
            values.push(dec.read_object()?);
        }
        Ok((CallHeader { target, op, hash }, values, dec.position()))
    })();
    match parsed {
        Ok((h, v, at)) => Ok(Progress::Done {
            value: (h, v),
            len: 1 + at,
        }),
        Err(e) if truncated(&e, body.len()) => Ok(Progress::NeedMore { total: None }),
        Err(e) => Err(e.into()),
    }
}
