//! Error types.
//!
//! Every decode error that concerns the input carries the byte offset where
//! it was found, so a bad frame can be located in a capture.

use thiserror::Error;

/// Why a [`Reader`](crate::Reader) could not read its input.
///
/// After an error the reader's position is unspecified.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum DecodeError {
    /// The input ended in the middle of a value.
    #[error("JSONB: unexpected end of input at offset {offset}")]
    UnexpectedEof {
        /// Offset of the first missing byte.
        offset: usize,
    },
    /// A type byte that cannot appear here.
    #[error(
        "JSONB: unexpected {found} (type byte 0x{tag:02x}) at offset {offset}: expected {expected}"
    )]
    UnexpectedType {
        /// The offending byte.
        tag: u8,
        /// What it starts ([`bc::name`](crate::bc::name)).
        found: &'static str,
        /// Its offset.
        offset: usize,
        /// What the reader wanted.
        expected: &'static str,
    },
    /// A JSONB type this crate does not read (dates, big numbers, GB18030).
    #[error(
        "JSONB: {what} (type byte 0x{tag:02x}) at offset {offset} is not supported by this reader"
    )]
    Unsupported {
        /// The type byte.
        tag: u8,
        /// What it is.
        what: &'static str,
        /// Its offset.
        offset: usize,
    },
    /// A negative length, or one larger than the rest of the input.
    #[error("JSONB: invalid length {length} at offset {offset}")]
    InvalidLength {
        /// The length as read.
        length: i64,
        /// Offset of the length.
        offset: usize,
    },
    /// String bytes that are not valid in their declared encoding.
    #[error("JSONB: invalid {encoding} string at offset {offset}")]
    InvalidString {
        /// `UTF-8` or `UTF-16`.
        encoding: &'static str,
        /// Offset of the string's bytes.
        offset: usize,
    },
    /// A symbol reference to an index never defined, or a symbol defined out of order.
    #[error("JSONB: invalid symbol {index} at offset {offset} ({defined} defined)")]
    InvalidSymbol {
        /// The index as read.
        index: i64,
        /// How many symbols the document had defined so far.
        defined: usize,
        /// Offset of the symbol.
        offset: usize,
    },
    /// A number that does not fit the type asked for.
    #[error("JSONB: {value} at offset {offset} does not fit in {target}")]
    OutOfRange {
        /// The value as read.
        value: String,
        /// The Rust type asked for.
        target: &'static str,
        /// Its offset.
        offset: usize,
    },
    /// Arrays, objects and typed values nested deeper than the reader allows.
    #[error("JSONB: nesting deeper than {max} at offset {offset}")]
    TooDeep {
        /// The limit.
        max: usize,
        /// Where it was exceeded.
        offset: usize,
    },
    /// Bytes left after the value that should have ended the input.
    #[error("JSONB: {count} trailing bytes at offset {offset}")]
    TrailingBytes {
        /// How many.
        count: usize,
        /// Offset of the first.
        offset: usize,
    },
}

/// Why a value could not be written.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum EncodeError {
    /// A string, array or frame longer than an int32 length can say.
    #[error("JSONB: length {0} does not fit in an int32")]
    TooLong(usize),
}
