//! A multiplexing protocol's call, one at a time, as a sans-IO
//! [`Exchange`]: what lets Ice, Dubbo, Motan and bolt run on the poll
//! engine as Thrift does.
//!
//! These protocols' own clients multiplex (many calls in flight on one
//! connection, matched by request id), and so do their async connections
//! here ([`crate::mux`]). With one call in flight per connection (the
//! closed loop the poll engine runs) the request id is simply counted per
//! connection, and the stream carries that call's reply plus whatever the
//! server sends unasked: Ice's validate-connection (first thing on a new
//! connection, and its heartbeats), heartbeat requests of Dubbo, Motan
//! and bolt (to be answered), answers to heartbeats.
//!
//! Nothing about a protocol is written twice: [`MuxExchange`] frames and
//! classifies incoming frames with the protocol's mux [`Framing`] (its
//! `split` and `route`, as the mux's reader does), and encodes requests
//! and decodes replies with the protocol's [`CallCodec`], which its async
//! connection calls too. A reply is decoded and compared with the call's
//! expected value ([`crate::protocol::verify`]), as the async connection's
//! [`verified_call`](crate::protocol::Connection::verified_call) does,
//! unless the codec finds it to be exactly the expected value where it
//! lies ([`CallCodec::is_expected`]: the string replies of motan2, bolt,
//! Ice and Dubbo's hessian2): then no value is made. Any other reply is
//! decoded, so a wrong one fails as ever.
//!
//! What the exchange does with what is not the reply:
//!
//! * [`Inbound::Skip`] (a validate-connection, an answer to a heartbeat, a
//!   server's callback): consumed with the reply that follows it;
//! * [`Inbound::Answer`] (the answer to a server's heartbeat request):
//!   queued and written in front of the next request, since a sans-IO
//!   exchange writes only when a call starts. The server gets its answer
//!   one call later, well within any idle timeout under load;
//! * [`Inbound::Close`] and a reply to another request id: the stream is
//!   out of step, the connection is replaced (an `Err` of
//!   [`Exchange::reply`]).
//!
//! Per call, beyond the codec's own work, the exchange copies the reply's
//! frame once into `Bytes` (what `route` takes, for the mux hands it to
//! another task): a `memcpy` of the reply into a buffer of the exchange's
//! own, reused from call to call once the last reply's `Bytes` are gone
//! (a `BytesMut` split off and frozen, so that `route`'s slices of it
//! count references instead of allocating; a frame over 64 KiB gets an
//! allocation of its own). The request
//! is encoded once: a call's request differs from the one before only in
//! its id, so a codec that can write an id into a request it encoded
//! ([`CallCodec::restamp`]) has its first request copied and restamped
//! for every later call, as the floor replays one request.

use crate::call_error::CallError;
use crate::exchange::{Exchange, Parsed};
use crate::mux::{nth_id, Framing, Inbound, Split};
use crate::protocol::verify;
use bytes::{Bytes, BytesMut};
use rpclab_model::contract::{Call, Value};

/// A multiplexing protocol's requests and replies: the one encoder and
/// decoder of its calls, which its async connection (through the
/// [`mux`](crate::mux)) and its [`MuxExchange`] both run.
pub trait CallCodec: Send + Sync + 'static {
    /// The protocol's frames.
    type Framing: Framing;

    /// The framing an exchange classifies incoming frames with (a mux
    /// connection gets its own when it starts).
    fn framing(&self) -> Self::Framing;

    /// A capacity for the request of `call` that encoding never exceeds
    /// (or rarely), so that a request buffer is sized once.
    fn request_capacity(&self, call: &Call) -> usize;

    /// The request `id` of `call` into `out`, in place of what it held.
    fn encode(&self, out: &mut Vec<u8>, id: u64, call: &Call) -> Result<(), CallError>;

    /// The value a reply to `call` carries (an error for a server's
    /// exception or a malformed reply).
    fn decode(
        &self,
        reply: &<Self::Framing as Framing>::Reply,
        call: &Call,
    ) -> Result<Value, CallError>;

    /// Writes `id` into `request`, a whole request this codec encoded for
    /// the same call with another id, so that it is byte for byte what
    /// [`CallCodec::encode`] writes for `id`; false if the protocol's
    /// requests cannot be restamped (its requests are then encoded anew
    /// for every call). None can by default.
    fn restamp(&self, request: &mut [u8], id: u64) -> bool {
        let _ = (request, id);
        false
    }

    /// Whether `reply` is without a doubt `call`'s expected value, told
    /// without making the value (a string compared where it lies in the
    /// reply): true only where [`CallCodec::decode`] would give exactly
    /// the expected value. False: the reply is decoded and compared, which
    /// also says what is wrong with it. None can tell by default.
    fn is_expected(&self, reply: &<Self::Framing as Framing>::Reply, call: &Call) -> bool {
        let _ = (reply, call);
        false
    }

    /// Why `call` is refused before anything is sent (an operation the
    /// protocol, as configured, cannot carry), if it is. By default none
    /// is: a call that cannot be encoded fails in [`CallCodec::encode`].
    fn refusal(&self, call: &Call) -> Option<CallError> {
        let _ = call;
        None
    }
}

