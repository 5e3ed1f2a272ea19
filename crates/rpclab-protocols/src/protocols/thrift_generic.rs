//! Generic Thrift calls: any method of the user's own Thrift service, its
//! arguments from JSON, its types from the service's `.thrift` IDL, on the
//! contract Thrift's framing ([`super::thrift`]: framed or buffered,
//! binary or compact, one call at a time per connection on a
//! [`super::thrift::link::Link`]).
//!
//! The client's `--call`, `--idl`, `--data`, `--data-file`, `--expect` and
//! `--expect-file` become this protocol's options:
//!
//! | option | meaning |
//! | --- | --- |
//! | `idl` | the `.thrift` file that declares the service (its includes are read relative to it), required |
//! | `call` | `Service.method` (or `Service/method`; `shared.Service.method` for a service of an included file), required |
//! | `data`, `data_file` | the arguments as a JSON object by argument name (default `{}`), inline or in a file; a JSON array of such objects (or a file of one a line) is several requests, sent round-robin (a data array, as ghz's) |
//! | `expect`, `expect_file` | the reply every call must get, as JSON (default: none); a declared exception as `{"<its name>": {...}}`; it may hold matchers ([`crate::expect`]), judged on the return value's JSON |
//! | `expect_partial` | `true`: compare only the keys `expect` gives ([`crate::expect`]) |
//! | `transport` | `framed` (default) or `buffered`, as protocol `thrift` |
//! | `protocol` | `binary` (default) or `compact`, as protocol `thrift` |
//!
//! # The IDL
//!
//! Parsed by the crate's own lexer and recursive-descent parser of the
//! Thrift grammar (`idl::syntax`), rather than by running the Thrift
//! compiler's `--gen json`: the client then needs no compiler installed,
//! and a syntax error comes back as `FILE:LINE:COLUMN: expected …, found
//! …`. It replaced `pilota-thrift-parser`, whose parser-combinator stack
//! (chumsky, nom, ariadne) was the costliest crate of a cold build for
//! one page of grammar. The parser resolves nothing, so [`idl`] follows
//! includes, typedefs, enums and `extends` into a type table once, when
//! the protocol is built.
//!
//! # Before any load
//!
//! Everything is checked when the protocol is built, and a mistake is one
//! error line that names it: an IDL that does not parse (with its file and
//! line), an unknown service or method (with the ones there are), a
//! `oneway` method (no reply to verify), an argument or field the IDL does
//! not declare, a value of the wrong type (by its path:
//! `req.items[1].quantity: expected i32, got "x"`), a required field
//! missing. The first connection then makes one call and verifies its
//! reply: if it is not right, the cell fails there and nothing is measured.
//!
//! # Per call
//!
//! The arguments are encoded once ([`codec::Encoded`]); a call whose
//! arguments hold a template value ([`crate::template`]: ghz's
//! `{{.RequestNumber}}`, `{{.UUID}}`, `{{randomInt 1 9}}`, ...; an unknown
//! one is an error before any load) writes its values into the encoded
//! pieces (`{{.WorkerID}}` is the connection's number). Thrift has no
//! metadata. Every reply must be a `REPLY` of the method with the request's
//! sequence id (an `EXCEPTION` message, Thrift's `TApplicationException`,
//! is a failed call), and its result struct is then:
//!
//! * with an expected reply, compared with it: a result whose bytes equal
//!   those of one already found equal (or, with `{{.RequestNumber}}` or
//!   `{{.WorkerID}}` in the expectation, the only template values it may
//!   hold, the expectation's own encoding for this call) is
//!   verified by one `memcmp`; any other is decoded against the IDL and
//!   compared field by field, a difference being a wrong response that
//!   names the first differing field;
//! * without one, decoded against the IDL; a declared exception is then a
//!   wrong response (it counts as verified only when it is expected).

mod codec;
mod idl;
mod value;

use self::codec::Encoded;
use self::idl::{Field, Kind, Method, Requiredness, Schema, Struct, Ty};
use self::value::{first_difference, to_json, to_text, FromJson, Value as TValue};
use super::thrift::link::Link;
use super::thrift::{encode_prepared, reply_in, Encoding, Framing, Thrift};
use crate::error_text::{listed, shorten};
use crate::exchange::{Exchange, Parsed};
use crate::expect::Expectation;
use crate::protocol::{
    check_options, first_call_verified, json_lines_option, json_option, CallError, Connection,
    Protocol, WireCounter, GENERIC_OPTIONS,
};
use crate::template::{self, CallValues, Needs, Numbering, Worker};
use rpclab_model::contract::{Call, Value};
use rpclab_model::result::GenericCall;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};
use thrift::protocol::{TMessageIdentifier, TMessageType};

