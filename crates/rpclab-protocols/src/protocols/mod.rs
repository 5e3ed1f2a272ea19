//! The protocol modules, and the one list that maps a protocol name to its
//! implementation.
//!
//! Adding a framework's protocol: write a module implementing
//! [`Protocol`], then add one line to the `protocols!` list below.
//! [`ProtocolName`] (with [`ProtocolName::ALL`] and [`NAMES`]), [`dispatch`]
//! and the client's `--protocol` help all come from that list.

use crate::protocol::{CallError, Protocol};
use std::collections::BTreeMap;
use std::fmt;
use std::future::Future;
use std::str::FromStr;

/// Declares the protocol modules and derives from the one list every place
/// that enumerates them: the modules, [`ProtocolName`], [`NAMES`] and
/// [`dispatch`]'s match.
macro_rules! protocols {
    ($($module:ident :: $ty:ident),+ $(,)?) => {
        $(pub mod $module;)+

        /// A protocol the client speaks, by name: what `--protocol`, cell
        /// specs and server manifests say, as its lower-case
        /// [`Protocol::NAME`] (`grpc`, `motan2`, ...).
        #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
        pub enum ProtocolName {
            $($ty,)+
        }

        impl ProtocolName {
            /// Every protocol, in the list's order.
            pub const ALL: &'static [ProtocolName] = &[$(ProtocolName::$ty),+];

            /// The name `--protocol` and manifests use.
            pub const fn as_str(self) -> &'static str {
                match self {
                    $(ProtocolName::$ty => $module::$ty::NAME,)+
                }
            }

            /// Its options that name files ([`Protocol::FILE_OPTIONS`]).
            pub const fn file_options(self) -> &'static [&'static str] {
                match self {
                    $(ProtocolName::$ty => <$module::$ty as Protocol>::FILE_OPTIONS,)+
                }
            }

            /// The option naming a generic protocol's method
            /// ([`Protocol::CALL_OPTION`]); `None` for the contract's.
            pub const fn call_option(self) -> Option<&'static str> {
                match self {
                    $(ProtocolName::$ty => <$module::$ty as Protocol>::CALL_OPTION,)+
                }
            }

            /// Builds the protocol from `options` and drops it: the check
            /// a cell's options get before any load, with the error the
            /// client would give (an option it lacks or does not know, a
            /// file it cannot read, a method its types do not have).
            pub fn check(self, options: &BTreeMap<String, String>) -> Result<(), CallError> {
                match self {
                    $(ProtocolName::$ty => $module::$ty::new(options).map(drop),)+
                }
            }
        }

        /// Every protocol name the client speaks, in the list's order.
        pub const NAMES: &[&str] = &[$($module::$ty::NAME),+];

        /// Builds the protocol called `name` with `options` and hands it to `job`.
        pub async fn dispatch<J: WithProtocol>(
            name: &str,
            options: &BTreeMap<String, String>,
            job: J,
        ) -> Result<J::Output, CallError> {
            let name: ProtocolName = name.parse().map_err(|e: UnknownProtocol| {
                CallError::Config(e.to_string())
            })?;
            match name {
                $(ProtocolName::$ty => Ok(job.run($module::$ty::new(options)?).await),)+
            }
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
    grpc_generic::GrpcGeneric,
    dubbo_generic::DubboGeneric,
    thrift_generic::ThriftGeneric,
}

impl fmt::Display for ProtocolName {
    /// The name, padded as the formatter asks (`{:<8}`).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad(self.as_str())
    }
}

/// A name that is none of [`NAMES`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown protocol `{0}`; this client speaks: {names}", names = NAMES.join(", "))]
pub struct UnknownProtocol(pub String);

impl FromStr for ProtocolName {
    type Err = UnknownProtocol;

    fn from_str(name: &str) -> Result<ProtocolName, UnknownProtocol> {
        ProtocolName::ALL
            .iter()
            .copied()
            .find(|p| p.as_str() == name)
            .ok_or_else(|| UnknownProtocol(name.to_owned()))
    }
}

impl serde::Serialize for ProtocolName {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

impl<'de> serde::Deserialize<'de> for ProtocolName {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let name = String::deserialize(deserializer)?;
        name.parse().map_err(serde::de::Error::custom)
    }
}

/// Something to do with a protocol whose concrete type is only known at run
/// time. Generic code (load models, probes) is written once against
/// [`Protocol`] and monomorphised per protocol, so the hot path has no
/// dynamic dispatch.
pub trait WithProtocol {
    type Output;
    fn run<P: Protocol>(self, protocol: P) -> impl Future<Output = Self::Output>;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_name_parses_to_its_protocol_and_prints_as_itself() {
        assert_eq!(ProtocolName::ALL.len(), NAMES.len());
        for (p, name) in ProtocolName::ALL.iter().zip(NAMES) {
            assert_eq!(p.to_string(), *name);
            assert_eq!(name.parse::<ProtocolName>(), Ok(*p));
            let json = serde_json::to_string(p).unwrap();
            assert_eq!(json, format!("\"{name}\""));
            assert_eq!(serde_json::from_str::<ProtocolName>(&json).unwrap(), *p);
        }
        assert_eq!("motan2".parse(), Ok(ProtocolName::Motan));
    }

    #[test]
    fn an_unknown_name_is_refused_with_the_names_spoken() {
        let e = "capnp".parse::<ProtocolName>().unwrap_err().to_string();
        assert!(
            e.starts_with("unknown protocol `capnp`; this client speaks: grpc, thrift"),
            "{e}"
        );
        let e = serde_json::from_str::<ProtocolName>("\"Grpc\"").unwrap_err();
        assert!(e.to_string().contains("unknown protocol `Grpc`"), "{e}");
    }
}
