//! Generic Dubbo calls: any method of the user's own Dubbo interface, by
//! Dubbo's generic invocation, `$invoke(String method, String[]
//! parameterTypes, Object[] args)`, as a Java consumer's `GenericService`
//! calls it: no interface class, no IDL, the arguments as hessian2 maps
//! and values ([`request`]), the result as the provider's `GenericFilter`
//! generalizes it ([`reply`]). The connection is the `dubbo` protocol's
//! ([`super::dubbo::DubboConnection`]: dubbo2 frames, multiplexed, with
//! heartbeats), and a registry is looked up as the `dubbo` protocol does
//! ([`crate::discovery`]), for the user's interface.
//!
//! The client's `--call`, `--types`, `--data`, `--expect` and `--registry`
//! (with `--protocol dubbo-generic`) become this protocol's options:
//!
//! | option | meaning |
//! | --- | --- |
//! | `call` | `interface/method` (or `interface.method`), e.g. `com.example.shop.InventoryService/reserve`, required |
//! | `types` | the parameter types, Java names, comma-separated (`com.example.shop.ReserveRequest,int`); without it, the provider finds the method by its name (an overloaded name then fails on the provider) |
//! | `data`, `data_file` | the arguments, a JSON array (default `[]`), inline or in a file; a file of one JSON array a line is several requests, sent round-robin (a data array, as ghz's; inline, an array is always one call's arguments) |
//! | `expect`, `expect_file` | the reply every call must get, as JSON (default: none); it may hold matchers ([`crate::expect`]) |
//! | `expect_partial` | `true`: compare only the keys `expect` gives ([`crate::expect`]) |
//! | `metadata`, `metadata_file` | attachments, as ghz's `-m`/`-M` take metadata ([`crate::metadata`]): a JSON object of string values, or an array of them sent round-robin; values may hold template values |
//! | `registry` | `zookeeper://host:port`: the provider of the interface found there (the target's port picks one of several; an empty target the first) |
//! | `version`, `group` | the service's version and group, if the provider exports it with them |
//! | `heartbeat_s` | as the `dubbo` protocol's |
//!
//! Only hessian2 is spoken, the serialization generic calls are made with
//! (and Dubbo's default up to 3.2; a 3.3 provider accepts it beside its
//! preferred fastjson2).
//!
//! # Before any load
//!
//! The JSON, the types and the count of arguments are checked when the
//! protocol is built; with a registry, the first connection checks that a
//! provider of the interface (of that version and group) is registered,
//! that it serves hessian2 and that it registered the method. That first
//! connection then makes one call and verifies its reply: a provider's
//! refusal (no such method, an argument it cannot convert: Dubbo's own
//! message) or a reply other than the expected one fails the cell there,
//! and nothing is measured.
//!
//! # Per call
//!
//! The request is encoded once ([`request::Request`]); a call whose
//! arguments or attachments hold a template value ([`crate::template`])
//! writes its values into it (`{{.WorkerID}}` is the connection's number). Every reply is decoded
//! (hessian2, to its end) and, with an expected reply, compared with it
//! ([`reply::first_difference`]); when neither the request nor the
//! expected reply changes from call to call, a reply whose bytes equal
//! those of a reply already verified is verified by one `memcmp`.

pub mod reply;
pub mod request;

use crate::discovery::{connect_provider, Providers, ServiceUrl, ZooKeeper};
use crate::expect::Expectation;
use crate::metadata::{Metadata, Use};
use crate::protocol::{
    check_options, first_call_verified, heartbeat_option, json_option, CallError, Connection,
    Protocol, WireCounter, GENERIC_OPTIONS,
};
use crate::protocols::dubbo::format::Format;
use crate::protocols::dubbo::serialization::hessian2::Hessian2;
use crate::protocols::dubbo::{
    providers_of, DubboCalls, DubboConnection, Frame, DEFAULT_HEARTBEAT_S,
};
use crate::protocols::grpc_generic::request::REQUEST_NUMBER;
use crate::template::{CallValues, Numbering, Worker};
use bytes::Bytes;
use request::{Invocation, Request};
use rpclab_model::contract::{Call, Value};
use rpclab_model::result::GenericCall;
use serde_json::Value as Json;
use std::collections::BTreeMap;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

/// The options of this protocol after the generic call's
/// ([`GENERIC_OPTIONS`]), which follow `call` and `types`.
const OPTIONS: &[&str] = &[
    "metadata",
    "metadata_file",
    "registry",
    "version",
    "group",
    "heartbeat_s",
];

