//! The contract's gRPC service (`rpclab.Bench`) done with as little work as
//! a correct server can do: echoes move the decoded request into the reply,
//! `hello` greets, `empty` does nothing. One implementation for the
//! `rpclab-echo` tool (the load client's ceiling) and the in-process
//! servers of the client's tests, so both answer exactly as the contract
//! says.

use super::server_pb as pb;
use rpclab_model::contract::HELLO_PREFIX;
use tonic::{Request, Response, Status};

/// The contract's service, answering every call as the contract says.
#[derive(Clone, Copy, Debug, Default)]
pub struct Echo;

#[tonic::codegen::async_trait]
impl pb::bench_server::Bench for Echo {
    async fn echo_order(&self, request: Request<pb::Order>) -> Result<Response<pb::Order>, Status> {
        Ok(Response::new(request.into_inner()))
    }

    async fn echo_orders(
        &self,
        request: Request<pb::OrderList>,
    ) -> Result<Response<pb::OrderList>, Status> {
        Ok(Response::new(request.into_inner()))
    }

    async fn echo_string(&self, request: Request<pb::Text>) -> Result<Response<pb::Text>, Status> {
        Ok(Response::new(request.into_inner()))
    }

    async fn hello(&self, request: Request<pb::Text>) -> Result<Response<pb::Text>, Status> {
        let name = request.into_inner().value;
        let mut value = String::with_capacity(HELLO_PREFIX.len() + name.len());
        value.push_str(HELLO_PREFIX);
        value.push_str(&name);
        Ok(Response::new(pb::Text { value }))
    }

    async fn empty(&self, _: Request<pb::Nothing>) -> Result<Response<pb::Nothing>, Status> {
        Ok(Response::new(pb::Nothing {}))
    }
}
