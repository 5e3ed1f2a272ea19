//! The generic invocation's request, built once from the user's JSON: a
//! dubbo2 request frame calling `$invoke(String method, String[]
//! parameterTypes, Object[] args)` on the user's interface, as a Java
//! consumer's `GenericService` sends it (its `GenericImplFilter` adds the
//! `generic=true` attachment), serialized with hessian2.
//!
//! # The arguments
//!
//! The JSON array's elements become what a Java caller of `$invoke` would
//! pass, as hessian2 writes them: an object is a `HashMap` (an untyped
//! map; a `"class"` key travels as an entry, which the provider's
//! `PojoUtils.realize` then uses as the class to build), an array an
//! `ArrayList`, an integer an `int` (a `long` beyond 32 bits), any other
//! number a `double`, a string, a boolean or `null` itself. The provider's
//! `GenericFilter` turns them into the method's parameter types
//! (`PojoUtils.realize`, which also converts numbers and strings between
//! Java's numeric types), so a JSON object fills a POJO parameter field by
//! field.
//!
//! # Encoding once
//!
//! The body is encoded once. A string holding a template value
//! ([`crate::template`]: `{{.RequestNumber}}`, `{{.UUID}}`,
//! `{{randomString 8}}`, ...) is cut out of it: the body is kept as
//! [`Piece`]s, fixed bytes and such strings, and a call writes the pieces
//! with its values (a hessian2 string carries its own length, and the
//! frame's header the body's, so nothing else changes). Without one, every
//! call sends the same body.
//!
//! # Attachments
//!
//! The user's metadata (`-m`, [`crate::metadata`]) are attachments beside
//! the ones a Java consumer sends (`path`, `interface`, `version`,
//! `generic`, `group`), which they cannot replace; a templated value is a
//! piece of its own, as in the arguments. An array of sets goes
//! round-robin: a request with sets keeps one body per set.

use crate::metadata::{Metadata, Pair};
use crate::protocols::dubbo::codec::{
    Header, DUBBO_VERSION, FLAG_REQUEST, FLAG_TWOWAY, HEADER_LEN, MAX_BODY, SERVICE_VERSION,
};
use crate::protocols::dubbo::serialization::hessian2::ID as HESSIAN2;
use crate::protocols::grpc_generic::request::{json_type, shown};
use crate::template::{self, CallValues, Needs, Text};
use hessian2::Encoder;
use serde_json::Value as Json;

/// The method every generic invocation calls.
pub const INVOKE: &str = "$invoke";

/// `$invoke`'s JVM parameter descriptor: `(String, String[], Object[])`.
pub const INVOKE_DESC: &str = "Ljava/lang/String;[Ljava/lang/String;[Ljava/lang/Object;";

/// What a generic invocation calls, and with what.
#[derive(Clone, Debug)]
pub struct Invocation<'a> {
    /// The Java interface, e.g. `com.example.shop.InventoryService`.
    pub interface: &'a str,
    pub method: &'a str,
    /// The parameter types, as Java names; `None`: left to the provider,
    /// which finds the method by its name when no other has it.
    pub types: Option<&'a [String]>,
    /// The arguments: a JSON array.
    pub args: &'a Json,
    /// The service version (`None`: the provider exports none).
    pub version: Option<&'a str>,
    pub group: Option<&'a str>,
    /// The user's attachments (`-m`).
    pub metadata: &'a Metadata,
}

/// The attachments rpclab writes itself, which `-m` cannot replace.
const OWN_ATTACHMENTS: &[&str] = &["path", "interface", "version", "generic", "group"];

impl Invocation<'_> {
    /// ghz's method values, as they read for a Dubbo call.
    pub fn template_method(&self) -> template::Method {
        template::Method {
            fully_qualified_name: format!("{}.{}", self.interface, self.method),
            method_name: self.method.to_owned(),
            service_name: self
                .interface
                .rsplit_once('.')
                .map_or(self.interface, |(_, name)| name)
                .to_owned(),
            input_name: self.types.map(|t| t.join(",")).unwrap_or_default(),
            output_name: String::new(),
            client_streaming: false,
            server_streaming: false,
        }
    }
}

/// A part of the encoded body.
#[derive(Clone, Debug, PartialEq)]
enum Piece {
    /// Bytes every call sends.
    Fixed(Vec<u8>),
    /// A string with template values, rendered per call.
    Text(Text),
}

