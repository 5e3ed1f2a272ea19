//! Error types. Every decode error carries the byte offset where it was
//! found, so a bad frame can be located in a capture.

use thiserror::Error;

/// Why a [`Reader`](crate::Reader) could not read its input. After an error
/// the reader's position is unspecified.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum DecodeError {
    /// The input ended in the middle of a value.
    #[error("dubbo serialization: unexpected end of input at offset {offset}")]
    UnexpectedEof {
        /// Offset of the first missing byte.
        offset: usize,
    },
    /// A tag byte that cannot appear here.
    #[error(
        "dubbo serialization: unexpected tag 0x{tag:02x} at offset {offset}: expected {expected}"
    )]
    UnexpectedTag {
        /// The offending byte.
        tag: u8,
        /// Its offset.
        offset: usize,
        /// What the reader wanted.
        expected: &'static str,
    },
    /// A length larger than the rest of the input.
    #[error("dubbo serialization: invalid length {length} at offset {offset}")]
    InvalidLength {
        /// The length as read.
        length: u64,
        /// Where it was read.
        offset: usize,
    },
    /// A string's bytes are not the 1- to 3-byte sequences GenericDataOutput writes.
    #[error("dubbo serialization: bad UTF-8 byte 0x{byte:02x} at offset {offset}")]
    BadUtf8 {
        /// The byte.
        byte: u8,
        /// Its offset.
        offset: usize,
    },
    /// A class-descriptor id outside Builder's table.
    #[error("dubbo serialization: unknown class descriptor id {id} at offset {offset}")]
    UnknownDescriptorId {
        /// The id.
        id: u32,
        /// Where it was read.
        offset: usize,
    },
    /// A back-reference to an object not read (yet), or still being read.
    #[error("dubbo serialization: reference {index} at offset {offset} names no completed object")]
    BadReference {
        /// The reference.
        index: u32,
        /// Where it was read.
        offset: usize,
    },
    /// A class this reader cannot read without its Java definition.
    #[error("dubbo serialization: {what} at offset {offset} is not supported by this reader")]
    Unsupported {
        /// What it is.
        what: String,
        /// Its offset.
        offset: usize,
    },
    /// Values nested deeper than [`MAX_DEPTH`](crate::MAX_DEPTH).
    #[error("dubbo serialization: values nested deeper than {max} at offset {offset}")]
    TooDeep {
        /// The limit.
        max: usize,
        /// Where it was exceeded.
        offset: usize,
    },
}