/// The options of this protocol after `idl`, `call` and the generic
/// call's ([`GENERIC_OPTIONS`]).
const OPTIONS: &[&str] = &["transport", "protocol"];

/// Generic Thrift calls (see the module documentation).
#[derive(Debug)]
pub struct ThriftGeneric {
    framing: Framing,
    encoding: Encoding,
    resolved: Arc<Resolved>,
    /// The calls' and exchanges' numbers (an exchange per connection).
    numbering: Numbering,
}

/// The method, its arguments encoded once, its expected reply.
#[derive(Debug)]
struct Resolved {
    schema: Schema,
    idl: PathBuf,
    /// `Service.method`, for the report and errors.
    label: String,
    method: Method,
    /// The result struct's type (`<method>_result`: field 0 the return
    /// value, then the declared exceptions).
    result: Ty,
    /// The args struct, encoded once; a data array's, one per request,
    /// sent round-robin by the call's number.
    args: Vec<Encoded>,
    templates: Vec<String>,
    /// What a call must take before its arguments are written.
    needs: Needs,
    expected: Option<Expected>,
    /// The expectation with matchers or partial, judged on the return
    /// value's JSON ([`crate::expect`]); `expected` is then `None`.
    matched: Option<Expectation>,
    /// A result struct's bytes already verified, for a request and an
    /// expectation that are the same on every call.
    reference: OnceLock<Box<[u8]>>,
}

/// The result struct every call must get.
#[derive(Debug)]
struct Expected {
    value: TValue,
    /// Its encoding, when it holds `{{.RequestNumber}}`.
    numbered: Option<Encoded>,
}

impl Resolved {
    fn same_every_call(&self) -> bool {
        self.args.len() == 1
            && self.args[0].fixed().is_some()
            && self.matched.is_none()
            && self.expected.as_ref().is_none_or(|e| e.numbered.is_none())
    }
}

impl Protocol for ThriftGeneric {
    type Conn = ThriftGenericConnection;
    type Exchange = GenericExchange;

    const NAME: &'static str = "thrift-generic";

    const CONNECTION_MODEL: &'static str =
        "one call in flight per connection (blocking Thrift server style)";

    /// `idl`'s includes are read relative to it: a server folder holds
    /// them beside it.
    const FILE_OPTIONS: &'static [&'static str] = &["idl", "data_file", "expect_file"];

    const CALL_OPTION: Option<&'static str> = Some("call");

    fn new(options: &BTreeMap<String, String>) -> Result<Self, CallError> {
        let known = [&["idl", "call"], GENERIC_OPTIONS, OPTIONS].concat();
        check_options(Self::NAME, options, &known)?;
        let config = |m: String| CallError::Config(m);
        let Some(idl) = options.get("idl") else {
            return Err(config(
                "a generic Thrift call needs the service's IDL: --idl FILE.thrift".into(),
            ));
        };
        let Some(call) = options.get("call") else {
            return Err(config(
                "a generic Thrift call needs the method: --call Service.method".into(),
            ));
        };
        // The framing and encoding, as protocol `thrift` reads them.
        let wire_options: BTreeMap<String, String> = options
            .iter()
            .filter(|(k, _)| *k == "transport" || *k == "protocol")
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        let thrift = Thrift::new(&wire_options).map_err(|e| match e {
            CallError::Config(m) => config(m.replace("`thrift`", "`thrift-generic`")),
            other => other,
        })?;
        let data = json_lines_option(options, "data", "--data")?
            .unwrap_or_else(|| serde_json::Value::Object(Default::default()));
        let expect = json_option(options, "expect", "--expect")?;
        let matched = crate::expect::from_options(options, expect.as_ref(), &[])?;
        // A matched expectation is judged on the reply's JSON, not read
        // into the result's type.
        let exact = expect.as_ref().filter(|_| matched.is_none());
        let mut resolved =
            resolve(Path::new(idl), call, &data, exact, thrift.encoding()).map_err(config)?;
        resolved.matched = matched;
        Ok(ThriftGeneric {
            framing: thrift.framing(),
            encoding: thrift.encoding(),
            resolved: Arc::new(resolved),
            numbering: Numbering::default(),
        })
    }

    async fn connect(
        &self,
        target: &str,
        counter: WireCounter,
    ) -> Result<ThriftGenericConnection, CallError> {
        let conn = ThriftGenericConnection {
            link: Link::open(target, counter).await?,
            label: self.resolved.label.clone(),
            fresh: self.new_exchange(),
        };
        if self.numbering.first() {
            conn.first_call().await?;
        }
        Ok(conn)
    }

    /// The poll engine's exchange: the same request and verification as a
    /// connection's (the contract's call is not looked at).
    fn exchange(&self, _call: &Call) -> Result<Option<GenericExchange>, CallError> {
        Ok(Some(self.new_exchange()))
    }

    fn generic_call(&self) -> Option<GenericCall> {
        let resolved = &*self.resolved;
        let mut first = Vec::new();
        resolved.args[0].write(
            self.encoding,
            &CallValues::new(0, 0, resolved.needs),
            &mut first,
        );
        Some(GenericCall {
            method: resolved.label.clone(),
            descriptors: format!("idl {}", resolved.idl.display()),
            request_bytes: first.len() as u64,
            templates: resolved.templates.clone(),
            expected_reply: resolved.expected.is_some(),
            stream: None,
        })
    }
}