/// Generic Dubbo calls (see the module documentation).
#[derive(Debug)]
pub struct DubboGeneric {
    interface: String,
    method: String,
    version: Option<String>,
    group: Option<String>,
    /// The parameter types given, for the report.
    types: Option<Vec<String>>,
    request: Arc<Request>,
    expected: Option<Arc<Json>>,
    /// The expectation with matchers or partial ([`crate::expect`]).
    matched: Option<Arc<Expectation>>,
    heartbeat: Option<Duration>,
    registry: Option<Providers>,
    /// Hessian2, for the connections' heartbeats.
    format: Arc<Format>,
    /// The calls' and connections' numbers.
    numbering: Numbering,
}

impl Protocol for DubboGeneric {
    type Conn = DubboGenericConnection;
    type Exchange = crate::protocol::NoExchange;

    const NAME: &'static str = "dubbo-generic";

    const CONNECTION_MODEL: &'static str = crate::mux::CONNECTION_MODEL;

    const FILE_OPTIONS: &'static [&'static str] = &["data_file", "expect_file", "metadata_file"];

    const CALL_OPTION: Option<&'static str> = Some("call");

    fn new(options: &BTreeMap<String, String>) -> Result<Self, CallError> {
        let known = [&["call", "types"], GENERIC_OPTIONS, OPTIONS].concat();
        check_options(Self::NAME, options, &known)?;
        let Some(call) = options.get("call") else {
            return Err(CallError::Config(
                "a generic Dubbo call needs the method: --call interface/method \
                 (e.g. com.example.shop.InventoryService/reserve)"
                    .into(),
            ));
        };
        let (interface, method) = split_call(call)?;
        let types = options
            .get("types")
            .map(|t| request::parse_types(t))
            .transpose()
            .map_err(CallError::Config)?;
        // A data file of one JSON array a line is a data array (an inline
        // `--data`, or a file of one JSON value, is one call's arguments:
        // they are an array already).
        let lines = data_lines(options)?;
        let data = match &lines {
            Some(requests) => requests[0].clone(),
            None => json_option(options, "data", "--data")?.unwrap_or(Json::Array(Vec::new())),
        };
        let expected = json_option(options, "expect", "--expect")?;
        // A generalized POJO names its class; an expectation need not.
        let matched = crate::expect::from_options(options, expected.as_ref(), &["class"])?;
        let non_empty = |key: &str| options.get(key).filter(|v| !v.is_empty()).cloned();
        let version = non_empty("version");
        let group = non_empty("group");
        let mut invocation = Invocation {
            interface: &interface,
            method: &method,
            types: types.as_deref(),
            args: &data,
            version: version.as_deref(),
            group: group.as_deref(),
            metadata: &Metadata::EMPTY,
        };
        let metadata = match json_option(options, "metadata", "--metadata")? {
            None => Metadata::EMPTY,
            Some(json) => Metadata::parse(
                &json,
                "--metadata",
                &invocation.template_method(),
                Use::DubboAttachments,
            )
            .map_err(CallError::Config)?,
        };
        invocation.metadata = &metadata;
        let request = match lines {
            Some(requests) => Request::data_array(&invocation, &requests),
            None => Request::new(&invocation),
        }
        .map_err(CallError::Config)?;
        Ok(DubboGeneric {
            interface,
            method,
            version,
            group,
            types,
            request: Arc::new(request),
            expected: expected.map(Arc::new),
            matched: matched.map(Arc::new),
            heartbeat: heartbeat_option(Self::NAME, options, Some(DEFAULT_HEARTBEAT_S))?,
            registry: Providers::from_options(Self::NAME, options)?,
            format: Arc::new(Format::Hessian2(Hessian2)),
            numbering: Numbering::default(),
        })
    }

    async fn connect(
        &self,
        target: &str,
        counter: WireCounter,
    ) -> Result<DubboGenericConnection, CallError> {
        let wanted = Wanted {
            interface: self.interface.clone(),
            version: self.version.clone(),
            group: self.group.clone(),
        };
        let (read, write) = connect_provider(
            self.registry.as_ref(),
            target,
            counter,
            |zk| async move { wanted.lookup(zk).await },
            |provider| self.accept(provider),
        )
        .await?;
        let conn = DubboGenericConnection {
            conn: DubboConnection::start(
                read,
                write,
                self.heartbeat,
                DubboCalls::new(Arc::clone(&self.format)),
            ),
            call: format!("{}/{}", self.interface, self.method),
            request: Arc::clone(&self.request),
            expected: self.expected.clone(),
            matched: self.matched.clone(),
            worker: self.numbering.worker(),
            same_every_call: !self.request.numbered()
                && !self
                    .expected
                    .as_deref()
                    .is_some_and(|e| e.to_string().contains(REQUEST_NUMBER)),
            reference: OnceLock::new(),
        };
        if self.numbering.first() {
            conn.first_call().await?;
        }
        Ok(conn)
    }

    fn generic_call(&self) -> Option<GenericCall> {
        Some(GenericCall {
            method: format!("{}/{}", self.interface, self.method),
            descriptors: match &self.types {
                Some(types) => format!("parameter types {}", types.join(", ")),
                None => format!(
                    "no parameter types (the provider finds `{}` by its name)",
                    self.method
                ),
            },
            request_bytes: self
                .request
                .body(&CallValues::new(0, 0, self.request.needs()))
                .len() as u64,
            templates: self.request.templates().to_vec(),
            expected_reply: self.expected.is_some(),
            stream: None,
        })
    }
}

