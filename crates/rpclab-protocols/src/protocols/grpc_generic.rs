//! Generic gRPC calls: any method of the user's own service, unary or
//! streaming ([`stream`]: server, client or bidirectional, one stream a
//! call, with ghz's stream flags), its
//! request from JSON, its types from `.proto` files (`proto`, compiled
//! in-process), a descriptor set (`protoset`) or the server's reflection, on the same HTTP/2 channel as the contract's gRPC
//! ([`super::grpc`]), plaintext or TLS ([`crate::tls`]).
//!
//! The client's `--call`, `--data`, `--data-file`, `--proto`,
//! `-i/--import-paths`, `--protoset`, `--expect` and `--expect-file` (ghz's names where ghz has them) become
//! this protocol's options:
//!
//! | option | meaning |
//! | --- | --- |
//! | `call` | `package.Service/Method` (or `package.Service.Method`), required |
//! | `data`, `data_file` | the request as JSON (default `{}`), inline or in a file; a JSON array (or a file of one JSON message a line) is several requests, sent round-robin |
//! | `metadata`, `metadata_file` | request headers as JSON, ghz's `-m`/`-M` ([`crate::metadata`]): an object of string values, or an array of them sent round-robin; a stream's are its request headers |
//! | `expect`, `expect_file` | the reply every call must get, as JSON (default: none); an array pairs with `data`'s, element by element; it (each element) may hold matchers ([`crate::expect`]) |
//! | `expect_partial` | `true`: compare only the keys `expect` (each element of its array) gives ([`crate::expect`]) |
//! | `proto` | a `.proto` file that defines the service, compiled in-process ([`proto_files`]) |
//! | `import_paths` | with `proto`: the folders its imports are relative to, comma-separated (ghz's `-i`) |
//! | `protoset` | a `FileDescriptorSet` file (`protoc --descriptor_set_out=FILE --include_imports`); without it or `proto`, the server's reflection |
//! | `stream_call_count`, `stream_call_duration`, `stream_interval`, `stream_dynamic_messages` | a streaming method's streams, ghz's flags ([`stream`]) |
//! | `tls`, `cacert`, `server_name`, `cert`, `key` | TLS ([`crate::tls`]) |
//!
//! # Before any load
//!
//! Everything the user wrote is checked before a call is measured, and a
//! mistake is one error that names it: a service or method the types do
//! not have (with the ones they have), a stream flag on a unary method, a
//! JSON field
//! the message does not have or a value of the wrong type (by its path,
//! `items[1].quantity`), a reflection service that cannot be asked (with
//! the hint to pass `--protoset`), a `.proto` file that does not compile
//! (the compiler's message with file and line) or an import that none of
//! the import paths holds (naming it and the folders searched). With a
//! `.proto` file or a protoset this happens when the protocol is built; with reflection, on the first connection, which asks
//! the server for the service's files. That first connection then makes
//! one call and verifies its reply: if it is not right, the cell fails
//! there, and nothing is measured.
//!
//! # Per call
//!
//! The request is encoded once ([`request::Template`]); a call whose
//! request holds a template value ([`crate::template`]) writes its values
//! into the encoded pieces, nothing more; the headers are encoded once
//! too, or per call when the metadata holds a template value
//! ([`crate::metadata::HeaderBlocks`]). Call `n` sends request
//! `n mod len` of a data array and metadata set `n mod len`, and
//! `{{.WorkerID}}` is the number of the connection that makes it. Every reply is checked as the contract's gRPC
//! replies are (status 200, `application/grpc`, one uncompressed message,
//! `grpc-status` 0), then:
//!
//! * with an expected reply, compared with it: a reply whose bytes equal
//!   those of a reply already found equal is verified by one `memcmp`;
//!   any other is decoded as the method's output type and compared field
//!   by field ([`compare`]); a difference is a wrong response that names
//!   the first differing field;
//! * with an expected reply that holds matchers, or with `expect_partial`
//!   ([`crate::expect`]; each element of an expect array on its own),
//!   decoded and judged in proto3's JSON form, never by its bytes;
//! * without one, decoded as the method's output type (a reply whose bytes
//!   equal one that decoded is not decoded again).

mod compare;
pub mod proto_files;
mod reflection;
pub mod request;
pub mod stream;
#[cfg(test)]
mod test_pool;

