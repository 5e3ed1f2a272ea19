//! JRMP's constants (`sun.rmi.transport.TransportConstants`), the identifiers
//! every message carries, and the connection handshake.
//!
//! A connection starts with the client's header (`JRMI`, version 2, stream
//! protocol); the server answers `ProtocolAck` and the client's host and
//! port as it sees them; the client then states its own endpoint (which
//! the server ignores). After that the client sends messages (call, ping,
//! DGC acknowledgement) and the server answers calls with a return and pings
//! with a ping acknowledgement, one call at a time per connection.

use crate::error::Error;
use javaser::{DecodeError, Encoder};

/// The outcome of parsing the bytes received so far.
#[derive(Debug)]
pub enum Progress<T> {
    /// A whole message: its value and how many bytes it took.
    Done {
        /// The message.
        value: T,
        /// Its length in bytes, from the message byte on.
        len: usize,
    },
    /// The message is not complete yet; `total` is its whole length when
    /// the bytes so far tell it.
    NeedMore {
        /// The message's total length, when known.
        total: Option<usize>,
    },
}

/// `JRMI`: every connection's first four bytes.
pub const MAGIC: u32 = 0x4a52_4d49;
/// Protocol version 2 (every JDK since 1.2).
pub const VERSION: u16 = 2;
/// Stream protocol: many messages on one connection (the JDK's choice for
/// TCP); the alternatives are single-op (0x4c) and multiplex (0x4d).
pub const STREAM_PROTOCOL: u8 = 0x4b;
/// The server accepts the protocol.
pub const PROTOCOL_ACK: u8 = 0x4e;
/// The server refuses the protocol.
pub const PROTOCOL_NACK: u8 = 0x4f;

/// Client message: a call.
pub const CALL: u8 = 0x50;
/// Server message: a return.
pub const RETURN: u8 = 0x51;
/// Client message: is the connection alive?
pub const PING: u8 = 0x52;
/// Server message: it is.
pub const PING_ACK: u8 = 0x53;
/// Client message: the remote references of a return have been registered
/// (so the server may drop the strong references it kept for them).
pub const DGC_ACK: u8 = 0x54;

/// Return type: the value follows.
pub const NORMAL_RETURN: u8 = 1;
/// Return type: a `Throwable` follows.
pub const EXCEPTIONAL_RETURN: u8 = 2;

/// `java.rmi.server.UID`: unique within a host (an int, a time, a count).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Uid {
    /// `unique` (an identifier of the VM, often a hash of its process id).
    pub unique: i32,
    /// `time` (ms since the epoch when the VM created its first UID).
    pub time: i64,
    /// `count`.
    pub count: i16,
}

/// The 14 bytes of a UID on the wire.
pub const UID_LEN: usize = 14;

impl Uid {
    /// Writes it as `UID.write(DataOutput)` does (into block data when
    /// `enc` is in block-data mode).
    pub fn write(&self, enc: &mut Encoder) {
        enc.write_int(self.unique);
        enc.write_long(self.time);
        enc.write_short(self.count);
    }

    /// Its raw 14 bytes (as after a DGC acknowledgement's message byte).
    pub fn to_bytes(&self) -> [u8; UID_LEN] {
        let mut b = [0u8; UID_LEN];
        b[..4].copy_from_slice(&self.unique.to_be_bytes());
        b[4..12].copy_from_slice(&self.time.to_be_bytes());
        b[12..].copy_from_slice(&self.count.to_be_bytes());
        b
    }

    /// Reads 14 raw bytes.
    pub fn from_bytes(b: &[u8; UID_LEN]) -> Uid {
        Uid {
            unique: i32::from_be_bytes([b[0], b[1], b[2], b[3]]),
            time: i64::from_be_bytes(b[4..12].try_into().expect("8 bytes")),
            count: i16::from_be_bytes([b[12], b[13]]),
        }
    }

    /// Reads it through a decoder's block data.
    pub fn read(dec: &mut javaser::Decoder<'_>) -> Result<Uid, DecodeError> {
        Ok(Uid {
            unique: dec.read_int()?,
            time: dec.read_long()?,
            count: dec.read_short()?,
        })
    }
}