impl ThriftGeneric {
    fn new_exchange(&self) -> GenericExchange {
        GenericExchange {
            ident: TMessageIdentifier::new(
                self.resolved.method.name.clone(),
                TMessageType::Call,
                0,
            ),
            framing: self.framing,
            encoding: self.encoding,
            resolved: Arc::clone(&self.resolved),
            call: CallValues::new(0, 0, Needs::NONE),
            worker: self.numbering.worker(),
            args: Vec::new(),
        }
    }
}

/// `Service.method` or `Service/method` (a service of an included file:
/// `shared.Service.method`).
fn split_call(call: &str) -> Result<(&str, &str), String> {
    let split = call.rsplit_once('/').or_else(|| call.rsplit_once('.'));
    match split {
        Some((service, method)) if !service.is_empty() && !method.is_empty() => {
            Ok((service, method))
        }
        _ => Err(format!("--call `{call}` is not Service.method")),
    }
}

/// The IDL loaded, the method found, its arguments and expected reply made.
fn resolve(
    idl: &Path,
    call: &str,
    data: &serde_json::Value,
    expect: Option<&serde_json::Value>,
    encoding: Encoding,
) -> Result<Resolved, String> {
    let (service, method) = split_call(call)?;
    let mut schema = Schema::load(idl)?;
    let service = schema.service(service, idl)?;
    let method = service.method(method)?.clone();
    let label = format!("{}.{}", service.name, method.name);
    let service_name = service.name.clone();
    if method.oneway {
        return Err(format!(
            "`{label}` is oneway: it has no reply to verify; generic calls need a reply"
        ));
    }
    // `<method>_args` and `<method>_result`, as the compiler makes them.
    // Arguments have Thrift's default requiredness (the parser marks them
    // required, as Go's generator treats them): one left out is not sent.
    let args = Ty::Struct(schema.structs.len());
    schema.structs.push(Struct {
        name: format!("the arguments of {label}"),
        kind: Kind::Struct,
        fields: method
            .args
            .iter()
            .map(|a| Field {
                requiredness: Requiredness::Default,
                ..a.clone()
            })
            .collect(),
    });
    let result = Ty::Struct(schema.structs.len());
    let mut result_fields = Vec::new();
    if let Some(returns) = &method.returns {
        result_fields.push(Field {
            id: 0,
            name: "success".into(),
            ty: returns.clone(),
            requiredness: Requiredness::Optional,
        });
    }
    result_fields.extend(method.throws.iter().cloned());
    schema.structs.push(Struct {
        name: format!("the reply of {label}"),
        kind: Kind::Struct,
        fields: result_fields,
    });

    let values = template::Method {
        fully_qualified_name: label.clone(),
        method_name: method.name.clone(),
        service_name: service_name.clone(),
        input_name: String::new(),
        output_name: String::new(),
        client_streaming: false,
        server_streaming: false,
    };
    let from_json = FromJson {
        schema: &schema,
        method: &values,
    };
    // A JSON array is a data array (the arguments are an object): each
    // element one request, named by its index in an error.
    let requests: Vec<(String, &serde_json::Value)> = match data {
        serde_json::Value::Array(items) if items.is_empty() => {
            return Err("--data: an empty data array; give at least one request".into())
        }
        serde_json::Value::Array(items) => items
            .iter()
            .enumerate()
            .map(|(i, item)| (format!("--data[{i}]"), item))
            .collect(),
        one => vec![("--data".to_owned(), one)],
    };
    let mut encoded = Vec::with_capacity(requests.len());
    let mut templates_written: Vec<String> = Vec::new();
    let mut needs = Needs::NONE;
    for (name, request) in requests {
        let arguments = from_json
            .value(&args, request, "")
            .map_err(|e| format!("{name}: {e}"))?;
        for written in templates(&arguments) {
            if !templates_written.contains(&written) {
                templates_written.push(written);
            }
        }
        needs = arguments
            .template_values()
            .into_iter()
            .fold(needs, |n, v| n.union(v.needs()));
        encoded.push(codec::encode(&schema, encoding, &args, &arguments));
    }
    let templates = templates_written;
    let expected = match expect {
        None => None,
        Some(json) => {
            let value = expected_result(&schema, &method, json, &values)
                .map_err(|e| format!("--expect: {e}"))?;
            if let Some(drawn) = value
                .template_values()
                .into_iter()
                .find(|v| !v.is_reproducible())
            {
                return Err(format!(
                    "--expect: {} is drawn anew for every call and cannot be expected; \
                     only {{{{.RequestNumber}}}} and {{{{.WorkerID}}}} may be in an expected reply",
                    drawn.written()
                ));
            }
            let numbered = value
                .numbered()
                .then(|| codec::encode(&schema, encoding, &result, &value));
            Some(Expected { value, numbered })
        }
    };
    Ok(Resolved {
        idl: idl.to_owned(),
        label,
        method,
        result,
        args: encoded,
        templates,
        needs,
        expected,
        matched: None,
        reference: OnceLock::new(),
        schema,
    })
}

