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

mod error;
pub mod hash;
pub mod invocation;
pub mod message;
pub mod remote;
pub mod wire;

pub use error::Error;
pub use hash::method_hash;
pub use message::{Progress, Return, ReturnStatus};
pub use remote::{RemoteException, RemoteRef};
pub use wire::{ObjId, Uid};