/// `java.rmi.server.ObjID`: which exported object a call is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct ObjId {
    /// `objNum`: random for ordinary objects, small for well-known ones.
    pub num: i64,
    /// `space`: the exporting VM's UID (zero for well-known objects).
    pub space: Uid,
}

impl ObjId {
    /// The RMI registry (`ObjID.REGISTRY_ID`).
    pub const REGISTRY: ObjId = ObjId::well_known(0);
    /// The distributed garbage collector (`ObjID.DGC_ID`).
    pub const DGC: ObjId = ObjId::well_known(2);

    /// A well-known object id (`new ObjID(n)`): zero UID.
    pub const fn well_known(num: i64) -> ObjId {
        ObjId {
            num,
            space: Uid {
                unique: 0,
                time: 0,
                count: 0,
            },
        }
    }

    /// Writes it as `ObjID.write(ObjectOutput)` does.
    pub fn write(&self, enc: &mut Encoder) {
        enc.write_long(self.num);
        self.space.write(enc);
    }

    /// Reads it through a decoder's block data.
    pub fn read(dec: &mut javaser::Decoder<'_>) -> Result<ObjId, DecodeError> {
        Ok(ObjId {
            num: dec.read_long()?,
            space: Uid::read(dec)?,
        })
    }
}

/// The client's first bytes on a connection: magic, version, stream protocol.
pub fn client_header() -> [u8; 7] {
    let mut b = [0u8; 7];
    b[..4].copy_from_slice(&MAGIC.to_be_bytes());
    b[4..6].copy_from_slice(&VERSION.to_be_bytes());
    b[6] = STREAM_PROTOCOL;
    b
}

/// What the client sends after the server's acknowledgement: "its" endpoint
/// (`writeUTF(host)`, `writeInt(port)`). The JDK sends its local host name
/// (`java.rmi.server.hostname` when set) and port 0; the server ignores it.
pub fn client_endpoint(host: &str, port: i32, out: &mut Vec<u8>) -> Result<(), Error> {
    let encoded = javaser::mutf8::encode(host);
    let len = u16::try_from(encoded.len())
        .map_err(|_| Error::Content(format!("host name of {} bytes", encoded.len())))?;
    out.extend_from_slice(&len.to_be_bytes());
    out.extend_from_slice(&encoded);
    out.extend_from_slice(&port.to_be_bytes());
    Ok(())
}

/// The server's answer to [`client_header`]: the client's address as the
/// server sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProtocolAck {
    /// The host the server sees the client as.
    pub host: String,
    /// The client's port as the server sees it.
    pub port: i32,
}

/// Parses the server's handshake answer from the bytes received so far.
pub fn parse_protocol_ack(buf: &[u8]) -> Result<Progress<ProtocolAck>, Error> {
    let Some(&first) = buf.first() else {
        return Ok(Progress::NeedMore { total: None });
    };
    match first {
        PROTOCOL_ACK => {}
        PROTOCOL_NACK => {
            return Err(Error::Content(
                "the server refused JRMP's stream protocol (ProtocolNack)".into(),
            ))
        }
        byte => {
            return Err(Error::UnexpectedByte {
                byte,
                offset: 0,
                expected: "ProtocolAck (0x4e): is this an RMI port?",
            })
        }
    }
    if buf.len() < 3 {
        return Ok(Progress::NeedMore { total: None });
    }
    let n = u16::from_be_bytes([buf[1], buf[2]]) as usize;
    let total = 3 + n + 4;
    if buf.len() < total {
        return Ok(Progress::NeedMore { total: Some(total) });
    }
    let host = javaser::mutf8::decode(&buf[3..3 + n])
        .ok_or(Error::Stream(DecodeError::InvalidUtf8 { offset: 3 }))?;
    let port = i32::from_be_bytes(buf[3 + n..total].try_into().expect("4 bytes"));
    Ok(Progress::Done {
        value: ProtocolAck { host, port },
        len: total,
    })
}