/// The template values of `value`, as written (`r-{{.RequestNumber}}`).
fn templates(value: &TValue) -> Vec<String> {
    fn walk(value: &TValue, out: &mut Vec<String>) {
        match value {
            TValue::Text(text) => out.push(text.written()),
            TValue::Number { value, .. } => out.push(value.written()),
            TValue::List(items) => items.iter().for_each(|v| walk(v, out)),
            TValue::Map(entries) => entries.iter().for_each(|(_, v)| walk(v, out)),
            TValue::Struct(fields) => fields.iter().for_each(|(_, v)| walk(v, out)),
            _ => {}
        }
    }
    let mut out = Vec::new();
    walk(value, &mut out);
    out
}

/// The expected reply as the result struct: the return value in field 0,
/// or, for `{"<name>": {...}}` naming a declared exception (by the name
/// of its `throws` field or of its type), that exception.
fn expected_result(
    schema: &Schema,
    method: &Method,
    json: &serde_json::Value,
    values: &template::Method,
) -> Result<TValue, String> {
    let from_json = FromJson {
        schema,
        method: values,
    };
    if let serde_json::Value::Object(members) = json {
        if members.len() == 1 {
            let (name, value) = members.iter().next().expect("one member");
            let thrown = method.throws.iter().find(|f| {
                f.name == *name
                    || matches!(&f.ty, Ty::Struct(i) if schema.structs[*i].name == *name)
            });
            let returns_such_a_field = matches!(&method.returns, Some(Ty::Struct(i))
                if schema.structs[*i].field_named(name).is_some());
            if let (Some(field), false) = (thrown, returns_such_a_field) {
                let value = from_json.value(&field.ty, value, &field.name)?;
                return Ok(TValue::Struct(vec![(field.id, value)]));
            }
        }
    }
    match &method.returns {
        None if json.is_null() => Ok(TValue::Struct(Vec::new())),
        None => Err(format!(
            "`{}` returns void: expect null (or a declared exception: {})",
            method.name,
            throws_names(schema, method)
        )),
        Some(ty) => Ok(TValue::Struct(vec![(0, from_json.value(ty, json, "")?)])),
    }
}

fn throws_names(schema: &Schema, method: &Method) -> String {
    listed(
        method
            .throws
            .iter()
            .map(|f| format!("{} ({})", f.name, schema.type_name(&f.ty))),
    )
}

/// One connection making generic calls.
#[derive(Debug)]
pub struct ThriftGenericConnection {
    link: Link<GenericExchange>,
    /// `Service.method`, for errors.
    label: String,
    /// The exchange the link copies on its first call.
    fresh: GenericExchange,
}

impl ThriftGenericConnection {
    async fn exchange(&self) -> Result<Verified, CallError> {
        self.link
            .exchange(|slot| Ok(slot.get_or_insert_with(|| self.fresh.clone())))
            .await
    }

    /// The first call, verified before anything is measured.
    async fn first_call(&self) -> Result<(), CallError> {
        first_call_verified(&self.label, self.exchange())
            .await
            .map(|_| ())
    }
}