/// The request body, encoded once (one per request of a data array and
/// attachment set).
#[derive(Clone, Debug)]
pub struct Request {
    /// One body's pieces per request and set of attachments, requests
    /// first: call `n` sends request `n mod requests` with set `n mod
    /// sets`, each round-robin on its own, as ghz's data and metadata.
    bodies: Vec<Vec<Piece>>,
    /// How many attachment sets each request has a body for.
    sets: usize,
    /// The strings with template values, as written.
    templates: Vec<String>,
    needs: Needs,
}

impl Request {
    /// Encodes `invocation`; a wrong argument or type is an error that
    /// names it by its path (`[0].items[1]`).
    pub fn new(invocation: &Invocation) -> Result<Request, String> {
        Request::data_array(invocation, std::slice::from_ref(invocation.args))
    }

    /// Encodes `invocation` once for each of `requests` (a data array:
    /// each element a call's arguments, sent round-robin); an error names
    /// the request by its index when there are several.
    pub fn data_array(invocation: &Invocation, requests: &[Json]) -> Result<Request, String> {
        if requests.is_empty() {
            return Err("--data: an empty data array; give at least one request".into());
        }
        let no_attachments = [Vec::new()];
        let sets = match invocation.metadata.sets() {
            [] => &no_attachments[..],
            sets => sets,
        };
        if let Some(own) = sets
            .iter()
            .flatten()
            .find(|p| OWN_ATTACHMENTS.contains(&p.key.as_str()))
        {
            return Err(format!(
                "--metadata: `{}` is an attachment rpclab sends itself (with {}); remove it",
                own.key,
                OWN_ATTACHMENTS.join(", ")
            ));
        }
        let mut bodies = Vec::with_capacity(requests.len() * sets.len());
        let mut templates: Vec<String> = Vec::new();
        let mut needs = Needs::NONE;
        for (r, args) in requests.iter().enumerate() {
            let one = Invocation {
                args,
                ..invocation.clone()
            };
            for (i, set) in sets.iter().enumerate() {
                let (pieces, written, need) = Request::body_of(&one, set).map_err(|e| {
                    if requests.len() > 1 {
                        format!("request {r} of the data array: {e}")
                    } else {
                        e
                    }
                })?;
                if i == 0 {
                    for w in written {
                        if !templates.contains(&w) {
                            templates.push(w);
                        }
                    }
                }
                needs = needs.union(need);
                bodies.push(pieces);
            }
        }
        for set in sets {
            for pair in set.iter().filter(|p| p.value.fixed().is_none()) {
                let written = format!("{}: {}", pair.key, pair.value.written());
                if !templates.contains(&written) {
                    templates.push(written);
                }
            }
        }
        let request = Request {
            bodies,
            sets: sets.len(),
            templates,
            needs,
        };
        let first = CallValues::fixed(0, 0, 0, 0, 0);
        for pieces in &request.bodies {
            let mut body = Vec::new();
            write_pieces(pieces, &mut body, &first);
            let len = body.len();
            if len > MAX_BODY {
                return Err(format!(
                    "--data: the request's body is {len} bytes, over the {MAX_BODY}-byte limit"
                ));
            }
        }
        Ok(request)
    }

