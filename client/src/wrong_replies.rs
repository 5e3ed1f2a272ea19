//! A wrong service fails fast: the replies of connections that have not
//! yet verified a call, counted during the warm-up.
//!
//! Against a server whose every reply is wrong (another service on the
//! port, another contract, a bug), the warm-up would wait for a verified
//! call until its maximum (about a minute) and then measure failures.
//! Instead, once every connection has answered [`GIVE_UP_AFTER`] calls and
//! none of them verified, the run stops: nothing is measured, and the error
//! shows the first wrong reply as the protocol decoded it.
//!
//! A reply is wrong when the service answered but not with the contract's
//! reply: a reply that does not verify, that does not decode, or a server
//! error (`wrong response`, `protocol error`, `server error`). A timeout,
//! a refused connection or a broken socket are not replies, and only the
//! warm-up's maximum ends a wait on those.

use rpclab_protocols::protocol::CallError;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::OnceLock;

/// Wrong replies, and no verified one, that each connection must have
/// seen before the run stops.
pub const GIVE_UP_AFTER: u32 = 3;

/// Per connection, the wrong replies seen before its first verified call.
#[derive(Debug)]
pub struct WrongReplies {
    counts: Box<[AtomicU32]>,
    first: OnceLock<String>,
    given_up: AtomicBool,
}

impl WrongReplies {
    pub fn new(connections: usize) -> WrongReplies {
        WrongReplies {
            counts: (0..connections).map(|_| AtomicU32::new(0)).collect(),
            first: OnceLock::new(),
            given_up: AtomicBool::new(false),
        }
    }

    /// Records a failed call on `connection`, which has not verified a call
    /// yet; true when, with it, every connection has answered only wrong
    /// replies, at least [`GIVE_UP_AFTER`] each (`answered`: whether a
    /// connection has verified a call).
    pub fn record(
        &self,
        connection: usize,
        error: &CallError,
        answered: impl Fn(usize) -> bool,
    ) -> bool {
        if !is_a_reply(error) {
            return false;
        }
        let Some(count) = self.counts.get(connection) else {
            return false;
        };
        let _ = self.first.set(error.to_string());
        count.fetch_add(1, Ordering::AcqRel);
        let all_wrong = self
            .counts
            .iter()
            .enumerate()
            .all(|(i, c)| !answered(i) && c.load(Ordering::Acquire) >= GIVE_UP_AFTER);
        all_wrong && !self.given_up.swap(true, Ordering::AcqRel)
    }

    /// Why the run stopped, once every connection answered only wrong
    /// replies: one line, with the first of them.
    pub fn verdict(&self) -> Option<String> {
        if !self.given_up.load(Ordering::Acquire) {
            return None;
        }
        Some(format!(
            "the service answered only wrong replies ({} connection(s), at least {GIVE_UP_AFTER} calls each, none verified), so nothing was measured; the first: {}",
            self.counts.len(),
            self.first.get().map_or("?", String::as_str)
        ))
    }
}