use crate::error_text::listed;
use crate::expect::Expectation;
use crate::metadata::{HeaderBlocks, Metadata, Use};
use crate::protocol::{
    first_call_verified, json_lines_option, json_option, CallError, Connection, Messages, Protocol,
    WireCounter, FIRST_CALL_TIMEOUT, GENERIC_OPTIONS,
};
use crate::protocols::grpc::conn::Channel;
use crate::protocols::grpc::{check_target, frame, USER_AGENT};
use crate::template::{self, CallValues, Needs, Numbering, Worker};
use crate::tls::{Alpn, Transport};
use bytes::Bytes;
use prost_reflect::{DescriptorPool, DynamicMessage, MethodDescriptor};
use request::{Parsed, Template};
use rpclab_model::contract::{Call, Value};
use rpclab_model::result::{GenericCall, TlsSetting};
use std::collections::BTreeMap;
use std::sync::{Arc, OnceLock};
use stream::{StreamFlags, StreamKind, StreamLink};
use tokio::sync::OnceCell;

/// The options of this protocol after `call` and the generic call's
/// ([`GENERIC_OPTIONS`]), besides TLS's ([`crate::tls::OPTIONS`]).
const OPTIONS: &[&str] = &[
    "metadata",
    "metadata_file",
    "protoset",
    "proto",
    "import_paths",
    "stream_call_count",
    "stream_call_duration",
    "stream_interval",
    "stream_dynamic_messages",
];

/// Generic gRPC calls (see the module documentation).
#[derive(Debug)]
pub struct GrpcGeneric {
    service: String,
    method: String,
    data: serde_json::Value,
    expect: Option<serde_json::Value>,
    metadata: Option<serde_json::Value>,
    /// `expect_partial` ([`crate::expect`]).
    partial: bool,
    protoset: Option<String>,
    /// ghz's stream flags, and which of them were given (refused on a
    /// unary method).
    stream_flags: StreamFlags,
    stream_flags_given: Vec<&'static str>,
    transport: Transport,
    /// The method resolved: at once from a protoset, on the first
    /// connection from reflection.
    resolved: OnceCell<Arc<Resolved>>,
    /// The calls' and connections' numbers.
    numbering: Numbering,
}

/// The method, its requests encoded once, their expected replies, its
/// metadata.
#[derive(Debug)]
struct Resolved {
    method: MethodDescriptor,
    /// Where the types came from, for the report.
    descriptors: String,
    /// One request, or a data array's, sent round-robin.
    requests: Vec<Template>,
    /// None, one for every request, or one per request of the array.
    expected: Vec<Expected>,
    metadata: Metadata,
    /// What a call must take before it is written (its time, a UUID).
    needs: Needs,
    /// Which side streams; `None` for a unary method.
    stream: Option<StreamKind>,
}

impl Resolved {
    fn request(&self, n: u64) -> &Template {
        &self.requests[(n % self.requests.len() as u64) as usize]
    }

    fn expected(&self, n: u64) -> Option<&Expected> {
        if self.expected.is_empty() {
            return None;
        }
        Some(&self.expected[(n % self.expected.len() as u64) as usize])
    }

    /// Whether every call sends the same request and expects the same
    /// reply, so that a reply equal to one verified is verified.
    fn same_every_call(&self) -> bool {
        self.requests.len() == 1
            && !self.requests[0].numbered()
            && self.expected.len() <= 1
            && !matches!(
                self.expected.first(),
                Some(Expected::Numbered(_) | Expected::Matched(_))
            )
    }
}

/// The reply every call must get.
#[derive(Debug)]
enum Expected {
    /// The same message for every call.
    Fixed(DynamicMessage),
    /// A message with the call's number in it.
    Numbered(Template),
    /// Matchers or a partial expectation, judged on the reply's JSON
    /// ([`crate::expect`]).
    Matched(Arc<Expectation>),
}

impl Protocol for GrpcGeneric {
    type Conn = GrpcGenericConnection;
    type Exchange = crate::protocol::NoExchange;

    const NAME: &'static str = "grpc-generic";

    const CONNECTION_MODEL: &'static str = "HTTP/2, calls multiplexed on each connection";