    /// One body's pieces, with attachment set `set`; the templates in it.
    fn body_of(
        invocation: &Invocation,
        set: &[Pair],
    ) -> Result<(Vec<Piece>, Vec<String>, Needs), String> {
        let Json::Array(args) = invocation.args else {
            return Err(format!(
                "--data: the method's arguments as a JSON array expected (`[…]`, one element \
                 per parameter), got {} `{}`",
                json_type(invocation.args),
                shown(invocation.args)
            ));
        };
        if let Some(types) = invocation.types {
            if types.len() != args.len() {
                return Err(format!(
                    "--types names {} parameter type{} ({}) but --data holds {} argument{}",
                    types.len(),
                    plural(types.len()),
                    types.join(", "),
                    args.len(),
                    plural(args.len())
                ));
            }
            for (i, (ty, arg)) in types.iter().zip(args).enumerate() {
                check_argument(ty, arg, &format!("[{i}]"))?;
            }
        }
        let method = invocation.template_method();
        let mut writer = Writer {
            enc: Encoder::new(Vec::with_capacity(256)),
            pieces: Vec::new(),
            templates: Vec::new(),
            needs: Needs::NONE,
            method: &method,
        };
        let enc = &mut writer.enc;
        enc.write_string(DUBBO_VERSION);
        enc.write_string(invocation.interface);
        enc.write_string(invocation.version.unwrap_or(SERVICE_VERSION));
        enc.write_string(INVOKE);
        enc.write_string(INVOKE_DESC);
        // $invoke's three arguments: the method, its types, its arguments.
        enc.write_string(invocation.method);
        match invocation.types {
            Some(types) => {
                enc.begin_list(types.len(), Some("[string"))
                    .map_err(|e| e.to_string())?;
                for ty in types {
                    enc.write_string(ty);
                }
            }
            None => enc.write_null(),
        }
        enc.begin_list(args.len(), Some("[object"))
            .map_err(|e| e.to_string())?;
        for (i, arg) in args.iter().enumerate() {
            writer.value(arg, &format!("[{i}]"))?;
        }
        // The attachments a Java consumer sends: where the provider finds
        // the exporter, and that the call is generic.
        let enc = &mut writer.enc;
        enc.begin_map(None).map_err(|e| e.to_string())?;
        let version = invocation.version.unwrap_or(SERVICE_VERSION);
        let mut attachments = vec![
            ("path", invocation.interface),
            ("interface", invocation.interface),
            ("version", version),
            ("generic", "true"),
        ];
        if let Some(group) = invocation.group {
            attachments.push(("group", group));
        }
        for (key, value) in attachments {
            enc.write_string(key);
            enc.write_string(value);
        }
        for pair in set {
            writer.enc.write_string(&pair.key);
            match pair.value.fixed() {
                Some(value) => writer.enc.write_string(value),
                None => {
                    writer.flush();
                    writer.needs = writer.needs.union(pair.value.needs());
                    writer.pieces.push(Piece::Text(pair.value.clone()));
                }
            }
        }
        writer.enc.end_map();
        writer.flush();
        Ok((writer.pieces, writer.templates, writer.needs))
    }

    /// Whether calls differ (the body holds a template value, or the
    /// attachments go round-robin).
    pub fn numbered(&self) -> bool {
        !self.templates.is_empty() || self.bodies.len() > 1
    }

    /// The strings that hold template values, as written.
    pub fn templates(&self) -> &[String] {
        &self.templates
    }

    /// What a call must take before its body is written.
    pub fn needs(&self) -> Needs {
        self.needs
    }

    /// The body of the call with values `call`.
    pub fn body(&self, call: &CallValues) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.capacity(call));
        self.write_body(&mut out, call);
        out
    }

    /// The whole frame of the call with values `call`, request id `id`.
    pub fn frame(&self, id: u64, call: &CallValues) -> Vec<u8> {
        let mut out = Vec::with_capacity(HEADER_LEN + self.capacity(call));
        out.extend_from_slice(&[0; HEADER_LEN]);
        self.write_body(&mut out, call);
        let header = Header {
            flag: FLAG_REQUEST | FLAG_TWOWAY | HESSIAN2,
            status: 0,
            id,
            // At most MAX_BODY plus a number's digits per template (checked
            // in `new` for call 0).
            len: out.len() - HEADER_LEN,
        };
        out[..HEADER_LEN].copy_from_slice(&header.encode());
        out
    }

    fn pieces(&self, call: &CallValues) -> &[Piece] {
        let requests = (self.bodies.len() / self.sets) as u64;
        let request = (call.number % requests) as usize;
        let set = (call.number % self.sets as u64) as usize;
        &self.bodies[request * self.sets + set]
    }

    fn capacity(&self, call: &CallValues) -> usize {
        self.pieces(call)
            .iter()
            .map(|p| match p {
                Piece::Fixed(bytes) => bytes.len(),
                // A hessian2 string's length prefix is at most 3 bytes a chunk.
                Piece::Text(text) => text.len(call) + 8,
            })
            .sum()
    }

    fn write_body(&self, out: &mut Vec<u8>, call: &CallValues) {
        write_pieces(self.pieces(call), out, call);
    }
}

/// A body's `pieces` with the values of `call`.
fn write_pieces(pieces: &[Piece], out: &mut Vec<u8>, call: &CallValues) {
    for piece in pieces {
        match piece {
            Piece::Fixed(bytes) => out.extend_from_slice(bytes),
            Piece::Text(text) => {
                Encoder::new(&mut *out).write_string(&text.render(call));
            }
        }
    }
}

