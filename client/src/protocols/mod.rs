//! The protocol modules, and the one list that maps a protocol name to its
//! implementation.
//!
//! Adding a framework's protocol: write a module implementing
//! [`Protocol`], then add one line to the
//! `protocols!` list below. [`NAMES`], [`dispatch`] and the client's
//! `--protocol` help all come from that list.

use crate::protocol::{CallError, Protocol};
use std::collections::BTreeMap;
use std::future::Future;

/// Declares the protocol modules and derives from the one list every place
/// that enumerates them: the modules, [`NAMES`] and [`dispatch`]'s match.
macro_rules! protocols {
    ($($module:ident :: $ty:ident),+ $(,)?) => {
        $(pub mod $module;)+

        /// Every protocol name the client speaks, in the list's order.
        pub const NAMES: &[&str] = &[$($module::$ty::NAME),+];

        /// Builds the protocol called `name` with `options` and hands it to `job`.
        pub async fn dispatch<J: WithProtocol>(
            name: &str,
            options: &BTreeMap<String, String>,
            job: J,
        ) -> Result<J::Output, CallError> {
            $(
                if name == $module::$ty::NAME {
                    return Ok(job.run($module::$ty::new(options)?).await);
                }
            )+
            Err(CallError::Config(format!(
                "unknown protocol `{name}`; this client speaks: {}",
                NAMES.join(", ")
            )))
        }
    };
}

protocols! {
    grpc::Grpc,
    thrift::Thrift,
    dubbo::Dubbo,
    bolt::Bolt,
    hessian::Hessian,
    soap::Soap,
    ice::Ice,
    rmi::Rmi,
    motan::Motan,
}

/// Something to do with a protocol whose concrete type is only known at run
/// time. Generic code (load models, probes) is written once against
/// [`Protocol`] and monomorphised per protocol, so the hot path has no
/// dynamic dispatch.
pub trait WithProtocol {
    type Output;
    fn run<P: Protocol>(self, protocol: P) -> impl Future<Output = Self::Output>;
}
