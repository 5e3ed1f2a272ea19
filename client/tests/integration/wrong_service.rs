//! A service that answers only wrong replies fails the run fast: the
//! runner ends the warm-up once every connection has answered
//! [`GIVE_UP_AFTER`] wrong replies, prints the first, and measures nothing
//! (issue 31: it used to warm up for a minute first). An end-to-end test of
//! the engine against a real gRPC server, so it lives beside the engine
//! rather than in `wrong_replies`, which the runner itself uses.

use rpclab_client::wrong_replies::GIVE_UP_AFTER;

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
        async fn echo_order(&self, _: Request<pb::Order>) -> Result<Response<pb::Order>, Status> {
            Err(Status::unimplemented("not this"))
        }
        async fn echo_orders(
            &self,
            _: Request<pb::OrderList>,
        ) -> Result<Response<pb::OrderList>, Status> {
            Err(Status::unimplemented("not this"))
        }
        async fn echo_string(&self, _: Request<pb::Text>) -> Result<Response<pb::Text>, Status> {
            Err(Status::unimplemented("not this"))
        }
        async fn hello(&self, _: Request<pb::Text>) -> Result<Response<pb::Text>, Status> {
            self.0.fetch_add(1, Ordering::SeqCst);
            Ok(Response::new(pb::Text {
                value: "goodbye".into(),
            }))
        }
        async fn empty(&self, _: Request<pb::Nothing>) -> Result<Response<pb::Nothing>, Status> {
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
        warmup_calls: 0,
        // Far beyond the test's run: only the wrong replies may end it.
        warmup_max_s: Some(600.0),
        steady: None,
        min_calls: 1,
        percentiles: Vec::new(),
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
        let error = match rpclab_client::runner::run_cell(&spec(addr, connections)).await {
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