    const FILE_OPTIONS: &'static [&'static str] = &[
        "data_file",
        "expect_file",
        "metadata_file",
        "protoset",
        "proto",
        "cacert",
    ];

    const CALL_OPTION: Option<&'static str> = Some("call");

    fn new(options: &BTreeMap<String, String>) -> Result<Self, CallError> {
        let known = [&["call"], GENERIC_OPTIONS, OPTIONS].concat();
        crate::tls::check_options(Self::NAME, options, &known)?;
        let Some(call) = options.get("call") else {
            return Err(CallError::Config(
                "a generic gRPC call needs the method: --call package.Service/Method".into(),
            ));
        };
        let (service, method) = split_call(call)?;
        let data = json_lines_option(options, "data", "--data")?
            .unwrap_or_else(|| serde_json::Value::Object(Default::default()));
        let expect = json_lines_option(options, "expect", "--expect")?;
        let metadata = json_option(options, "metadata", "--metadata")?;
        let partial = crate::expect::partial(options, expect.is_some())?;
        // Matchers are checked now, before any connection; each element
        // of an array is an expectation of its own.
        if let Some(json) = &expect {
            for (json, what) in elements(json, "--expect") {
                Expectation::of(json, partial, &[])
                    .map_err(|e| CallError::Config(format!("{what}: {e}")))?;
            }
        }
        let protocol = GrpcGeneric {
            service,
            method,
            data,
            expect,
            metadata,
            partial,
            protoset: options.get("protoset").cloned(),
            stream_flags: StreamFlags::from_options(options).map_err(CallError::Config)?,
            stream_flags_given: StreamFlags::given(options),
            transport: Transport::from_options(Self::NAME, options, Alpn::H2)?,
            resolved: OnceCell::new(),
            numbering: Numbering::default(),
        };
        if options.contains_key("import_paths") && !options.contains_key("proto") {
            return Err(CallError::Config(
                "--import-paths are the folders of --proto FILE's imports: give --proto too".into(),
            ));
        }
        if let Some(file) = options.get("proto") {
            if protocol.protoset.is_some() {
                return Err(CallError::Config(
                    "give the service's types once: --proto FILE or --protoset FILE, not both"
                        .into(),
                ));
            }
            let import_paths: Vec<String> = options
                .get("import_paths")
                .map(|paths| {
                    paths
                        .split(',')
                        .map(str::trim)
                        .filter(|p| !p.is_empty())
                        .map(str::to_owned)
                        .collect()
                })
                .unwrap_or_default();
            let pool = proto_files::compile(file, &import_paths).map_err(CallError::Config)?;
            let resolved = protocol.resolve(&pool, format!("proto {file}"))?;
            let _ = protocol.resolved.set(Arc::new(resolved));
        }
        if let Some(path) = &protocol.protoset {
            let bytes = std::fs::read(path)
                .map_err(|e| CallError::Config(format!("cannot read the protoset {path}: {e}")))?;
            let pool = DescriptorPool::decode(bytes.as_slice()).map_err(|e| {
                CallError::Config(format!(
                    "{path} is no descriptor set ({e}); write one with \
                     protoc --descriptor_set_out={path} --include_imports FILE.proto"
                ))
            })?;
            let resolved = protocol.resolve(&pool, format!("protoset {path}"))?;
            let _ = protocol.resolved.set(Arc::new(resolved));
        }
        Ok(protocol)
    }

    async fn connect(
        &self,
        target: &str,
        counter: WireCounter,
    ) -> Result<GrpcGenericConnection, CallError> {
        check_target(target)?;
        let tls = self.transport.is_tls();
        // Reflection asks on the contract's channel, which then carries
        // this connection's unary calls.
        let mut channel = None;
        if self.resolved.get().is_none() {
            let opened = Channel::open(target, counter.clone(), self.transport.clone()).await?;
            self.resolved
                .get_or_try_init(|| async {
                    self.reflect(&opened, target, tls).await.map(Arc::new)
                })
                .await?;
            channel = Some(opened);
        }
        let resolved = self.resolved.get().expect("resolved above");
        let path = format!(
            "/{}/{}",
            resolved.method.parent_service().full_name(),
            resolved.method.name()
        );
        let link = match resolved.stream {
            None => Link::Unary(match channel {
                Some(channel) => channel,
                None => Channel::open(target, counter, self.transport.clone()).await?,
            }),
            Some(kind) => Link::Stream(
                StreamLink::open(target, &path, &counter, &self.transport).await?,
                kind,
            ),
        };
        let headers = HeaderBlocks::new(
            frame::request_headers_over(&path, target, USER_AGENT, tls),
            &resolved.metadata,
        );
        let conn = GrpcGenericConnection {
            headers,
            link,
            flags: self.stream_flags,
            resolved: Arc::clone(resolved),
            worker: self.numbering.worker(),
            reference: OnceLock::new(),
        };
        if self.numbering.first() {
            conn.first_call(&path).await?;
        }
        Ok(conn)
    }

    fn tls(&self) -> Option<TlsSetting> {
        Some(self.transport.setting())
    }

    fn generic_call(&self) -> Option<GenericCall> {
        let resolved = self.resolved.get()?;
        Some(GenericCall {
            method: format!(
                "{}/{}",
                resolved.method.parent_service().full_name(),
                resolved.method.name()
            ),
            descriptors: resolved.descriptors.clone(),
            request_bytes: resolved.requests[0]
                .message(&CallValues::new(0, 0, resolved.needs))
                .len() as u64,
            templates: resolved
                .requests
                .iter()
                .flat_map(|r| r.templates().iter().cloned())
                .chain(resolved.metadata.templates())
                .collect(),
            expected_reply: !resolved.expected.is_empty(),
            stream: resolved.stream.map(|kind| self.stream_flags.setting(kind)),
        })
    }
}

