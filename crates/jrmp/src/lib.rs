//! Java RMI's wire protocol, JRMP (the stream protocol over TCP), as
//! message encoders and incremental parsers, byte-compatible with the JDK.
//!
//! JRMP has no length prefixes: a call or a return is a message byte
//! followed by a Java serialization stream (a fresh `ObjectOutputStream`
//! per message) whose end is only known by parsing it. The parsers here
//! therefore take whatever bytes have arrived and answer
//! [`Progress::Done`] with the number of bytes the message took, or
//! [`Progress::NeedMore`] (with the total length when the message's shape
//! tells it, e.g. a string return), so a socket reader can grow its buffer
//! and try again. Malformed input is an [`Error`], never a panic, and no
//! allocation is larger than the input.
//!
//! * [`wire`]: constants, [`Uid`], [`ObjId`], the handshake.
//! * [`hash`]: method hashes (`hello(Ljava/lang/String;)Ljava/lang/String;`
//!   → the `long` a stub sends).
//! * [`message`]: calls (with the registry's and DGC's operations), returns,
//!   ping, DGC acknowledgements.
//! * [`remote`]: the remote reference inside a stub (host, port, ObjID,
//!   interfaces) and the summary of a remote exception.
//! * [`invocation`]: Spring's `RemoteInvocation` (the "RMI invoker" style
//!   of `RmiServiceExporter`, and Dubbo's `RmiRemoteInvocation` subclass).
#![forbid(unsafe_code)]

pub mod hash;
pub mod invocation;
pub mod message;
pub mod remote;
pub mod wire;

pub use hash::method_hash;
pub use message::{Progress, Return, ReturnStatus};
pub use remote::{RemoteException, RemoteRef};
pub use wire::{ObjId, Uid};

/// Why bytes are not a valid JRMP message, or a value not what was expected.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A message or handshake byte that cannot appear here.
    #[error("unexpected JRMP byte 0x{byte:02x} at offset {offset}: expected {expected}")]
    UnexpectedByte {
        /// The byte.
        byte: u8,
        /// Its offset in the message.
        offset: usize,
        /// What was expected.
        expected: &'static str,
    },
    /// The serialization stream inside a message is malformed.
    #[error("Java serialization stream: {0}")]
    Stream(#[from] javaser::DecodeError),
    /// A message longer than the reader's limit.
    #[error("message longer than the limit of {limit} bytes")]
    TooLong {
        /// The limit.
        limit: usize,
    },
    /// A well-formed stream whose content is not what the message carries
    /// (e.g. a stub without a `UnicastRef`).
    #[error("{0}")]
    Content(String),
    /// A value that cannot be written (e.g. a string over 65535 bytes where
    /// `writeUTF` is needed).
    #[error("cannot encode: {0}")]
    Encode(#[from] javaser::EncodeError),
}
