//! Error types.
//!
//! Every decode error that concerns the input carries the byte offset where
//! it was found.

use thiserror::Error;

/// Why a [`Decoder`](crate::Decoder) could not read a stream.
///
/// After an error the decoder's position and handle table are unspecified.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum DecodeError {
    /// The input ended in the middle of a value.
    #[error("unexpected end of input at offset {offset}")]
    UnexpectedEof {
        /// Offset of the first missing byte.
        offset: usize,
    },
    /// The stream does not start with `0xACED 0x0005`.
    #[error("bad stream header at offset {offset}")]
    BadHeader {
        /// Offset of the header.
        offset: usize,
    },
    /// A type code that cannot appear here.
    #[error("unexpected type code 0x{tag:02x} at offset {offset}: expected {expected}")]
    UnexpectedTag {
        /// The offending byte.
        tag: u8,
        /// Its offset.
        offset: usize,
        /// What the reader wanted.
        expected: &'static str,
    },
    /// Bytes that are not modified UTF-8.
    #[error("invalid modified UTF-8 at offset {offset}")]
    InvalidUtf8 {
        /// Offset of the string's bytes.
        offset: usize,
    },
    /// A negative length or one larger than the rest of the input.
    #[error("invalid length {length} at offset {offset}")]
    InvalidLength {
        /// The length as read.
        length: i64,
        /// Offset of the length.
        offset: usize,
    },
    /// A `TC_REFERENCE` to a handle that was not assigned, or of the wrong kind.
    #[error("invalid handle 0x{handle:x} at offset {offset}")]
    InvalidHandle {
        /// The handle as read.
        handle: u32,
        /// Offset of the reference.
        offset: usize,
    },
    /// A field type code or array descriptor that Java never writes.
    #[error("invalid type descriptor at offset {offset}: {what}")]
    InvalidDescriptor {
        /// Offset of the descriptor.
        offset: usize,
        /// What is wrong.
        what: &'static str,
    },
    /// Nesting deeper than the decoder's limit.
    #[error("nesting deeper than {limit} at offset {offset}")]
    TooDeep {
        /// The limit.
        limit: usize,
        /// Offset of the value that went over.
        offset: usize,
    },
    /// Something valid this crate does not read (e.g. an `Externalizable`
    /// written with protocol version 1, or `TC_EXCEPTION`).
    #[error("unsupported at offset {offset}: {what}")]
    Unsupported {
        /// Offset.
        offset: usize,
        /// What.
        what: &'static str,
    },
    /// A typed read found a value of another type or class.
    #[error("expected {expected} at offset {offset}")]
    TypeMismatch {
        /// What the reader wanted.
        expected: &'static str,
        /// Offset of the value.
        offset: usize,
    },
    /// A primitive read (`read_int`, ...) found an object or the end of a
    /// block-data run where it expected block data.
    #[error("expected block data at offset {offset}")]
    NotBlockData {
        /// Offset.
        offset: usize,
    },
}

/// Why an [`Encoder`](crate::Encoder) could not write a value.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum EncodeError {
    /// A string longer than `TC_LONGSTRING` or `writeUTF` allows.
    #[error("string too long: {len} bytes of modified UTF-8")]
    StringTooLong {
        /// Its length in modified UTF-8.
        len: usize,
    },
    /// `end_object` / `end_custom_data` without a matching `begin_*`.
    #[error("unbalanced {0}")]
    Unbalanced(&'static str),
    /// A value that does not fit its descriptor (wrong field count or kind).
    #[error("value does not match its class descriptor: {0}")]
    Mismatch(String),
}