/// The JSON walk that writes the arguments, cutting out templated strings.
struct Writer<'m> {
    enc: Encoder<Vec<u8>>,
    pieces: Vec<Piece>,
    templates: Vec<String>,
    needs: Needs,
    method: &'m template::Method,
}

impl Writer<'_> {
    /// The bytes written so far become a fixed piece; the encoder keeps
    /// its tables (the list types written).
    fn flush(&mut self) {
        let bytes = std::mem::take(self.enc.get_mut());
        if !bytes.is_empty() {
            self.pieces.push(Piece::Fixed(bytes));
        }
    }

    fn value(&mut self, json: &Json, path: &str) -> Result<(), String> {
        let enc = &mut self.enc;
        match json {
            Json::Null => enc.write_null(),
            Json::Bool(b) => enc.write_bool(*b),
            Json::Number(n) => {
                if let Some(i) = n.as_i64() {
                    match i32::try_from(i) {
                        Ok(i) => enc.write_int(i),
                        Err(_) => enc.write_long(i),
                    }
                } else if n.is_u64() {
                    return Err(format!("--data: {path}: {n} is beyond Java's long"));
                } else {
                    enc.write_double(n.as_f64().unwrap_or(f64::NAN));
                }
            }
            Json::String(s) if s.contains("{{") => {
                let text =
                    Text::parse(s, self.method).map_err(|e| format!("--data: {path}: {e}"))?;
                match text.fixed() {
                    Some(fixed) => self.enc.write_string(fixed),
                    None => {
                        self.flush();
                        self.needs = self.needs.union(text.needs());
                        self.templates.push(text.written());
                        self.pieces.push(Piece::Text(text));
                    }
                }
            }
            Json::String(s) => enc.write_string(s),
            Json::Array(items) => {
                enc.begin_list(items.len(), None)
                    .map_err(|e| format!("--data: {path}: {e}"))?;
                for (i, item) in items.iter().enumerate() {
                    self.value(item, &format!("{path}[{i}]"))?;
                }
            }
            Json::Object(fields) => {
                enc.begin_map(None)
                    .map_err(|e| format!("--data: {path}: {e}"))?;
                for (key, value) in fields {
                    self.enc.write_string(key);
                    self.value(value, &format!("{path}.{key}"))?;
                }
                self.enc.end_map();
            }
        }
        Ok(())
    }
}

/// The parameter types of option `types`: Java type names, comma-separated
/// (`com.example.shop.ReserveRequest, int`, `java.lang.String[]`).
pub fn parse_types(text: &str) -> Result<Vec<String>, String> {
    let types: Vec<String> = text.split(',').map(|t| t.trim().to_owned()).collect();
    if types == [""] {
        return Ok(Vec::new());
    }
    for ty in &types {
        if !is_java_type(ty) {
            return Err(format!(
                "--types: `{ty}` is not a Java type name (e.g. `com.example.shop.ReserveRequest`, \
                 `int`, `java.lang.String[]`); separate the types with commas"
            ));
        }
    }
    Ok(types)
}

/// `a.b.C`, `int`, `java.lang.String[][]`, `a.B$Inner`.
fn is_java_type(ty: &str) -> bool {
    let base = ty.trim_end_matches("[]");
    !base.is_empty()
        && base.split('.').all(|part| {
            let mut chars = part.chars();
            chars
                .next()
                .is_some_and(|c| c.is_alphabetic() || c == '_' || c == '$')
                && chars.all(|c| c.is_alphanumeric() || c == '_' || c == '$')
        })
}

/// What a JSON argument for a parameter of type `ty` must be, where the
/// type says (a number for `int`, an object for a POJO, ...): the rest is
/// the provider's to convert.
fn check_argument(ty: &str, arg: &Json, path: &str) -> Result<(), String> {
    if arg.is_null() {
        return if is_primitive(ty) {
            Err(format!(
                "--data: {path}: a value of `{ty}` expected, got null (a primitive cannot be null)"
            ))
        } else {
            Ok(())
        };
    }
    // A template value may stand for a number: PojoUtils converts it.
    let numbered = arg.as_str().is_some_and(|s| s.contains("{{"));
    let form = JsonForm::of(ty);
    let fits = match form {
        JsonForm::Integer => arg.is_i64() || arg.is_u64() || numbered,
        JsonForm::Number => arg.is_number() || numbered,
        JsonForm::Boolean => arg.is_boolean(),
        JsonForm::String => arg.is_string(),
        JsonForm::Array => arg.is_array(),
        JsonForm::Object => arg.is_object(),
        JsonForm::Any => true,
        JsonForm::PojoOrEnum => arg.is_object() || arg.is_string(),
    };
    if fits {
        Ok(())
    } else {
        Err(format!(
            "--data: {path}: {} for `{ty}` expected, got {} `{}`",
            form.described(),
            json_type(arg),
            shown(arg)
        ))
    }
}