impl DubboGeneric {
    /// What a registered provider must offer: hessian2, and the method.
    fn accept(&self, provider: &ServiceUrl) -> Result<(), CallError> {
        // `serialization` (Dubbo's default: hessian2) and, from 3.2 on,
        // `prefer.serialization`: the ids a provider accepts.
        let serializations: Vec<&str> = ["serialization", "prefer.serialization"]
            .iter()
            .filter_map(|key| provider.params.get(*key))
            .flat_map(|v| v.split(','))
            .map(str::trim)
            .collect();
        if !serializations.is_empty() && !serializations.contains(&"hessian2") {
            return Err(CallError::Config(format!(
                "the provider of {} at {} accepts serialization {}; generic calls are made \
                 in hessian2, which it does not list",
                self.interface,
                provider.address(),
                serializations.join(", ")
            )));
        }
        if let Some(methods) = provider.params.get("methods") {
            let methods: Vec<&str> = methods.split(',').collect();
            if !methods.contains(&self.method.as_str()) {
                return Err(CallError::Config(format!(
                    "the provider of {} at {} has no method `{}` (its methods: {})",
                    self.interface,
                    provider.address(),
                    self.method,
                    methods.join(", ")
                )));
            }
        }
        Ok(())
    }
}

/// The interface, version and group a registry lookup looks for.
struct Wanted {
    interface: String,
    version: Option<String>,
    group: Option<String>,
}

impl Wanted {
    /// The providers of the interface with this version and group; none is
    /// an error that says what the registry holds instead.
    async fn lookup(self, zk: ZooKeeper) -> Result<Vec<ServiceUrl>, CallError> {
        let all = match providers_of(&zk, &self.interface).await {
            Ok(all) => all,
            Err(e) => return Err(self.not_registered(&zk, e).await),
        };
        // A provider without a version or group registers none (Dubbo
        // treats `0.0.0` as none too).
        let param = |p: &ServiceUrl, key: &str| {
            p.params
                .get(key)
                .filter(|v| !v.is_empty() && *v != "0.0.0")
                .cloned()
        };
        let (matching, other): (Vec<ServiceUrl>, Vec<ServiceUrl>) = all
            .into_iter()
            .partition(|p| param(p, "version") == self.version && param(p, "group") == self.group);
        if matching.is_empty() {
            let seen: Vec<String> = other
                .iter()
                .map(|p| {
                    format!(
                        "{} (version {}, group {})",
                        p.address(),
                        param(p, "version").unwrap_or_else(|| "none".into()),
                        param(p, "group").unwrap_or_else(|| "none".into())
                    )
                })
                .collect();
            return Err(CallError::Config(format!(
                "registry {}: no provider of {} with version {} and group {}; registered: {} \
                 (pass --option version=… and --option group=… as they are registered)",
                zk.url(),
                self.interface,
                self.version.as_deref().unwrap_or("none"),
                self.group.as_deref().unwrap_or("none"),
                seen.join("; ")
            )));
        }
        Ok(matching)
    }

