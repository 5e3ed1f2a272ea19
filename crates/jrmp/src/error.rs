//! The crate's one error type.

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
