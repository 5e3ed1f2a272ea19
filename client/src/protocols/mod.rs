//! The protocol modules, and the one place that maps a protocol name to its
//! implementation.
//!
//! Adding a framework's protocol: write a module implementing
//! [`Protocol`](crate::protocol::Protocol), then add one line to
//! [`dispatch`] and one name to [`NAMES`].

pub mod bolt;
pub mod dubbo;
pub mod grpc;
pub mod hessian;
pub mod ice;
pub mod motan;
pub mod rmi;
pub mod soap;
pub mod thrift;

use crate::protocol::{CallError, Protocol};
use std::collections::BTreeMap;
use std::future::Future;

/// Every protocol name the client speaks.
pub const NAMES: &[&str] = &[
    grpc::Grpc::NAME,
    thrift::Thrift::NAME,
    dubbo::Dubbo::NAME,
    bolt::Bolt::NAME,
    hessian::Hessian::NAME,
    soap::Soap::NAME,
    ice::Ice::NAME,
    rmi::Rmi::NAME,
    motan::Motan::NAME,
];

/// Something to do with a protocol whose concrete type is only known at run
/// time. Generic code (load models, probes) is written once against
/// [`Protocol`] and monomorphised per protocol, so the hot path has no
/// dynamic dispatch.
pub trait WithProtocol {
    type Output;
    fn run<P: Protocol>(self, protocol: P) -> impl Future<Output = Self::Output>;
}

/// Builds the protocol called `name` with `options` and hands it to `job`.
pub async fn dispatch<J: WithProtocol>(
    name: &str,
    options: &BTreeMap<String, String>,
    job: J,
) -> Result<J::Output, CallError> {
    Ok(match name {
        grpc::Grpc::NAME => job.run(grpc::Grpc::new(options)?).await,
        thrift::Thrift::NAME => job.run(thrift::Thrift::new(options)?).await,
        dubbo::Dubbo::NAME => job.run(dubbo::Dubbo::new(options)?).await,
        bolt::Bolt::NAME => job.run(bolt::Bolt::new(options)?).await,
        hessian::Hessian::NAME => job.run(hessian::Hessian::new(options)?).await,
        soap::Soap::NAME => job.run(soap::Soap::new(options)?).await,
        ice::Ice::NAME => job.run(ice::Ice::new(options)?).await,
        rmi::Rmi::NAME => job.run(rmi::Rmi::new(options)?).await,
        motan::Motan::NAME => job.run(motan::Motan::new(options)?).await,
        other => {
            return Err(CallError::Config(format!(
                "unknown protocol `{other}`; this client speaks: {}",
                NAMES.join(", ")
            )))
        }
    })
}
