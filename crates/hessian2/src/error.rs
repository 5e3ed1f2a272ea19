//! Error types.
//!
//! Decoding and encoding fail for different reasons and callers handle them
//! differently (a decode error usually means a bad or truncated peer message,
//! an encode error a bug in the caller), so they are two types. Every decode
//! error that concerns the input carries the byte offset where it was found.

use thiserror::Error;

/// Why a [`Decoder`](crate::Decoder) could not read a value.
///
/// After an error the decoder's position and tables are unspecified: start a
/// new decoder for the next message.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum DecodeError {
    /// The input ended in the middle of a value. With a streaming transport
    /// this can mean "read more bytes and retry from the start".
    #[error("unexpected end of input at offset {offset}")]
    UnexpectedEof {
        /// Offset of the first missing byte.
        offset: usize,
    },

    /// A byte that cannot start what the caller asked for (or no value at all,
    /// such as a reserved code or a stray `Z`).
    #[error("unexpected tag 0x{tag:02x} at offset {offset}: expected {expected}")]
    UnexpectedTag {
        /// The offending byte.
        tag: u8,
        /// Its offset.
        offset: usize,
        /// What the reader wanted.
        expected: &'static str,
    },

    /// A string chunk that is not UTF-8 as Java writes it (CESU-8: UTF-8 with
    /// supplementary characters as two 3-byte surrogates), or whose length in
    /// UTF-16 units does not match its bytes.
    #[error("invalid UTF-8 in a string at offset {offset}")]
    InvalidUtf8 {
        /// Offset of the bad sequence.
        offset: usize,
    },

    /// A length or count that is negative or larger than the rest of the input
    /// could possibly hold.
    #[error("invalid length {length} at offset {offset}")]
    InvalidLength {
        /// The length as read.
        length: i64,
        /// Offset of the length.
        offset: usize,
    },

    /// An object instance names a class definition that was never sent.
    #[error("object at offset {offset} uses undefined class definition #{index}")]
    UnknownClass {
        /// The class definition index.
        index: i64,
        /// Offset of the instance.
        offset: usize,
    },

    /// A list or map uses a type reference (an int) that was never defined.
    #[error("type reference #{index} at offset {offset} is undefined")]
    UnknownType {
        /// The type reference.
        index: i64,
        /// Its offset.
        offset: usize,
    },

    /// A value reference (`Q`) to a list, map or object that was not read yet.
    #[error("reference #{index} at offset {offset} points past the {count} values read so far")]
    InvalidReference {
        /// The reference.
        index: i64,
        /// Number of referenceable values read before it.
        count: usize,
        /// Its offset.
        offset: usize,
    },

    /// A reference to a value that is still being read (a cycle), where the
    /// caller cannot represent one (typed reads; [`Value`](crate::Value)
    /// reads keep it as [`Value::Ref`](crate::Value::Ref) instead).
    #[error("reference #{index} at offset {offset} is cyclic")]
    CyclicReference {
        /// The reference.
        index: u32,
        /// Its offset.
        offset: usize,
    },

    /// Lists, maps and objects nest deeper than
    /// [`DecodeOptions::max_depth`](crate::DecodeOptions::max_depth).
    #[error("nesting deeper than {limit} at offset {offset}")]
    DepthLimit {
        /// The configured limit.
        limit: usize,
        /// Offset of the value that went too deep.
        offset: usize,
    },

    /// Resolving shared references would re-read more than
    /// [`DecodeOptions::max_ref_expansion`](crate::DecodeOptions::max_ref_expansion)
    /// bytes (a small message whose references expand exponentially).
    #[error("shared references expand past the limit of {limit} bytes")]
    RefExpansionLimit {
        /// The configured limit.
        limit: usize,
    },

    /// A number that does not fit the requested Rust type.
    #[error("value {value} at offset {offset} does not fit in {target}")]
    OutOfRange {
        /// The value as read.
        value: i64,
        /// What it was read into.
        target: &'static str,
        /// Its offset.
        offset: usize,
    },

    /// [`from_slice`](crate::from_slice) read a whole value but bytes were left.
    #[error("trailing bytes after the value, at offset {offset}")]
    TrailingBytes {
        /// Offset of the first byte not read.
        offset: usize,
    },

    /// A container-level call that does not match the open containers, such as
    /// [`Decoder::end`](crate::Decoder::end) with nothing open or reading past
    /// the last element of a fixed-length list.
    #[error("{0}")]
    Misuse(&'static str),

    /// A well-formed value that a [`FromHessian`](crate::FromHessian)
    /// implementation rejected (wrong shape for the Rust type).
    #[error("{0}")]
    Custom(String),
}

impl DecodeError {
    /// A [`DecodeError::Custom`] with the given message, for
    /// [`FromHessian`](crate::FromHessian) implementations.
    pub fn custom(msg: impl std::fmt::Display) -> Self {
        DecodeError::Custom(msg.to_string())
    }
}

/// Why an [`Encoder`](crate::Encoder) refused to write a value.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum EncodeError {
    /// [`Value::Ref`](crate::Value::Ref) or
    /// [`Encoder::write_ref`](crate::Encoder::write_ref) names a list, map or
    /// object that was not written yet.
    #[error("reference #{index} points past the {count} referenceable values written so far")]
    DanglingReference {
        /// The reference.
        index: u32,
        /// Number of lists, maps and objects written so far.
        count: u32,
    },

    /// A class was written twice with different field lists: Hessian sends a
    /// class definition once per stream, so every instance must use it.
    #[error("class `{class}` was already defined with other fields")]
    ClassRedefined {
        /// The class name.
        class: String,
    },

    /// An object value whose number of field values differs from its class's
    /// number of fields.
    #[error("object of class `{class}` has {values} values for {fields} fields")]
    FieldCount {
        /// The class name.
        class: String,
        /// Fields in the class definition.
        fields: usize,
        /// Values in the object.
        values: usize,
    },

    /// An empty list, map or class type name (Java rejects those too).
    #[error("empty type name")]
    EmptyTypeName,

    /// A length that does not fit the format's 32-bit signed int.
    #[error("length {0} does not fit in a Hessian int")]
    TooLong(usize),

    /// A [`ToHessian`](crate::ToHessian) implementation refused its value.
    #[error("{0}")]
    Custom(String),
}

impl EncodeError {
    /// An [`EncodeError::Custom`] with the given message.
    pub fn custom(msg: impl std::fmt::Display) -> Self {
        EncodeError::Custom(msg.to_string())
    }
}
