//! Why a call failed, in the classes results report failures by. Its own
//! module because both the `Protocol` trait and the sans-IO `Exchange`
//! return it, and the protocol module builds on the exchange one, not the
//! other way round (so neither links back here).

use rpclab_model::contract::{MismatchedArgument, WrongReturn};

/// Why a call failed, classified the way results report failures.
#[derive(Debug, thiserror::Error)]
pub enum CallError {
    #[error("timed out")]
    Timeout,
    #[error("cannot connect: {0}")]
    Connect(String),
    #[error("I/O error: {0}")]
    Io(#[from] std::io::Error),
    #[error("protocol error: {0}")]
    Protocol(String),
    #[error("server error: {0}")]
    Server(String),
    #[error("wrong response: {0}")]
    WrongResponse(String),
    #[error("configuration: {0}")]
    Config(String),
}

impl From<MismatchedArgument> for CallError {
    fn from(e: MismatchedArgument) -> CallError {
        CallError::Config(e.to_string())
    }
}

impl From<WrongReturn> for CallError {
    fn from(e: WrongReturn) -> CallError {
        CallError::WrongResponse(e.to_string())
    }
}