fn is_primitive(ty: &str) -> bool {
    matches!(
        ty,
        "int" | "long" | "short" | "byte" | "double" | "float" | "boolean" | "char"
    )
}

/// The JSON a parameter type takes: one classification of the Java types,
/// which both the check of an argument and its error read.
#[derive(Clone, Copy)]
enum JsonForm {
    Integer,
    Number,
    Boolean,
    String,
    Array,
    Object,
    /// `java.lang.Object` and the JDK's other types (dates, enums, ...),
    /// which have forms of their own: the provider converts.
    Any,
    /// A class of the user's: a POJO (its fields) or an enum (its name).
    PojoOrEnum,
}

impl JsonForm {
    fn of(ty: &str) -> JsonForm {
        match ty {
            "int"
            | "long"
            | "short"
            | "byte"
            | "java.lang.Integer"
            | "java.lang.Long"
            | "java.lang.Short"
            | "java.lang.Byte"
            | "java.math.BigInteger" => JsonForm::Integer,
            "double"
            | "float"
            | "java.lang.Double"
            | "java.lang.Float"
            | "java.math.BigDecimal" => JsonForm::Number,
            "boolean" | "java.lang.Boolean" => JsonForm::Boolean,
            "java.lang.String" | "char" | "java.lang.Character" => JsonForm::String,
            _ if ty.ends_with("[]")
                || matches!(
                    ty,
                    "java.util.List"
                        | "java.util.Collection"
                        | "java.util.Set"
                        | "java.util.ArrayList"
                ) =>
            {
                JsonForm::Array
            }
            "java.util.Map" | "java.util.HashMap" => JsonForm::Object,
            _ if ty.starts_with("java.") => JsonForm::Any,
            _ => JsonForm::PojoOrEnum,
        }
    }

    /// The form in an error's words.
    fn described(self) -> &'static str {
        match self {
            JsonForm::Integer => "an integer",
            JsonForm::Number => "a number",
            JsonForm::Boolean => "a boolean",
            JsonForm::String => "a string",
            JsonForm::Array => "an array",
            JsonForm::Object => "an object",
            JsonForm::Any => "any value",
            JsonForm::PojoOrEnum => "an object (its fields) or a string (an enum's name)",
        }
    }
}

