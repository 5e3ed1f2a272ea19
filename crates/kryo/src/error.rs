//! What can go wrong reading (and, rarely, writing) a kryo stream.

/// A malformed or unsupported kryo stream. Every variant carries the byte
/// offset where reading stopped; none is ever a panic.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum DecodeError {
    /// The input ended inside a value.
    #[error("unexpected end of input at byte {offset}: {what} needs more bytes")]
    Eof { offset: usize, what: &'static str },
    /// A length is larger than what is left of the input (checked before
    /// anything is allocated for it).
    #[error("{what} length {len} at byte {offset} exceeds the {remaining} bytes left: corrupt or truncated stream")]
    Length {
        offset: usize,
        what: &'static str,
        len: u64,
        remaining: usize,
    },
    /// A string's bytes are not Kryo's UTF-8 form of UTF-16 units, or
    /// hold an unpaired surrogate (which a Rust `String` cannot hold).
    #[error("invalid string at byte {offset}: {reason}")]
    BadString { offset: usize, reason: &'static str },
    /// A class id that the dialect's registrations do not know.
    #[error("unknown class id {id} at byte {offset}: not registered by {dialect} (wrong `kryo` dialect for this server?)")]
    UnknownClassId {
        offset: usize,
        id: u32,
        dialect: &'static str,
    },
    /// A class-name reference to a name not written before in this graph.
    #[error("class name reference {id} at byte {offset} names no class written before in this object graph")]
    UnknownNameId { offset: usize, id: u32 },
    /// A back-reference to an object id not read before in this graph.
    #[error("reference to object {id} at byte {offset}, but only {known} objects were read in this object graph")]
    BadReference {
        offset: usize,
        id: u32,
        known: usize,
    },
    /// Something else was on the wire than the reader expected.
    #[error("unexpected {found} at byte {offset}; expected {expected}")]
    Unexpected {
        offset: usize,
        found: String,
        expected: &'static str,
    },
    /// A class written by Kryo's FieldSerializer, whose field layout the
    /// reader was not given.
    #[error("no field layout for class `{class}` at byte {offset}: FieldSerializer data has no field tags; give the reader a Schema for it")]
    NoSchema { offset: usize, class: String },
    /// Nesting deeper than the reader's limit.
    #[error("object graph nested deeper than {max} levels at byte {offset}")]
    TooDeep { offset: usize, max: usize },
    /// Valid Kryo that this crate does not read.
    #[error("unsupported at byte {offset}: {what}")]
    Unsupported { offset: usize, what: String },
    /// An exception whose class was read but not the rest: names the class
    /// (often all a caller needs) and what stopped the reader.
    #[error("reading a {class} thrown by the server: {source}")]
    Exception {
        class: String,
        #[source]
        source: Box<DecodeError>,
    },
    /// A Java Object Serialization stream embedded by Kryo's JavaSerializer
    /// (Dubbo's Kryo 5 line writes throwables that way) is malformed.
    #[error("Java serialization embedded at byte {offset}: {source}")]
    Java {
        offset: usize,
        #[source]
        source: javaser::DecodeError,
    },
}

impl DecodeError {
    /// The byte offset where reading stopped.
    pub fn offset(&self) -> usize {
        match self {
            DecodeError::Eof { offset, .. }
            | DecodeError::Length { offset, .. }
            | DecodeError::BadString { offset, .. }
            | DecodeError::UnknownClassId { offset, .. }
            | DecodeError::UnknownNameId { offset, .. }
            | DecodeError::BadReference { offset, .. }
            | DecodeError::Unexpected { offset, .. }
            | DecodeError::NoSchema { offset, .. }
            | DecodeError::TooDeep { offset, .. }
            | DecodeError::Unsupported { offset, .. }
            | DecodeError::Java { offset, .. } => *offset,
            DecodeError::Exception { source, .. } => source.offset(),
        }
    }
}

/// A value the writer cannot put on the wire.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum EncodeError {
    /// An object without a schema, or whose fields do not match its schema.
    #[error("cannot write `{class}`: {reason}")]
    Schema { class: String, reason: String },
    /// A value this writer does not know how to write.
    #[error("cannot write {what}")]
    Unsupported { what: String },
}