    /// Why the interface has no provider: what the registry lists instead
    /// under `/dubbo`, or the lookup's own error when even that fails.
    async fn not_registered(&self, zk: &ZooKeeper, error: CallError) -> CallError {
        match zk.children("/dubbo").await {
            Ok(mut interfaces) => {
                interfaces.sort();
                CallError::Config(format!(
                    "registry {}: no dubbo provider of {} is registered (the interfaces \
                     registered under /dubbo: {})",
                    zk.url(),
                    self.interface,
                    if interfaces.is_empty() {
                        "none".to_owned()
                    } else {
                        interfaces.join(", ")
                    }
                ))
            }
            Err(_) => error,
        }
    }
}

/// `interface/method` or `interface.method`.
fn split_call(call: &str) -> Result<(String, String), CallError> {
    let split = call.rsplit_once('/').or_else(|| call.rsplit_once('.'));
    match split {
        Some((interface, method))
            if interface.contains('.') && !method.is_empty() && !method.contains('.') =>
        {
            Ok((interface.to_owned(), method.to_owned()))
        }
        _ => Err(CallError::Config(format!(
            "--call `{call}` is not interface/method (e.g. com.example.shop.InventoryService/reserve)"
        ))),
    }
}

/// One dubbo connection making generic calls.
#[derive(Debug)]
pub struct DubboGenericConnection {
    conn: DubboConnection,
    /// `interface/method`, for errors.
    call: String,
    request: Arc<Request>,
    expected: Option<Arc<Json>>,
    matched: Option<Arc<Expectation>>,
    /// This connection's number, the calls' `{{.WorkerID}}`.
    worker: Worker,
    /// Whether every call's request and expected reply are the same.
    same_every_call: bool,
    /// The body of a reply already verified, when they are.
    reference: OnceLock<Bytes>,
}

impl DubboGenericConnection {
    /// One call: its number and its reply.
    async fn exchange(&self) -> Result<(u64, Frame), CallError> {
        let (n, call) = self.worker.next(self.request.needs());
        let frame = self
            .conn
            .exchange(|id| Ok(self.request.frame(id, &call)))
            .await?;
        Ok((n, frame))
    }

    /// The first call, verified before anything is measured.
    async fn first_call(&self) -> Result<(), CallError> {
        first_call_verified(&self.call, async {
            let (n, frame) = self.exchange().await?;
            self.verify(n, &frame).map(drop)
        })
        .await
    }

    /// Checks the reply to call `n`; gives its value when it was decoded.
    fn verify(&self, n: u64, frame: &Frame) -> Result<Option<hessian2::Value>, CallError> {
        if self.same_every_call && self.reference.get() == Some(&frame.body) {
            return Ok(None);
        }
        let value = reply::decode(&frame.header, &frame.body)?;
        let difference = match (&self.matched, &self.expected) {
            (Some(matched), _) => matched.first_difference(&reply::to_json(&value), n),
            (None, Some(expected)) => reply::first_difference(expected, &value, n),
            (None, None) => None,
        };
        if let Some(difference) = difference {
            return Err(CallError::WrongResponse(format!(
                "{}: {difference}",
                short(&self.call)
            )));
        }
        if self.same_every_call {
            let _ = self.reference.set(frame.body.clone());
        }
        Ok(Some(value))
    }
}

/// `InventoryService/reserve` of `com.example.shop.InventoryService/reserve`.
fn short(call: &str) -> &str {
    let (interface, _) = call.rsplit_once('/').unwrap_or((call, ""));
    match interface.rsplit_once('.') {
        Some((package, _)) => &call[package.len() + 1..],
        None => call,
    }
}

impl Connection for DubboGenericConnection {
    /// The reply as JSON text (the contract's value has no other form for
    /// the user's types).
    async fn call(&self, _call: &Call) -> Result<Value, CallError> {
        let (n, frame) = self.exchange().await?;
        let value = match self.verify(n, &frame)? {
            Some(value) => value,
            None => reply::decode(&frame.header, &frame.body)?,
        };
        Ok(Value::Str(reply::to_json(&value).to_string()))
    }

    /// The contract's call is not looked at: every call is the user's.
    async fn verified_call(&self, _call: &Call) -> Result<(), CallError> {
        let (n, frame) = self.exchange().await?;
        self.verify(n, &frame).map(drop)
    }
}