impl GrpcGeneric {
    /// The method in `pool`, its request and expected reply built.
    fn resolve(&self, pool: &DescriptorPool, descriptors: String) -> Result<Resolved, CallError> {
        let Some(service) = pool.get_service_by_name(&self.service) else {
            return Err(CallError::Config(format!(
                "unknown service `{}` in the {descriptors} (its services: {})",
                self.service,
                listed(pool.services().map(|s| s.full_name().to_owned()))
            )));
        };
        let Some(method) = service.methods().find(|m| m.name() == self.method) else {
            let names: Vec<String> = service.methods().map(|m| m.name().to_owned()).collect();
            return Err(CallError::Config(format!(
                "service `{}` has no method `{}` (its methods: {})",
                self.service,
                self.method,
                names.join(", ")
            )));
        };
        let stream = StreamKind::of(method.is_client_streaming(), method.is_server_streaming());
        if stream.is_none() && !self.stream_flags_given.is_empty() {
            return Err(CallError::Config(format!(
                "{} {} for streaming methods; `{}/{}` is unary: leave {} out",
                self.stream_flags_given.join(", "),
                if self.stream_flags_given.len() == 1 {
                    "is"
                } else {
                    "are"
                },
                self.service,
                self.method,
                if self.stream_flags_given.len() == 1 {
                    "it"
                } else {
                    "them"
                },
            )));
        }
        let values = template_method(&method);
        let requests = elements(&self.data, "--data")
            .iter()
            .map(|(json, what)| {
                let parsed = request::parse(&method.input(), json, what, &values)
                    .map_err(CallError::Config)?;
                Template::new(&parsed).map_err(|e| CallError::Config(format!("{what}: {e}")))
            })
            .collect::<Result<Vec<_>, _>>()?;
        if requests.is_empty() {
            return Err(CallError::Config(
                "--data: an empty array; give a message, or messages".into(),
            ));
        }
        let expected = match &self.expect {
            None => Vec::new(),
            Some(json) => {
                let expects = elements(json, "--expect");
                if json.is_array() && expects.len() != requests.len() {
                    return Err(CallError::Config(format!(
                        "--expect: an array of {} replies for {} requests; give one reply, \
                         or one per element of --data",
                        expects.len(),
                        requests.len()
                    )));
                }
                expects
                    .iter()
                    .map(|(json, what)| expected_of(&method, json, what, &values, self.partial))
                    .collect::<Result<Vec<_>, _>>()?
            }
        };
        let metadata = match &self.metadata {
            None => Metadata::default(),
            Some(json) => Metadata::parse(json, "--metadata", &values, Use::GrpcHeaders)
                .map_err(CallError::Config)?,
        };
        let needs = requests
            .iter()
            .fold(metadata.needs(), |n, r| n.union(r.needs()));
        Ok(Resolved {
            method,
            descriptors,
            requests,
            expected,
            metadata,
            needs,
            stream,
        })
    }

    /// The method's types from the server's reflection, on `channel`.
    async fn reflect(
        &self,
        channel: &Channel,
        target: &str,
        tls: bool,
    ) -> Result<Resolved, CallError> {
        let reflection = reflection::Reflection {
            channel,
            authority: target,
            tls,
        };
        let asked = tokio::time::timeout(FIRST_CALL_TIMEOUT, reflection.service(&self.service));
        let hint = "pass the service's descriptor set with --protoset FILE \
                    (protoc --descriptor_set_out=FILE --include_imports FILE.proto)";
        match asked.await {
            Err(_) => Err(CallError::Config(format!(
                "{target}: server reflection did not answer in {} s; {hint}",
                FIRST_CALL_TIMEOUT.as_secs()
            ))),
            Ok(Err(reflection::Failure::Unreachable(why))) => Err(CallError::Config(format!(
                "{target}: cannot use server reflection ({why}); {hint}"
            ))),
            Ok(Err(reflection::Failure::UnknownService(why))) => Err(CallError::Config(why)),
            Ok(Err(reflection::Failure::Transport(e))) => Err(e),
            Ok(Err(reflection::Failure::Broken(why))) => {
                Err(CallError::Config(format!("{target}: {why}; {hint}")))
            }
            Ok(Ok((pool, version))) => self.resolve(&pool, format!("reflection {version}")),
        }
    }
}

/// What ghz's template values say of `method`.
fn template_method(method: &MethodDescriptor) -> template::Method {
    template::Method {
        fully_qualified_name: method.full_name().to_owned(),
        method_name: method.name().to_owned(),
        service_name: method.parent_service().name().to_owned(),
        input_name: method.input().name().to_owned(),
        output_name: method.output().name().to_owned(),
        client_streaming: method.is_client_streaming(),
        server_streaming: method.is_server_streaming(),
    }
}

