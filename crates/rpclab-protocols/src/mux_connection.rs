//! A multiplexing protocol's async connection ([`MuxConnection`]): a
//! [`Mux`] (the connection's tasks and its calls in flight) with the
//! protocol's [`CallCodec`] (its requests and replies). Apart from both,
//! so that the mux knows no codec and the codec no connection.

use crate::mux::{Framing, Mux};
use crate::mux_exchange::CallCodec;
use crate::protocol::{CallError, Connection};
use rpclab_model::contract::{Call, Value};
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncWrite};

/// One connection of a multiplexing protocol, shared by many callers: a
/// [`Mux`] and the protocol's [`CallCodec`], which encodes each call's
/// request (with the id the mux gives) and decodes its reply, as a
/// [`MuxExchange`](crate::mux_exchange::MuxExchange) does on the poll
/// engine. Dubbo's, Motan's, bolt's and Ice's connections are this.
#[derive(Debug)]
pub struct MuxConnection<C: CallCodec> {
    mux: Mux<C::Framing>,
    calls: C,
}

impl<C: CallCodec> MuxConnection<C> {
    /// Runs the connection's tasks over a stream's two halves, with a
    /// heartbeat after `heartbeat` of write silence (`None`: never).
    pub fn start<R, W>(read: R, write: W, heartbeat: Option<Duration>, calls: C) -> Self
    where
        R: AsyncRead + Unpin + Send + 'static,
        W: AsyncWrite + Unpin + Send + 'static,
    {
        MuxConnection {
            mux: Mux::start(read, write, heartbeat, calls.framing()),
            calls,
        }
    }

    /// Sends the request `encode` writes for the request id it is given,
    /// and waits for its reply: a call of a request that is not the
    /// contract's (e.g. a generic invocation's, protocol `dubbo-generic`).
    pub async fn exchange(
        &self,
        encode: impl FnOnce(u64) -> Result<Vec<u8>, CallError>,
    ) -> Result<<C::Framing as Framing>::Reply, CallError> {
        self.mux.call(encode).await
    }

    /// Whether the connection has failed or been closed by the peer.
    pub fn is_closed(&self) -> bool {
        self.mux.is_closed()
    }
}

impl<C: CallCodec> Connection for MuxConnection<C> {
    async fn call(&self, call: &Call) -> Result<Value, CallError> {
        let calls = &self.calls;
        if let Some(e) = calls.refusal(call) {
            return Err(refuse(e).await);
        }
        let reply = self
            .mux
            .call(|id| {
                let mut request = Vec::with_capacity(calls.request_capacity(call));
                calls.encode(&mut request, id, call)?;
                Ok(request)
            })
            .await?;
        calls.decode(&reply, call)
    }
}

/// A call refused before anything is sent ([`CallCodec::refusal`]): the
/// error, after yielding once. Such a call completes without ever being
/// pending, and a closed-loop worker that repeats it at once would
/// otherwise hold its runtime thread forever, starving the timers that end
/// the warm-up and the window (seen with Motan's `simple` on the Order
/// scenarios).
async fn refuse(e: CallError) -> CallError {
    tokio::task::yield_now().await;
    e
}