/// A verified reply: its result when it was decoded (turned into JSON only
/// by [`Connection::call`], which hands it on; a measured call drops it).
#[derive(Debug)]
pub struct Verified(Option<TValue>);

impl Connection for ThriftGenericConnection {
    /// The reply as JSON text (the contract's value has no other form for
    /// the user's types); a reply verified by its bytes is not decoded.
    async fn call(&self, _call: &Call) -> Result<Value, CallError> {
        let Verified(decoded) = self.exchange().await?;
        let resolved = &self.fresh.resolved;
        Ok(Value::Str(
            decoded
                .map(|v| to_json(&resolved.schema, &resolved.result, &v).to_string())
                .unwrap_or_default(),
        ))
    }

    /// The contract's call is not looked at: every call is the user's.
    async fn verified_call(&self, _call: &Call) -> Result<(), CallError> {
        self.exchange().await.map(|_| ())
    }
}

/// A connection's generic call, as a sans-IO exchange (the poll engine
/// runs it, and so does a [`ThriftGenericConnection`]'s link): its
/// sequence ids and numbers, the args buffer it reuses.
#[derive(Clone, Debug)]
pub struct GenericExchange {
    ident: TMessageIdentifier,
    framing: Framing,
    encoding: Encoding,
    resolved: Arc<Resolved>,
    /// This call's values (its `{{.RequestNumber}}`, ...).
    call: CallValues,
    /// This exchange's connection's number, its calls' `{{.WorkerID}}`.
    worker: Worker,
    /// The args struct of a numbered request.
    args: Vec<u8>,
}

impl Exchange for GenericExchange {
    type Outcome = Verified;

    fn request(&mut self, out: &mut Vec<u8>) -> Result<(), CallError> {
        self.ident.sequence_number = self.ident.sequence_number.wrapping_add(1);
        let n;
        (n, self.call) = self.worker.next(self.resolved.needs);
        let all = &self.resolved.args;
        let request = &all[(n % all.len() as u64) as usize];
        let args = match request.fixed() {
            Some(fixed) => fixed,
            None => {
                self.args.clear();
                request.write(self.encoding, &self.call, &mut self.args);
                &self.args
            }
        };
        encode_prepared(out, self.framing, self.encoding, &self.ident, args)
    }

    fn reply(&mut self, input: &[u8]) -> Result<Parsed<Result<Verified, CallError>>, CallError> {
        let resolved = &*self.resolved;
        let known = if resolved.same_every_call() {
            resolved.reference.get().map(|b| &**b)
        } else {
            None
        };
        let found = reply_in(
            input,
            self.framing,
            self.encoding,
            known,
            &self.ident,
            &resolved.method.name,
        )?;
        Ok(match found {
            Parsed::Incomplete { at_least } => Parsed::Incomplete { at_least },
            Parsed::Complete { consumed, outcome } => Parsed::Complete {
                consumed,
                outcome: outcome.and_then(|body| resolved.verify(self.encoding, &self.call, body)),
            },
        })
    }

    /// Verified in [`Exchange::reply`] already (against the call's own
    /// number's expectation).
    fn verify(&self, _: Verified) -> Result<(), CallError> {
        Ok(())
    }
}

impl Resolved {
    /// Checks result struct `body` of the call with values `call` (see the
    /// module documentation).
    fn verify(
        &self,
        encoding: Encoding,
        call: &CallValues,
        body: &[u8],
    ) -> Result<Verified, CallError> {
        let same_every_call = self.same_every_call();
        if same_every_call && self.reference.get().is_some_and(|r| **r == *body) {
            return Ok(Verified(None));
        }
        let expected_bytes = self.expected.as_ref().and_then(|e| {
            e.numbered.as_ref().map(|encoded| {
                let mut bytes = Vec::new();
                encoded.write(encoding, call, &mut bytes);
                bytes
            })
        });
        if expected_bytes.as_deref() == Some(body) {
            return Ok(Verified(None));
        }
        let decoded = codec::decode(&self.schema, encoding, &self.result, body).map_err(|e| {
            CallError::Protocol(format!("the reply of {} does not decode: {e}", self.label))
        })?;
        let wrong =
            |difference: String| CallError::WrongResponse(format!("{}: {difference}", self.label));
        match (&self.matched, &self.expected) {
            (Some(matched), _) => {
                if let Some(problem) = self.not_a_return(&decoded) {
                    return Err(wrong(problem));
                }
                if let Some(difference) =
                    matched.first_difference(&self.returned(&decoded), call.number)
                {
                    return Err(wrong(difference));
                }
            }
            (None, Some(expected)) => {
                let want = match expected.numbered {
                    Some(_) => expected.value.with_values(&self.result, &self.schema, call),
                    None => expected.value.clone(),
                };
                if let Some(difference) = self.difference(&want, &decoded) {
                    return Err(wrong(difference));
                }
            }
            (None, None) => {
                if let Some(problem) = self.not_a_return(&decoded) {
                    return Err(wrong(problem));
                }
            }
        }
        if same_every_call {
            // The decoded struct ends where its bytes end: `body` is the
            // message's body, the result struct and nothing after it.
            let _ = self.reference.set(body.into());
        }
        Ok(Verified(Some(decoded)))
    }