/// The messages of `json`: its elements, each named by its index, when it
/// is an array (a message is an object), else itself.
fn elements<'a>(json: &'a serde_json::Value, flag: &str) -> Vec<(&'a serde_json::Value, String)> {
    match json {
        serde_json::Value::Array(items) => items
            .iter()
            .enumerate()
            .map(|(i, item)| (item, format!("{flag}[{i}]")))
            .collect(),
        one => vec![(one, flag.to_owned())],
    }
}

/// An expected reply: only values that follow from the call's number and
/// connection may be in it, since the reply cannot repeat a value the
/// client drew (a UUID, a time, a random string).
fn expected_of(
    method: &MethodDescriptor,
    json: &serde_json::Value,
    what: &str,
    values: &template::Method,
    partial: bool,
) -> Result<Expected, CallError> {
    if let Some(matched) = Expectation::of(json, partial, &[])
        .map_err(|e| CallError::Config(format!("{what}: {e}")))?
    {
        // The fields it names are checked as an exact expectation's are;
        // the matchers' places read as unset.
        request::parse(&method.output(), &Expectation::skeleton(json), what, values)
            .map_err(CallError::Config)?;
        return Ok(Expected::Matched(Arc::new(matched)));
    }
    let parsed: Parsed =
        request::parse(&method.output(), json, what, values).map_err(CallError::Config)?;
    let template = Template::new(&parsed).map_err(|e| CallError::Config(format!("{what}: {e}")))?;
    if let Some(drawn) = template.values().into_iter().find(|v| !v.is_reproducible()) {
        return Err(CallError::Config(format!(
            "{what}: {} is drawn anew for every call and cannot be expected; \
             only {{{{.RequestNumber}}}} and {{{{.WorkerID}}}} may be in an expected reply",
            drawn.written()
        )));
    }
    Ok(if template.numbered() {
        Expected::Numbered(template)
    } else {
        Expected::Fixed(parsed.message)
    })
}

/// The method `call` names, as `package.Service/Method` whichever way it
/// was written (`package.Service.Method` too, as ghz takes it): what the
/// lab names a generic cell by.
pub fn method_of(call: &str) -> Result<String, CallError> {
    let (service, method) = split_call(call)?;
    Ok(format!("{service}/{method}"))
}

/// `package.Service/Method` or `package.Service.Method` (as ghz takes it).
fn split_call(call: &str) -> Result<(String, String), CallError> {
    let split = call.rsplit_once('/').or_else(|| call.rsplit_once('.'));
    match split {
        Some((service, method))
            if !service.is_empty() && !method.is_empty() && !method.contains('.') =>
        {
            Ok((
                service.trim_start_matches('/').to_owned(),
                method.to_owned(),
            ))
        }
        _ => Err(CallError::Config(format!(
            "--call `{call}` is not package.Service/Method"
        ))),
    }
}

/// One HTTP/2 connection making generic calls.
#[derive(Debug)]
pub struct GrpcGenericConnection {
    link: Link,
    flags: StreamFlags,
    /// The unary request's header blocks, for this target, with the
    /// metadata (a stream's head is [`StreamLink`]'s, its metadata added
    /// per stream).
    headers: HeaderBlocks,
    resolved: Arc<Resolved>,
    /// This connection's number, the calls' `{{.WorkerID}}`.
    worker: Worker,
    /// A reply message already verified (for a request and an expected
    /// reply that are the same on every call).
    reference: OnceLock<Bytes>,
}

/// What a connection's calls go on: a unary method's on the contract's
/// own HTTP/2 client, a streaming method's streams on [`StreamLink`].
#[derive(Debug)]
enum Link {
    Unary(Channel),
    Stream(StreamLink, StreamKind),
}

impl GrpcGenericConnection {
    /// One unary call: its values, its request, the reply message.
    async fn exchange(&self, channel: &Channel) -> Result<(CallValues, Bytes), CallError> {
        let (n, call) = self.worker.next(self.resolved.needs);
        let body = self.resolved.request(n).body(&call);
        let reply = channel.call(self.headers.block(&call), body).await?;
        Ok((call, reply))
    }

    /// One call, verified; a stream's messages recorded in `messages`.
    async fn verified(&self, messages: &mut Messages) -> Result<(), CallError> {
        match &self.link {
            Link::Unary(channel) => {
                let (values, reply) = self.exchange(channel).await?;
                self.verify(&values, &reply)
            }
            Link::Stream(link, kind) => {
                stream::stream_call(link, self, *kind, &self.flags, messages).await
            }
        }
    }