/// The requests of a data file of one JSON array a line (several
/// lines, not one JSON value as a whole); `None` for anything else.
fn data_lines(options: &BTreeMap<String, String>) -> Result<Option<Vec<Json>>, CallError> {
    let Some(path) = options.get("data_file") else {
        return Ok(None);
    };
    let text = std::fs::read_to_string(path)
        .map_err(|e| CallError::Config(format!("cannot read --data-file {path}: {e}")))?;
    if serde_json::from_str::<Json>(&text).is_ok() {
        return Ok(None);
    }
    crate::protocol::json_lines_option(options, "data", "--data").map(|lines| match lines {
        Some(Json::Array(requests)) => Some(requests),
        _ => None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{options, refusal};

    #[test]
    fn calls_are_split_as_interface_and_method() {
        let interface = "com.example.shop.InventoryService";
        for call in [
            format!("{interface}/reserve"),
            format!("{interface}.reserve"),
        ] {
            assert_eq!(
                split_call(&call).unwrap(),
                (interface.into(), "reserve".into())
            );
        }
        for bad in ["reserve", "Service/reserve", "a.B/", "a.B/c.d"] {
            assert!(split_call(bad).is_err(), "{bad}");
        }
        assert_eq!(
            short("com.example.shop.InventoryService/reserve"),
            "InventoryService/reserve"
        );
    }

    #[test]
    fn bad_input_is_one_line_that_names_it() {
        assert!(refusal::<DubboGeneric>(&[]).starts_with("a generic Dubbo call needs the method"));
        let call = ("call", "com.example.shop.InventoryService/reserve");
        assert_eq!(
            refusal::<DubboGeneric>(&[call, ("types", "int"), ("data", "[1, 2]")]),
            "--types names 1 parameter type (int) but --data holds 2 arguments"
        );
        assert!(refusal::<DubboGeneric>(&[call, ("data", "[")]).starts_with("--data is not JSON"));
        assert!(
            refusal::<DubboGeneric>(&[call, ("expect", "{")]).starts_with("--expect is not JSON")
        );
        assert_eq!(
            refusal::<DubboGeneric>(&[call, ("protoset", "x")]),
            "protocol `dubbo-generic` has no option `protoset` (known: call, types, data, \
             data_file, expect, expect_file, expect_partial, metadata, metadata_file, registry, version, group, heartbeat_s)"
        );
        assert!(refusal::<DubboGeneric>(&[call, ("registry", "nacos://h:1")]).contains("nacos"));
        for m in [
            refusal::<DubboGeneric>(&[call, ("types", "int"), ("data", r#"["x"]"#)]),
            refusal::<DubboGeneric>(&[call, ("data", "{}"), ("data_file", "f")]),
        ] {
            assert!(!m.contains('\n'), "{m}");
        }
    }

    #[test]
    fn the_report_says_what_is_called() {
        let p = DubboGeneric::new(&options(&[
            ("call", "com.example.shop.InventoryService/reserve"),
            ("types", "com.example.shop.ReserveRequest"),
            (
                "data",
                r#"[{"requestId": "r-{{.RequestNumber}}", "sku": "a", "quantity": 1}]"#,
            ),
            ("expect", r#"{"requestId": "r-{{.RequestNumber}}"}"#),
        ]))
        .unwrap();
        let call = p.generic_call().unwrap();
        assert_eq!(call.method, "com.example.shop.InventoryService/reserve");
        assert_eq!(
            call.descriptors,
            "parameter types com.example.shop.ReserveRequest"
        );
        assert_eq!(call.templates, ["r-{{.RequestNumber}}"]);
        assert!(call.expected_reply);
        assert!(call.request_bytes > 100);
        let bare = DubboGeneric::new(&options(&[("call", "a.B/c")])).unwrap();
        assert_eq!(
            bare.generic_call().unwrap().descriptors,
            "no parameter types (the provider finds `c` by its name)"
        );
    }

    #[test]
    fn a_provider_must_serve_hessian2_and_the_method() {
        let p = DubboGeneric::new(&options(&[("call", "a.B/c")])).unwrap();
        let provider = |query: &str| {
            ServiceUrl::parse(&format!("dubbo://127.0.0.1:20880/a.B?{query}")).unwrap()
        };
        assert!(p.accept(&provider("methods=c,d")).is_ok());
        assert!(p
            .accept(&provider(
                "serialization=fastjson2&prefer.serialization=fastjson2,hessian2"
            ))
            .is_ok());
        assert_eq!(
            p.accept(&provider("methods=d,e")).unwrap_err().to_string(),
            "configuration: the provider of a.B at 127.0.0.1:20880 has no method `c` (its methods: d, e)"
        );
        assert!(p
            .accept(&provider("serialization=kryo"))
            .unwrap_err()
            .to_string()
            .contains("accepts serialization kryo"));
    }
}