    fn field(&self, id: i16) -> &Field {
        let Ty::Struct(i) = &self.result else {
            unreachable!("the result is a struct")
        };
        self.schema.structs[*i]
            .fields
            .iter()
            .find(|f| f.id == id)
            .expect("a field of the result")
    }

    /// The first difference between two result structs: the return value
    /// by the path inside it, an exception under its name.
    fn difference(&self, want: &TValue, got: &TValue) -> Option<String> {
        let (TValue::Struct(want), TValue::Struct(got)) = (want, got) else {
            unreachable!("results are structs")
        };
        let describe = |fields: &[(i16, TValue)]| match fields.first() {
            None => "no value (void)".to_owned(),
            Some((0, v)) => format!(
                "a return value {}",
                short(to_text(&self.schema, &self.field(0).ty, v))
            ),
            Some((id, v)) => {
                let field = self.field(*id);
                format!(
                    "exception {} ({}) {}",
                    field.name,
                    self.schema.type_name(&field.ty),
                    short(to_text(&self.schema, &field.ty, v))
                )
            }
        };
        match (want.first(), got.first()) {
            (Some((a, w)), Some((b, g))) if a == b => {
                let field = self.field(*a);
                let root = match (a, &field.ty) {
                    (0, Ty::Struct(_)) => String::new(),
                    (0, _) => "the reply".to_owned(),
                    _ => field.name.clone(),
                };
                first_difference(&self.schema, &field.ty, w, g, &root)
            }
            (None, None) => None,
            _ => Some(format!(
                "expected {}, got {}",
                describe(want),
                describe(got)
            )),
        }
    }

    /// The return value of a decoded result as JSON (`null` for void), the
    /// form an expectation with matchers is judged on.
    fn returned(&self, decoded: &TValue) -> serde_json::Value {
        let TValue::Struct(fields) = decoded else {
            unreachable!("results are structs")
        };
        match (fields.first(), &self.method.returns) {
            (Some((0, v)), Some(ty)) => to_json(&self.schema, ty, v),
            _ => serde_json::Value::Null,
        }
    }

    /// Why a decoded result is no return value: a declared exception, or
    /// no field 0 for a method that returns one.
    fn not_a_return(&self, decoded: &TValue) -> Option<String> {
        let TValue::Struct(fields) = decoded else {
            unreachable!("results are structs")
        };
        match (fields.first(), &self.method.returns) {
            (Some((0, _)), _) | (None, None) => None,
            (None, Some(_)) => Some(
                "the reply has no return value (field 0 unset: the server returned null)".into(),
            ),
            (Some((id, v)), _) => {
                let field = self.field(*id);
                Some(format!(
                    "the server threw {} ({}) {}, and no --expect names it",
                    field.name,
                    self.schema.type_name(&field.ty),
                    short(to_text(&self.schema, &field.ty, v))
                ))
            }
        }
    }
}