    /// The first call, verified before anything is measured.
    async fn first_call(&self, path: &str) -> Result<(), CallError> {
        first_call_verified(path, self.verified(&mut Messages::default())).await
    }

    /// Checks reply message `reply` of call `call` (see the module
    /// documentation).
    fn verify(&self, call: &CallValues, reply: &Bytes) -> Result<(), CallError> {
        let resolved = &*self.resolved;
        let output = resolved.method.output();
        let decode = |bytes: &[u8]| {
            DynamicMessage::decode(output.clone(), bytes).map_err(|e| {
                CallError::Protocol(format!("the reply is no {}: {e}", output.full_name()))
            })
        };
        let wrong = |difference: String| {
            CallError::WrongResponse(format!(
                "{}/{}: {difference}",
                resolved.method.parent_service().name(),
                resolved.method.name()
            ))
        };
        let same_every_call = resolved.same_every_call();
        if same_every_call {
            if let Some(reference) = self.reference.get() {
                if reference == reply {
                    return Ok(());
                }
            }
        }
        match resolved.expected(call.number) {
            None => {
                decode(&reply[..])?;
            }
            Some(Expected::Fixed(expected)) => {
                if let Some(difference) = compare::first_difference(expected, &decode(&reply[..])?)
                {
                    return Err(wrong(difference));
                }
            }
            Some(Expected::Matched(expectation)) => {
                let reply = decode(&reply[..])?;
                let options = prost_reflect::SerializeOptions::new().skip_default_fields(false);
                let json = reply
                    .serialize_with_options(serde_json::value::Serializer, &options)
                    .map_err(|e| CallError::Protocol(format!("the reply as JSON: {e}")))?;
                if let Some(difference) = expectation.first_difference(&json, call.number) {
                    return Err(wrong(difference));
                }
            }
            Some(Expected::Numbered(template)) => {
                let expected_bytes = template.message(call);
                if expected_bytes != *reply {
                    let expected = decode(&expected_bytes[..])?;
                    if let Some(difference) =
                        compare::first_difference(&expected, &decode(&reply[..])?)
                    {
                        return Err(wrong(difference));
                    }
                }
            }
        }
        if same_every_call {
            let _ = self.reference.set(reply.clone());
        }
        Ok(())
    }
}

impl stream::Peer for GrpcGenericConnection {
    fn values(&self, n: u64) -> CallValues {
        self.worker.values(n, self.resolved.needs)
    }

    fn body(&self, call: &CallValues) -> Bytes {
        self.resolved.request(call.number).body(call)
    }

    fn metadata(&self, call: &CallValues) -> Vec<(String, String)> {
        self.resolved.metadata.rendered(call)
    }

    fn verify(&self, n: u64, message: &Bytes) -> Result<(), CallError> {
        // An expected reply holds only the call's number and connection
        // (`expected_of`), so values without a time or UUID check it.
        let call = self.worker.values(n, Needs::NONE);
        GrpcGenericConnection::verify(self, &call, message)
    }

    fn next_number(&self) -> u64 {
        self.worker.next_number()
    }
}

impl Connection for GrpcGenericConnection {
    /// The reply as JSON text (the contract's value has no other form for
    /// the user's types); for a stream, what it carried, each message
    /// verified.
    async fn call(&self, _call: &Call) -> Result<Value, CallError> {
        let channel = match &self.link {
            Link::Unary(channel) => channel,
            Link::Stream(_, kind) => {
                let mut messages = Messages::default();
                self.verified(&mut messages).await?;
                return Ok(Value::Str(format!(
                    "a {} stream: {} messages sent, {} received",
                    kind.name(),
                    messages.sent,
                    messages.received.len()
                )));
            }
        };
        let (values, reply) = self.exchange(channel).await?;
        self.verify(&values, &reply)?;
        let message = DynamicMessage::decode(self.resolved.method.output(), reply.as_ref())
            .map_err(|e| CallError::Protocol(e.to_string()))?;
        serde_json::to_string(&message)
            .map(Value::Str)
            .map_err(|e| CallError::Protocol(e.to_string()))
    }

    /// The contract's call is not looked at: every call is the user's.
    async fn verified_call(&self, _call: &Call) -> Result<(), CallError> {
        self.verified(&mut Messages::default()).await
    }