/// One call made over and over on one connection of a multiplexing
/// protocol, one at a time (see the module documentation).
#[derive(Debug)]
pub struct MuxExchange<C: CallCodec> {
    codec: C,
    framing: C::Framing,
    call: Call,
    /// Requests sent on this connection: the next id is the `sent`th of the
    /// framing's id range.
    sent: u64,
    /// The id of the request in flight.
    id: u64,
    /// Bytes at the start of the received bytes already routed (frames
    /// that were not the reply), while the reply is incomplete.
    routed: usize,
    /// Answers to the server's requests (its heartbeats), written before
    /// the next request.
    answers: Vec<u8>,
    /// The call's request as first encoded, restamped for each later call.
    template: Template,
    /// Where each frame received is copied for `route`: its allocation
    /// is reused once the frames handed out before are dropped.
    frames: BytesMut,
}

/// The largest frame copied into an exchange's reused buffer: a larger
/// one (a 1 MiB string) gets an allocation of its own, so that no
/// connection keeps more than this much beside its receive buffer.
const KEPT_FRAME_BYTES: usize = 64 * 1024;

/// What [`MuxExchange`] knows of its call's request.
#[derive(Debug)]
enum Template {
    /// Nothing yet: no request was encoded.
    Untried,
    /// The last request, whose id the codec rewrites.
    Kept(Vec<u8>),
    /// The codec cannot restamp: every request is encoded.
    Unsupported,
}

impl<C: CallCodec> MuxExchange<C> {
    /// The exchange of `call` on a new connection.
    pub fn new(codec: C, call: &Call) -> MuxExchange<C> {
        MuxExchange {
            framing: codec.framing(),
            codec,
            call: call.clone(),
            sent: 0,
            id: 0,
            routed: 0,
            answers: Vec::new(),
            template: Template::Untried,
            frames: BytesMut::new(),
        }
    }
}

type FramingOf<C> = <C as CallCodec>::Framing;

impl<C: CallCodec> Exchange for MuxExchange<C> {
    /// The reply's value, or `None` for a reply the codec found to be the
    /// expected value in place ([`CallCodec::is_expected`]).
    type Outcome = Option<Value>;

    fn request(&mut self, out: &mut Vec<u8>) -> Result<(), CallError> {
        self.id = nth_id(FramingOf::<C>::FIRST_ID, FramingOf::<C>::MAX_ID, self.sent);
        self.sent = self.sent.wrapping_add(1);
        self.routed = 0;
        let restamped = match &mut self.template {
            Template::Kept(request) => self.codec.restamp(request, self.id),
            Template::Untried | Template::Unsupported => false,
        };
        if let (true, Template::Kept(request)) = (restamped, &self.template) {
            out.clear();
            out.extend_from_slice(request);
        } else {
            if out.capacity() == 0 {
                out.reserve(self.codec.request_capacity(&self.call));
            }
            self.codec.encode(out, self.id, &self.call)?;
            if let Template::Untried = self.template {
                // Kept if the codec can restamp it (tried on a copy).
                let mut request = out.clone();
                self.template = if self.codec.restamp(&mut request, self.id) {
                    Template::Kept(request)
                } else {
                    Template::Unsupported
                };
            }
        }
        if !self.answers.is_empty() {
            out.splice(0..0, self.answers.drain(..));
        }
        Ok(())
    }

    fn reply(
        &mut self,
        input: &[u8],
    ) -> Result<Parsed<Result<Option<Value>, CallError>>, CallError> {
        loop {
            let rest = &input[self.routed..];
            let (head, len) = match self.framing.split(rest)? {
                Split::Whole { head, len } => (head, len),
                Split::Partial { len } => {
                    return Ok(Parsed::Incomplete {
                        at_least: self.routed + len.unwrap_or(rest.len() + 1),
                    })
                }
            };
            let frame = if len <= KEPT_FRAME_BYTES {
                self.frames.extend_from_slice(&rest[..len]);
                self.frames.split().freeze()
            } else {
                Bytes::copy_from_slice(&rest[..len])
            };
            self.routed += len;
            match self.framing.route(head, frame)? {
                Inbound::Reply { id, reply } if id == self.id => {
                    let consumed = std::mem::take(&mut self.routed);
                    let outcome = if self.codec.is_expected(&reply, &self.call) {
                        Ok(None)
                    } else {
                        self.codec.decode(&reply, &self.call).map(Some)
                    };
                    return Ok(Parsed::Complete { consumed, outcome });
                }
                Inbound::Reply { id, .. } => return Err(wrong_id::<C>(id, self.id)),
                Inbound::Answer(answer) => self.answers.extend_from_slice(&answer),
                Inbound::Skip => {}
                Inbound::Close(why) => return Err(CallError::Protocol(why)),
            }
        }
    }

    fn verify(&self, value: Option<Value>) -> Result<(), CallError> {
        match value {
            None => Ok(()),
            Some(value) => verify(value, &self.call),
        }
    }
}

#[cold]
fn wrong_id<C: CallCodec>(got: u64, sent: u64) -> CallError {
    CallError::Protocol(format!(
        "{}: a reply to request {got}, the call in flight was request {sent}",
        FramingOf::<C>::NAME
    ))
}