/// JSON cut to 120 characters, for errors.
fn short(text: String) -> String {
    shorten(text, 120)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{options, refusal};
    use serde_json::json;

    /// The shop fixture's IDL (`fixtures/thrift-shop/idl`).
    fn shop_idl() -> String {
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../fixtures/thrift-shop/idl/shop.thrift")
            .display()
            .to_string()
    }

    fn refused(pairs: &[(&str, &str)]) -> String {
        let idl = shop_idl();
        let mut all = vec![("idl", idl.as_str())];
        all.extend_from_slice(pairs);
        let line = refusal::<ThriftGeneric>(&all);
        assert!(!line.contains('\n'), "{line}");
        line
    }

    fn request() -> serde_json::Value {
        json!({"req": {
            "requestId": "r-{{.RequestNumber}}",
            "sequence": "{{.RequestNumber}}",
            "customer": {"name": "ada", "tier": "GOLD"},
            "items": [
                {"sku": "apple", "quantity": 3, "price": {"currency": "EUR", "units": 2}},
                {"sku": "pear", "quantity": "150"},
            ],
            "tags": ["fruit", "t-{{.RequestNumber}}"],
            "attributes": {"channel": "web"},
            "note": "aGVsbG8=",
        }})
    }

    #[test]
    fn the_idl_is_resolved_with_includes_typedefs_enums_and_extends() {
        let schema = Schema::load(Path::new(&shop_idl())).unwrap();
        let names: Vec<&str> = schema.services.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["Inventory", "shared.Health"]);
        let inventory = schema.service("Inventory", Path::new("x")).unwrap();
        let methods: Vec<&str> = inventory.methods.iter().map(|m| m.name.as_str()).collect();
        assert_eq!(methods, ["ping", "reserve", "forget"]);
        let tier = schema.enums.iter().find(|e| e.name == "Tier").unwrap();
        assert_eq!(
            tier.values,
            [("SILVER".to_owned(), 1), ("GOLD".to_owned(), 2)]
        );
        let item = schema.structs.iter().find(|s| s.name == "Item").unwrap();
        assert_eq!(item.field_named("sku").unwrap().ty, Ty::String);
        assert_eq!(
            item.field_named("sku").unwrap().requiredness,
            Requiredness::Required
        );
        assert_eq!(item.field_named("quantity").unwrap().ty, Ty::I32);
        let price = &item.field_named("price").unwrap().ty;
        assert_eq!(schema.type_name(price), "shared.Money");
        let reserve = inventory.method("reserve").unwrap();
        assert_eq!(schema.type_name(&reserve.throws[0].ty), "OutOfStock");
        assert_eq!(reserve.throws[0].name, "outOfStock");
    }

    #[test]
    fn bad_input_is_one_line_that_names_it() {
        let idl = shop_idl();
        assert_eq!(
            refusal::<ThriftGeneric>(&[("call", "Inventory.reserve")]),
            "a generic Thrift call needs the service's IDL: --idl FILE.thrift"
        );
        assert_eq!(
            refused(&[("call", "Store.reserve")]),
            format!("unknown service `Store` in {idl} (its services: Inventory, shared.Health)")
        );
        assert_eq!(
            refused(&[("call", "Inventory/cancel")]),
            "service `Inventory` has no method `cancel` (its methods: ping, reserve, forget)"
        );
        assert!(refused(&[("call", "Inventory.forget")]).contains("is oneway"));
        assert_eq!(
            refused(&[("call", "Inventory.reserve"), ("data", r#"{"request": {}}"#)]),
            "--data: request: the arguments of Inventory.reserve has no field `request` (its fields: req)"
        );
        assert_eq!(
            refused(&[
                ("call", "Inventory.reserve"),
                (
                    "data",
                    r#"{"req": {"items": [{"sku": "a"}, {"sku": "b", "quantity": "x"}]}}"#
                )
            ]),
            r#"--data: req.items[1].quantity: expected i32, got "x""#
        );
        assert_eq!(
            refused(&[
                ("call", "Inventory.reserve"),
                ("data", r#"{"req": {"items": [{"quantity": 1}]}}"#)
            ]),
            "--data: req.items[0].sku: required field of Item missing"
        );
        assert_eq!(
            refused(&[
                ("call", "Inventory.reserve"),
                ("data", r#"{"req": {"customer": {"tier": "PLATINUM"}}}"#)
            ]),
            r#"--data: req.customer.tier: expected Tier (one of SILVER, GOLD, or a number), got "PLATINUM""#
        );
        assert_eq!(
            refused(&[
                ("call", "Inventory.reserve"),
                ("data", r#"{"req": {"note": "%%"}}"#)
            ])
            .split(" (")
            .next()
            .unwrap(),
            r#"--data: req.note: expected binary as base64, got "%%""#
        );
        assert_eq!(
            refused(&[
                ("call", "Inventory.reserve"),
                ("expect", r#"{"status": 7.5}"#)
            ]),
            "--expect: status: expected Status (one of RESERVED, PARTIAL, or a number), got 7.5"
        );
        assert_eq!(
            refused(&[("call", "Inventory.reserve"), ("transport", "http")]),
            "option `transport` of protocol `thrift-generic` must be `framed` or `buffered`, not `http`"
        );
        let dir = std::env::temp_dir().join(format!("rpclab-thrift-idl-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let broken = dir.join("broken.thrift");
        // (`2: i32 b c d` would not do: `c d` is a field without an id.)
        std::fs::write(&broken, "struct A {\n  1: i32 a,\n  2 i32 b\n}\n").unwrap();
        let line = refusal::<ThriftGeneric>(&[("idl", broken.to_str().unwrap()), ("call", "S.m")]);
        assert!(
            line.starts_with(&format!("{}:3:", broken.display())),
            "{line}"
        );
        assert!(!line.contains('\n'), "{line}");
        let lonely = dir.join("lonely.thrift");
        std::fs::write(&lonely, "include \"gone.thrift\"\nservice S { void m() }\n").unwrap();
        let line = refusal::<ThriftGeneric>(&[("idl", lonely.to_str().unwrap()), ("call", "S.m")]);
        assert!(line.contains("include \"gone.thrift\" not found"), "{line}");
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn arguments_round_trip_and_a_template_writes_what_the_number_encodes() {
        let idl = shop_idl();
        let resolved = resolve(
            Path::new(&idl),
            "Inventory.reserve",
            &request(),
            None,
            Encoding::Binary,
        )
        .unwrap();
        assert_eq!(
            resolved.templates,
            [
                "r-{{.RequestNumber}}",
                "{{.RequestNumber}}",
                "t-{{.RequestNumber}}"
            ]
        );
        let schema = &resolved.schema;
        let args = Ty::Struct(schema.structs.len() - 2);
        let method = template::Method::default();
        let value = FromJson {
            schema,
            method: &method,
        }
        .value(&args, &request(), "")
        .unwrap();
        let at = |n| CallValues::new(n, 0, Needs::NONE);
        for encoding in [Encoding::Binary, Encoding::Compact] {
            let encoded = codec::encode(schema, encoding, &args, &value);
            assert!(encoded.fixed().is_none());
            for n in [0, 7, 1_000, 300_000_000_000] {
                let concrete = value.with_values(&args, schema, &at(n));
                let whole = codec::encode(schema, encoding, &args, &concrete);
                let mut pieces = Vec::new();
                encoded.write(encoding, &at(n), &mut pieces);
                assert_eq!(Some(&pieces[..]), whole.fixed(), "{encoding:?} {n}");
                let decoded = codec::decode(schema, encoding, &args, &pieces).unwrap();
                assert_eq!(
                    first_difference(schema, &args, &concrete, &decoded, ""),
                    None
                );
                assert_eq!(decoded, concrete, "{encoding:?} {n}");
            }
        }
        let json = to_json(schema, &args, &value.with_values(&args, schema, &at(5)));
        assert_eq!(json["req"]["requestId"], "r-5");
        assert_eq!(json["req"]["sequence"], 5);
        assert_eq!(json["req"]["customer"]["tier"], "GOLD");
        assert_eq!(json["req"]["items"][1]["quantity"], 150);
        assert_eq!(json["req"]["note"], "aGVsbG8=");
    }

    #[test]
    fn an_expected_exception_is_named_by_its_field_or_its_type() {
        let idl = shop_idl();
        let reply = |expect: serde_json::Value| {
            resolve(
                Path::new(&idl),
                "Inventory.reserve",
                &json!({}),
                Some(&expect),
                Encoding::Binary,
            )
            .map(|r| r.expected.unwrap().value)
        };
        let thrown = reply(json!({"outOfStock": {"sku": "sold-out-x", "available": 0}})).unwrap();
        assert_eq!(
            thrown,
            TValue::Struct(vec![(
                1,
                TValue::Struct(vec![
                    (1, TValue::String("sold-out-x".into())),
                    (2, TValue::I32(0))
                ])
            )])
        );
        assert_eq!(
            reply(json!({"OutOfStock": {"sku": "sold-out-x", "available": 0}})).unwrap(),
            thrown
        );
        let returned = reply(json!({"requestId": "r"})).unwrap();
        assert_eq!(
            returned,
            TValue::Struct(vec![(
                0,
                TValue::Struct(vec![(1, TValue::String("r".into()))])
            )])
        );
        let e = reply(json!({"outOfStock": {"sku": 1}})).unwrap_err();
        assert_eq!(e, "--expect: outOfStock.sku: expected string, got 1");
        let p = ThriftGeneric::new(&options(&[
            ("idl", idl.as_str()),
            ("call", "Inventory.ping"),
            ("data", r#"{"who": "w-{{.RequestNumber}}"}"#),
            ("expect", r#""pong w-{{.RequestNumber}}""#),
        ]))
        .unwrap();
        let call = p.generic_call().unwrap();
        assert_eq!(call.method, "Inventory.ping");
        assert_eq!(call.descriptors, format!("idl {idl}"));
        assert_eq!(call.templates, ["w-{{.RequestNumber}}"]);
        assert!(call.expected_reply);
    }
}