    async fn verified_call_recording(
        &self,
        _call: &Call,
        messages: &mut Messages,
    ) -> Result<(), CallError> {
        self.verified(messages).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{options, refusal};

    fn protoset_file() -> String {
        static FILE: OnceLock<String> = OnceLock::new();
        FILE.get_or_init(|| {
            let path =
                std::env::temp_dir().join(format!("rpclab-shop-{}-t.protoset", std::process::id()));
            std::fs::write(&path, test_pool::protoset()).unwrap();
            path.display().to_string()
        })
        .clone()
    }

    fn with_protoset(pairs: &[(&str, &str)]) -> String {
        let file = protoset_file();
        let mut all = vec![("protoset", file.as_str())];
        all.extend_from_slice(pairs);
        refusal::<GrpcGeneric>(&all)
    }

    #[test]
    fn calls_are_split_as_ghz_writes_them() {
        for call in ["shop.v1.Inventory/Reserve", "shop.v1.Inventory.Reserve"] {
            let split = split_call(call).unwrap();
            assert_eq!(
                split,
                ("shop.v1.Inventory".into(), "Reserve".into()),
                "{call}"
            );
        }
        assert!(split_call("Reserve").is_err());
        assert!(split_call("shop.v1.Inventory/").is_err());
    }

    #[test]
    fn bad_input_is_one_line_that_names_it() {
        let protoset = protoset_file();
        assert_eq!(
            refusal::<GrpcGeneric>(&[]),
            "a generic gRPC call needs the method: --call package.Service/Method"
        );
        assert_eq!(
            with_protoset(&[("call", "shop.v1.Store/Reserve")]),
            format!("unknown service `shop.v1.Store` in the protoset {protoset} (its services: shop.v1.Inventory)")
        );
        assert_eq!(
            with_protoset(&[("call", "shop.v1.Inventory/Cancel")]),
            "service `shop.v1.Inventory` has no method `Cancel` (its methods: Reserve, Watch, ReserveAll, ReserveEach, Checkout)"
        );
        assert_eq!(
            with_protoset(&[("call", "shop.v1.Inventory/Reserve"), ("stream_call_count", "3")]),
            "--stream-call-count is for streaming methods; `shop.v1.Inventory/Reserve` is unary: leave it out"
        );
        assert_eq!(
            with_protoset(&[
                ("call", "shop.v1.Inventory/Reserve"),
                ("stream_interval", "1ms"),
                ("stream_dynamic_messages", "true")
            ]),
            "--stream-interval, --stream-dynamic-messages are for streaming methods; `shop.v1.Inventory/Reserve` is unary: leave them out"
        );
        assert_eq!(
            with_protoset(&[("call", "shop.v1.Inventory/Reserve"), ("data", r#"{"items":[{"skew":"a"}]}"#)]),
            "--data: items[0].skew: shop.v1.Item has no field `skew` (its fields: sku, quantity, price)"
        );
        assert_eq!(
            with_protoset(&[("call", "shop.v1.Inventory/Reserve"), ("expect", r#"{"status":7.5}"#)]),
            "--expect: status: one of STATUS_UNSPECIFIED, RESERVED, PARTIAL (shop.v1.Status) expected, got a number `7.5`"
        );
        assert!(
            with_protoset(&[("call", "shop.v1.Inventory/Reserve"), ("data", "{")])
                .starts_with("--data is not JSON")
        );
        // An expect array with matchers: each element checked on its own,
        // before the types are (the misspelt field of a matched element
        // then by the output type, as an exact one's).
        let two = r#"[{"requestId":"a"},{"requestId":"b"}]"#;
        assert_eq!(
            with_protoset(&[
                ("call", "shop.v1.Inventory/Reserve"),
                ("data", two),
                (
                    "expect",
                    r#"[{"status":"RESERVED"},{"status":{"$oneOf":[1]}}]"#
                )
            ]),
            format!(
                "--expect[1]: status: unknown matcher `$oneOf`; {}",
                crate::expect::MATCHERS
            )
        );
        assert!(with_protoset(&[
            ("call", "shop.v1.Inventory/Reserve"),
            ("data", two),
            (
                "expect",
                r#"[{"status":"RESERVED"},{"statos":{"$any":true}}]"#
            )
        ])
        .starts_with("--expect[1]: statos"));
        assert_eq!(
            with_protoset(&[
                ("call", "shop.v1.Inventory/Reserve"),
                ("data", two),
                (
                    "expect",
                    r#"[{"requestId":"a-{{.RequestNumber}}"},{"requestId":"{{.WorkerID}}"}]"#
                ),
                ("expect_partial", "true")
            ]),
            "--expect[1]: requestId: `{{.WorkerID}}`: with matchers or --expect-partial, \
             {{.RequestNumber}} is the one template value an expectation may hold"
        );
        // The same array, resolved: each element is matched or exact.
        let p = GrpcGeneric::new(&options(&[
            ("protoset", protoset.as_str()),
            ("call", "shop.v1.Inventory/Reserve"),
            ("data", two),
            (
                "expect",
                r#"[{"requestId":"a","status":{"$regex":"^RES"}},{"requestId":"b"}]"#,
            ),
        ]))
        .unwrap();
        let resolved = p.resolved.get().unwrap();
        assert!(matches!(
            resolved.expected[..],
            [Expected::Matched(_), Expected::Fixed(_)]
        ));
        assert!(!resolved.same_every_call());
        let m = refusal::<GrpcGeneric>(&[("call", "a.B/C"), ("protoset", "/nonexistent.protoset")]);
        assert!(
            m.starts_with("cannot read the protoset /nonexistent.protoset"),
            "{m}"
        );
        for m in [
            with_protoset(&[
                ("call", "shop.v1.Inventory/Reserve"),
                ("data", "{}"),
                ("data_file", "x"),
            ]),
            refusal::<GrpcGeneric>(&[("call", "a.B/C"), ("colour", "red")]),
        ] {
            assert!(!m.contains('\n'), "{m}");
        }
    }

    #[test]
    fn a_proto_file_and_its_imports_resolve_the_method_when_the_protocol_is_built() {
        let root = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../fixtures/grpc-shop/proto"
        );
        let file = format!("{root}/shop/v1/inventory.proto");
        let p = GrpcGeneric::new(&options(&[
            ("proto", file.as_str()),
            ("import_paths", root),
            ("call", "shop.v1.Inventory/Reserve"),
            (
                "data",
                r#"{"items":[{"sku":"a","quantity":1,"price":{"currency":"EUR"}}]}"#,
            ),
        ]))
        .unwrap();
        let call = p.generic_call().unwrap();
        assert_eq!(call.method, "shop.v1.Inventory/Reserve");
        assert_eq!(call.descriptors, format!("proto {file}"));

        // Without the folder its import is relative to: one line that
        // names the import.
        let m = refusal::<GrpcGeneric>(&[
            ("proto", file.as_str()),
            ("call", "shop.v1.Inventory/Reserve"),
        ]);
        assert!(
            m.contains("import 'shop/v1/common.proto' not found in "),
            "{m}"
        );
        assert!(!m.contains('\n'), "{m}");
        assert_eq!(
            refusal::<GrpcGeneric>(&[("import_paths", root), ("call", "a.B/C")]),
            "--import-paths are the folders of --proto FILE's imports: give --proto too"
        );
        let protoset = protoset_file();
        assert_eq!(
            refusal::<GrpcGeneric>(&[
                ("proto", file.as_str()),
                ("protoset", protoset.as_str()),
                ("call", "a.B/C")
            ]),
            "give the service's types once: --proto FILE or --protoset FILE, not both"
        );
    }

    #[test]
    fn each_streaming_kind_is_resolved_with_its_flags() {
        let file = protoset_file();
        for (method, kind) in [
            ("Watch", "server"),
            ("ReserveAll", "client"),
            ("ReserveEach", "bidi"),
        ] {
            let call = format!("shop.v1.Inventory/{method}");
            let p = GrpcGeneric::new(&options(&[
                ("protoset", file.as_str()),
                ("call", call.as_str()),
                ("stream_call_count", "4"),
                ("stream_interval", "2ms"),
            ]))
            .unwrap();
            let stream = p.generic_call().unwrap().stream.unwrap();
            assert_eq!(stream.kind, kind);
            assert_eq!(
                (stream.call_count, stream.interval_us),
                (Some(4), Some(2_000))
            );
            assert!(!stream.dynamic_messages);
        }
        let unary = GrpcGeneric::new(&options(&[
            ("protoset", file.as_str()),
            ("call", "shop.v1.Inventory/Reserve"),
        ]))
        .unwrap();
        assert_eq!(unary.generic_call().unwrap().stream, None);
    }

    #[test]
    fn a_protoset_resolves_the_method_when_the_protocol_is_built() {
        let file = protoset_file();
        let p = GrpcGeneric::new(&options(&[
            ("protoset", file.as_str()),
            ("call", "shop.v1.Inventory.Reserve"),
            (
                "data",
                r#"{"requestId":"r-{{.RequestNumber}}","items":[{"sku":"a","quantity":1}]}"#,
            ),
            (
                "expect",
                r#"{"requestId":"r-{{.RequestNumber}}","status":"RESERVED"}"#,
            ),
        ]))
        .unwrap();
        let call = p.generic_call().unwrap();
        assert_eq!(call.method, "shop.v1.Inventory/Reserve");
        assert_eq!(call.descriptors, format!("protoset {file}"));
        assert_eq!(call.templates, vec!["r-{{.RequestNumber}}".to_owned()]);
        assert!(call.expected_reply);
        assert_eq!(p.tls(), Some(TlsSetting::Plaintext));
    }
}