fn plural(n: usize) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocols::dubbo::codec::frame;
    use hessian2::{Decoder, Value as HValue};
    use proptest::prelude::*;
    use serde_json::json;

    static NO_METADATA: Metadata = Metadata::EMPTY;

    fn invocation<'a>(args: &'a Json, types: Option<&'a [String]>) -> Invocation<'a> {
        Invocation {
            interface: "com.example.shop.InventoryService",
            method: "reserve",
            types,
            args,
            version: None,
            group: None,
            metadata: &NO_METADATA,
        }
    }

    fn at(n: u64) -> CallValues {
        CallValues::new(n, 0, Needs::NONE)
    }

    /// The body as a provider reads it: the five strings, `$invoke`'s
    /// three arguments, the attachments.
    fn read(body: &[u8]) -> (Vec<String>, Vec<HValue>, HValue) {
        let mut dec = Decoder::new(body);
        let strings = (0..5).map(|_| dec.read_string().unwrap()).collect();
        let args = (0..3).map(|_| dec.read_value().unwrap()).collect();
        let attachments = dec.read_value().unwrap();
        assert!(dec.is_empty());
        (strings, args, attachments)
    }

    fn entries(v: &HValue) -> Vec<(String, HValue)> {
        let HValue::Map(map) = v else { panic!("{v:?}") };
        assert!(map.ty.is_none());
        map.entries
            .iter()
            .map(|(k, v)| (k.as_str().unwrap().to_owned(), v.clone()))
            .collect()
    }

    #[test]
    fn the_body_is_what_a_generic_service_consumer_writes() {
        let args = json!([{"sku": "apple", "quantity": 3, "class": "com.example.shop.ReserveRequest"}, 7, 5_000_000_000i64, 1.5, true, null, ["a"]]);
        let types: Vec<String> = parse_types(
            "com.example.shop.ReserveRequest, int, long, double, boolean, java.lang.String, java.util.List",
        )
        .unwrap();
        let request = Request::new(&invocation(&args, Some(types.as_slice()))).unwrap();
        assert!(!request.numbered());
        let frame_bytes = request.frame(42, &at(0));
        let (header, total) = frame(&frame_bytes).unwrap().unwrap();
        assert_eq!(total, frame_bytes.len());
        assert_eq!((header.flag, header.id, header.status), (0xc2, 42, 0));
        let (strings, invoke, attachments) = read(&frame_bytes[HEADER_LEN..]);
        assert_eq!(
            strings,
            [
                "2.0.2",
                "com.example.shop.InventoryService",
                "0.0.0",
                "$invoke",
                "Ljava/lang/String;[Ljava/lang/String;[Ljava/lang/Object;"
            ]
        );
        assert_eq!(invoke[0], HValue::String("reserve".into()));
        assert_eq!(
            invoke[1],
            HValue::typed_list("[string", types.iter().map(|t| HValue::String(t.clone())))
        );
        let HValue::List(list) = &invoke[2] else {
            panic!()
        };
        assert_eq!(list.ty.as_deref(), Some("[object"));
        let mut pojo = entries(&list.items[0]);
        pojo.sort_by(|a, b| a.0.cmp(&b.0));
        assert_eq!(
            pojo,
            [
                (
                    String::from("class"),
                    HValue::String("com.example.shop.ReserveRequest".into())
                ),
                (String::from("quantity"), HValue::Int(3)),
                (String::from("sku"), HValue::String("apple".into())),
            ]
        );
        assert_eq!(
            list.items[1..],
            [
                HValue::Int(7),
                HValue::Long(5_000_000_000),
                HValue::Double(1.5),
                HValue::Bool(true),
                HValue::Null,
                HValue::list([HValue::String("a".into())]),
            ]
        );
        assert_eq!(
            entries(&attachments),
            [
                (
                    String::from("path"),
                    HValue::String("com.example.shop.InventoryService".into())
                ),
                (
                    String::from("interface"),
                    HValue::String("com.example.shop.InventoryService".into())
                ),
                (String::from("version"), HValue::String("0.0.0".into())),
                (String::from("generic"), HValue::String("true".into())),
            ]
        );
    }

    #[test]
    fn types_left_out_are_null_and_version_and_group_are_sent() {
        let args = json!(["apple"]);
        let mut inv = invocation(&args, None);
        inv.version = Some("1.0.0");
        inv.group = Some("east");
        let body = Request::new(&inv).unwrap().body(&at(0));
        let (strings, invoke, attachments) = read(&body);
        assert_eq!(strings[2], "1.0.0");
        assert_eq!(invoke[1], HValue::Null);
        let attachments = entries(&attachments);
        assert!(attachments.contains(&("version".into(), HValue::String("1.0.0".into()))));
        assert!(attachments.contains(&("group".into(), HValue::String("east".into()))));
    }

    #[test]
    fn a_numbered_string_is_written_per_call() {
        let args = json!([{"id": "req-{{.RequestNumber}}", "tags": ["x", "{{.RequestNumber}}/{{.RequestNumber}}"]}]);
        let request = Request::new(&invocation(&args, None)).unwrap();
        assert!(request.numbered());
        assert_eq!(
            request.templates(),
            [
                "req-{{.RequestNumber}}",
                "{{.RequestNumber}}/{{.RequestNumber}}"
            ]
        );
        for n in [0, 7, 123_456_789_012] {
            let (_, invoke, _) = read(&request.body(&at(n)));
            let HValue::List(list) = &invoke[2] else {
                panic!()
            };
            let pojo = entries(&list.items[0]);
            assert_eq!(pojo[0], ("id".into(), HValue::String(format!("req-{n}"))));
            assert_eq!(
                pojo[1].1,
                HValue::list([
                    HValue::String("x".into()),
                    HValue::String(format!("{n}/{n}"))
                ])
            );
        }
    }

    #[test]
    fn a_data_array_and_attachment_sets_go_round_robin_each_on_its_own() {
        use crate::metadata::Use;
        let metadata = Metadata::parse(
            &json!([{"tenant": "a"}, {"tenant": "b"}]),
            "--metadata",
            &template::Method::default(),
            Use::DubboAttachments,
        )
        .unwrap();
        let requests = [json!(["x-{{.RequestNumber}}"]), json!(["y"]), json!(["z"])];
        let mut inv = invocation(&requests[0], None);
        inv.metadata = &metadata;
        let request = Request::data_array(&inv, &requests).unwrap();
        assert!(request.numbered());
        assert_eq!(request.templates(), ["x-{{.RequestNumber}}"]);
        // Three requests and two sets: every pairing within six calls.
        for (n, arg, tenant) in [
            (0, "x-0", "a"),
            (1, "y", "b"),
            (2, "z", "a"),
            (3, "x-3", "b"),
            (4, "y", "a"),
            (5, "z", "b"),
        ] {
            let (_, invoke, attachments) = read(&request.body(&at(n)));
            let HValue::List(args) = &invoke[2] else {
                panic!()
            };
            assert_eq!(args.items[0], HValue::String(arg.into()), "call {n}");
            assert!(
                entries(&attachments).contains(&("tenant".into(), HValue::String(tenant.into())))
            );
        }
        // A request of the wrong shape is named by its index.
        let bad = [json!(["a"]), json!({"not": "an array"})];
        let err = Request::data_array(&invocation(&bad[0], None), &bad).unwrap_err();
        assert!(
            err.starts_with("request 1 of the data array: --data:"),
            "{err}"
        );
    }

    #[test]
    fn attachments_are_sent_round_robin_templated_or_not() {
        use crate::metadata::Use;
        let metadata = Metadata::parse(
            &json!([{"tenant": "a", "trace": "t-{{.RequestNumber}}"}, {"tenant": "b"}]),
            "--metadata",
            &template::Method::default(),
            Use::DubboAttachments,
        )
        .unwrap();
        let args = json!(["{{.MethodName}}"]);
        let mut inv = invocation(&args, None);
        inv.metadata = &metadata;
        let request = Request::new(&inv).unwrap();
        assert!(request.numbered());
        assert_eq!(request.templates(), ["trace: t-{{.RequestNumber}}"]);
        for (n, tenant, trace) in [(0, "a", Some("t-0")), (1, "b", None), (4, "a", Some("t-4"))] {
            let (_, invoke, attachments) = read(&request.body(&at(n)));
            // The method's own values are written in once.
            let HValue::List(list) = &invoke[2] else {
                panic!()
            };
            assert_eq!(list.items[0], HValue::String("reserve".into()));
            let attachments = entries(&attachments);
            assert!(attachments.contains(&("generic".into(), HValue::String("true".into()))));
            assert!(attachments.contains(&("tenant".into(), HValue::String(tenant.into()))));
            assert_eq!(
                attachments
                    .iter()
                    .find(|(k, _)| k == "trace")
                    .map(|(_, v)| v.clone()),
                trace.map(|t| HValue::String(t.into()))
            );
        }
        let own = Metadata::parse(
            &json!({"generic": "false"}),
            "--metadata",
            &template::Method::default(),
            Use::DubboAttachments,
        )
        .unwrap();
        inv.metadata = &own;
        assert_eq!(
            Request::new(&inv).unwrap_err(),
            "--metadata: `generic` is an attachment rpclab sends itself (with path, interface, version, generic, group); remove it"
        );
        let args = json!(["{{nope}}"]);
        assert!(Request::new(&invocation(&args, None))
            .unwrap_err()
            .starts_with("--data: [0]: unknown template action `{{nope}}`"));
    }

    #[test]
    fn bad_arguments_and_types_are_named() {
        let types = |t: &str| parse_types(t).unwrap();
        let err = |args: Json, t: Option<&str>| {
            let t = t.map(types);
            Request::new(&invocation(&args, t.as_deref())).unwrap_err()
        };
        assert_eq!(
            err(json!({"sku": "a"}), None),
            "--data: the method's arguments as a JSON array expected (`[…]`, one element per \
             parameter), got an object `{\"sku\":\"a\"}`"
        );
        assert_eq!(
            err(json!([1]), Some("int, int")),
            "--types names 2 parameter types (int, int) but --data holds 1 argument"
        );
        assert_eq!(
            err(
                json!([{"sku": "a"}, "lots"]),
                Some("com.example.shop.ReserveRequest, int")
            ),
            "--data: [1]: an integer for `int` expected, got a string `\"lots\"`"
        );
        assert_eq!(
            err(json!([null]), Some("long")),
            "--data: [0]: a value of `long` expected, got null (a primitive cannot be null)"
        );
        assert_eq!(
            err(json!([5]), Some("com.example.shop.ReserveRequest")),
            "--data: [0]: an object (its fields) or a string (an enum's name) for \
             `com.example.shop.ReserveRequest` expected, got a number `5`"
        );
        assert_eq!(
            err(json!([{"a": [1, 18446744073709551615u64]}]), None),
            "--data: [0].a[1]: 18446744073709551615 is beyond Java's long"
        );
        assert!(parse_types("int;long")
            .unwrap_err()
            .contains("`int;long` is not a Java type"));
        assert_eq!(parse_types("").unwrap(), Vec::<String>::new());
        assert_eq!(
            parse_types(" a.B$C ,int[][] ").unwrap(),
            ["a.B$C".to_owned(), "int[][]".to_owned()]
        );
        // A numbered string may stand for a number.
        let args = json!(["{{.RequestNumber}}"]);
        let t = types("long");
        assert!(Request::new(&invocation(&args, Some(t.as_slice()))).is_ok());
    }

    /// Any JSON the user can write, a few levels deep.
    fn any_json() -> impl Strategy<Value = Json> {
        let leaf = prop_oneof![
            Just(Json::Null),
            any::<bool>().prop_map(Json::Bool),
            any::<i64>().prop_map(|n| json!(n)),
            (-1e9f64..1e9).prop_map(|f| json!(f)),
            // No template in a plain string: one pass of replacing `{{`
            // leaves one where there were three.
            "[a-z{}.é ]{0,12}".prop_map(|s| {
                let mut s = s;
                while s.contains("{{") {
                    s = s.replace("{{", "{");
                }
                Json::String(s)
            }),
            Just(json!("n={{.RequestNumber}}")),
        ];
        leaf.prop_recursive(3, 24, 4, |inner| {
            prop_oneof![
                proptest::collection::vec(inner.clone(), 0..4).prop_map(Json::Array),
                proptest::collection::btree_map("[a-z]{1,6}", inner, 0..4)
                    .prop_map(|m| Json::Object(m.into_iter().collect())),
            ]
        })
    }

    /// What a provider reading hessian2 sees of a JSON argument, call `n`'s.
    fn as_read(json: &Json, n: u64) -> HValue {
        match json {
            Json::Null => HValue::Null,
            Json::Bool(b) => HValue::Bool(*b),
            Json::Number(x) => match x.as_i64() {
                Some(i) => i32::try_from(i).map_or(HValue::Long(i), HValue::Int),
                None => HValue::Double(x.as_f64().unwrap()),
            },
            Json::String(s) => HValue::String(s.replace("{{.RequestNumber}}", &n.to_string())),
            Json::Array(items) => HValue::list(items.iter().map(|i| as_read(i, n))),
            Json::Object(fields) => HValue::map(
                fields
                    .iter()
                    .map(|(k, v)| (HValue::String(k.clone()), as_read(v, n))),
            ),
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(500))]

        /// Whatever the arguments, the provider reads them back as the
        /// values Java's hessian2 would give, in every call.
        #[test]
        fn any_arguments_read_back(args in proptest::collection::vec(any_json(), 0..4), n in any::<u64>()) {
            let args = Json::Array(args);
            let request = Request::new(&invocation(&args, None)).unwrap();
            let frame_bytes = request.frame(1, &at(n));
            let (header, total) = frame(&frame_bytes).unwrap().unwrap();
            prop_assert_eq!(total, frame_bytes.len());
            prop_assert_eq!(header.len, total - HEADER_LEN);
            let (_, invoke, _) = read(&frame_bytes[HEADER_LEN..]);
            let Json::Array(items) = &args else { unreachable!() };
            prop_assert_eq!(
                &invoke[2],
                &HValue::typed_list("[object", items.iter().map(|a| as_read(a, n)))
            );
        }
    }
}