/// Whether `error` means the service answered, but not as the contract says.
fn is_a_reply(error: &CallError) -> bool {
    matches!(
        error,
        CallError::WrongResponse(_) | CallError::Protocol(_) | CallError::Server(_)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn wrong() -> CallError {
        CallError::WrongResponse("hello returned \"goodbye\"".into())
    }

    #[test]
    fn every_connection_must_answer_only_wrong_replies_before_the_run_stops() {
        let w = WrongReplies::new(2);
        let none = |_| false;
        for _ in 0..GIVE_UP_AFTER {
            assert!(!w.record(0, &wrong(), none));
        }
        assert!(
            !w.record(1, &CallError::Timeout, none),
            "a timeout is no reply"
        );
        assert!(!w.record(1, &wrong(), none));
        assert!(!w.record(1, &wrong(), none));
        assert_eq!(w.verdict(), None);
        assert!(w.record(1, &wrong(), none), "the last connection's third");
        assert!(!w.record(1, &wrong(), none), "told once");
        let verdict = w.verdict().unwrap();
        assert!(
            verdict.ends_with("the first: wrong response: hello returned \"goodbye\""),
            "{verdict}"
        );
    }

    /// An in-process gRPC server of the contract whose `hello` always
    /// answers "goodbye", counting the calls it gets.
    mod goodbye {
        use rpclab_protocols::protocols::grpc::server_pb as pb;
        use std::sync::atomic::{AtomicUsize, Ordering};
        use std::sync::Arc;
        use tokio_stream::wrappers::TcpListenerStream;
        use tonic::{Request, Response, Status};

        pub struct Goodbye(pub Arc<AtomicUsize>);

        #[tonic::async_trait]
        impl pb::bench_server::Bench for Goodbye {
            async fn echo_order(
                &self,
                _: Request<pb::Order>,
            ) -> Result<Response<pb::Order>, Status> {
                Err(Status::unimplemented("not this"))
            }
            async fn echo_orders(
                &self,
                _: Request<pb::OrderList>,
            ) -> Result<Response<pb::OrderList>, Status> {
                Err(Status::unimplemented("not this"))
            }
            async fn echo_string(
                &self,
                _: Request<pb::Text>,
            ) -> Result<Response<pb::Text>, Status> {
                Err(Status::unimplemented("not this"))
            }
            async fn hello(&self, _: Request<pb::Text>) -> Result<Response<pb::Text>, Status> {
                self.0.fetch_add(1, Ordering::SeqCst);
                Ok(Response::new(pb::Text {
                    value: "goodbye".into(),
                }))
            }
            async fn empty(
                &self,
                _: Request<pb::Nothing>,
            ) -> Result<Response<pb::Nothing>, Status> {
                Err(Status::unimplemented("not this"))
            }
        }

        /// Serves on a loopback port until the test ends; returns its
        /// address and its count of `hello` calls.
        pub async fn start() -> (String, Arc<AtomicUsize>) {
            let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
            let addr = listener.local_addr().unwrap().to_string();
            let calls = Arc::new(AtomicUsize::new(0));
            let service = pb::bench_server::BenchServer::new(Goodbye(Arc::clone(&calls)));
            tokio::spawn(
                tonic::transport::Server::builder()
                    .add_service(service)
                    .serve_with_incoming(TcpListenerStream::new(listener)),
            );
            (addr, calls)
        }
    }

    fn spec(target: String, connections: u32) -> rpclab_model::spec::CellSpec {
        use rpclab_model::contract::Operation;
        use rpclab_model::spec::{CellSpec, EngineChoice, Load, Shape, Stop};
        CellSpec {
            protocol: "grpc".into(),
            target,
            operation: Operation::Hello,
            load: Load::Closed(Shape::ClientPrograms.closed(connections, None, Stop::Seconds(5.0))),
            warmup_s: 0.0,
            // Far beyond the test's run: only the wrong replies may end it.
            warmup_max_s: Some(600.0),
            steady: None,
            min_calls: 1,
            cooldown_s: 0.0,
            timeout_ms: 5000,
            include_connect: false,
            options: Default::default(),
            engine: EngineChoice::Auto,
        }
    }

    #[tokio::test]
    async fn a_service_that_answers_only_wrong_replies_fails_the_run_after_three_calls_each() {
        for connections in [1, 3] {
            let (addr, calls) = goodbye::start().await;
            let error = match crate::runner::run_cell(&spec(addr, connections)).await {
                Ok(run) => panic!("measured a wrong service: {:?}", run.report),
                Err(e) => e.to_string(),
            };
            assert!(
                error.starts_with("wrong response: the service answered only wrong replies"),
                "{error}"
            );
            assert!(error.contains("nothing was measured"), "{error}");
            assert!(error.contains("goodbye"), "the first wrong reply: {error}");
            let made = calls.load(std::sync::atomic::Ordering::SeqCst);
            let least = GIVE_UP_AFTER as usize * connections as usize;
            if connections == 1 {
                // The third reply ends the run before a fourth call.
                assert_eq!(made, least);
            } else {
                // Each connection made its three at least; one may call on
                // while the others get theirs.
                assert!(made >= least, "{made} calls");
            }
        }
    }

    #[test]
    fn a_connection_that_verified_a_call_keeps_the_run_going() {
        let w = WrongReplies::new(2);
        for _ in 0..10 {
            w.record(0, &wrong(), |i| i == 1);
            assert!(!w.record(1, &wrong(), |i| i == 1));
        }
        assert_eq!(w.verdict(), None);
    }
}
