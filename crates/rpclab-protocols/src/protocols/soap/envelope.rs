//! SOAP 1.1 document/literal wrapped envelopes: built as bytes straight
//! from the contract's values, and parsed with quick-xml's namespace-aware
//! pull reader straight into them. Pure functions, no I/O.
//!
//! ```text
//! <soap:Envelope xmlns:soap="http://schemas.xmlsoap.org/soap/envelope/"><soap:Body>
//!   <ns:echoOrder xmlns:ns="{namespace}"><arg0><amount>100.75</amount>...</arg0></ns:echoOrder>
//! </soap:Body></soap:Envelope>
//! reply: <ns:echoOrderResponse><return>...</return></ns:echoOrderResponse>
//! fault: <soap:Fault><faultcode>soap:Client</faultcode><faultstring>...</faultstring></soap:Fault>
//! ```
//!
//! The element names (`echoOrder`, `arg0`, `echoOrderResponse`, `return`),
//! the namespace, whether local elements are qualified and the order of the
//! Order's fields come from the service's WSDL (the `wsdl` module, which
//! reads them into this module's types); a list
//! argument or result is its element repeated (`maxOccurs="unbounded"`).

use crate::java_contract::Method;
use crate::protocol::CallError;
use quick_xml::events::{BytesStart, Event};
use quick_xml::name::ResolveResult;
use quick_xml::NsReader;
use rpclab_model::contract::{self, Value};

/// The SOAP 1.1 envelope namespace.
pub const SOAP11_ENV: &str = "http://schemas.xmlsoap.org/soap/envelope/";
/// The SOAP 1.2 envelope namespace (recognised to say it is not spoken).
pub const SOAP12_ENV: &str = "http://www.w3.org/2003/05/soap-envelope";
const XSI: &[u8] = b"http://www.w3.org/2001/XMLSchema-instance";

/// What `HessianProxy`'s SOAP cousins (JAX-WS and CXF clients) send as
/// `Content-Type` for SOAP 1.1.
pub const CONTENT_TYPE: &str = "text/xml; charset=utf-8";

/// The Order's fields, as the contract names them (Java bean properties).
pub use crate::java_contract::ORDER_FIELDS;

/// A reply or WSDL that is not the XML it should be.
pub(crate) fn xml_error(what: &str, e: impl std::fmt::Display) -> CallError {
    CallError::Protocol(format!("malformed {what}: {e}"))
}

/// The namespace JAX-WS derives from the package `rpclab.contract`, which
/// the lab's SOAP servers use.
pub const DEFAULT_NAMESPACE: &str = "http://contract.rpclab/";

/// One operation's element names, from the WSDL.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Operation {
    pub method: Method,
    /// The wrapper elements' namespace.
    pub namespace: String,
    /// Whether the parameter and return elements are in `namespace` too
    /// (`elementFormDefault="qualified"`, or their own `form`).
    pub qualified: bool,
    /// Whether the Order's field elements are in `namespace`.
    pub fields_qualified: bool,
    /// Request wrapper element, e.g. `echoOrder`.
    pub wrapper: String,
    /// Parameter element, e.g. `arg0` (empty for `empty`).
    pub arg: String,
    /// Response wrapper element, e.g. `echoOrderResponse`.
    pub response: String,
    /// Return element, e.g. `return` (empty for `empty`).
    pub ret: String,
    pub soap_action: String,
    /// The Order's field elements in the schema's order.
    pub order_fields: Vec<String>,
}

impl Operation {
    /// What JAX-WS's defaults give for `method` (used when the WSDL is not
    /// read: `wsdl = "none"`): parameter `arg0`, return `return`,
    /// unqualified locals, the Order's fields in JAXB's alphabetical order,
    /// an empty SOAPAction.
    pub fn jaxws_default(method: Method, namespace: &str) -> Operation {
        let needs_arg = method != Method::Empty;
        let mut order_fields: Vec<String> = ORDER_FIELDS.iter().map(|s| s.to_string()).collect();
        order_fields.sort();
        Operation {
            method,
            namespace: namespace.to_owned(),
            qualified: false,
            fields_qualified: false,
            wrapper: method.name().to_owned(),
            arg: if needs_arg {
                "arg0".into()
            } else {
                String::new()
            },
            response: format!("{}Response", method.name()),
            ret: if needs_arg {
                "return".into()
            } else {
                String::new()
            },
            soap_action: String::new(),
            order_fields,
        }
    }
}

/// A good first capacity for a request carrying `argument`.
pub fn request_capacity(argument: &Value) -> usize {
    const FIXED: usize = 256;
    FIXED
        + match argument {
            Value::Order(_) => 400,
            Value::Orders(orders) => orders.len() * 400,
            Value::Str(s) => s.len() + s.len() / 16,
            Value::Unit => 0,
        }
}

/// Escapes character data (and attribute values) into `out`.
pub fn escape_into(out: &mut Vec<u8>, s: &str) {
    let bytes = s.as_bytes();
    let mut start = 0;
    for (i, &b) in bytes.iter().enumerate() {
        let rep: &[u8] = match b {
            b'&' => b"&amp;",
            b'<' => b"&lt;",
            b'>' => b"&gt;",
            b'"' => b"&quot;",
            b'\r' => b"&#13;",
            _ => continue,
        };
        out.extend_from_slice(&bytes[start..i]);
        out.extend_from_slice(rep);
        start = i + 1;
    }
    out.extend_from_slice(&bytes[start..]);
}

/// An `xs:double` in its lexical form (`INF`, `-INF`, `NaN` included).
pub fn write_double(out: &mut Vec<u8>, v: f64) {
    use std::io::Write;
    if v.is_nan() {
        out.extend_from_slice(b"NaN");
    } else if v == f64::INFINITY {
        out.extend_from_slice(b"INF");
    } else if v == f64::NEG_INFINITY {
        out.extend_from_slice(b"-INF");
    } else {
        // Rust's shortest round-trip form, which xs:double accepts.
        let _ = write!(out, "{v:?}");
    }
}

fn open(out: &mut Vec<u8>, prefix: &str, name: &str) {
    out.push(b'<');
    out.extend_from_slice(prefix.as_bytes());
    out.extend_from_slice(name.as_bytes());
    out.push(b'>');
}

fn close(out: &mut Vec<u8>, prefix: &str, name: &str) {
    out.extend_from_slice(b"</");
    out.extend_from_slice(prefix.as_bytes());
    out.extend_from_slice(name.as_bytes());
    out.push(b'>');
}

fn write_order(out: &mut Vec<u8>, op: &Operation, p: &str, element: &str, o: &contract::Order) {
    use std::io::Write;
    open(out, p, element);
    let fp = if op.fields_qualified { "ns:" } else { "" };
    for field in &op.order_fields {
        open(out, fp, field);
        match field.as_str() {
            "orderId" => {
                let _ = write!(out, "{}", o.order_id);
            }
            "phone" => escape_into(out, &o.phone),
            "name" => escape_into(out, &o.name),
            "orderNum" => escape_into(out, &o.order_num),
            "orderDate" => {
                let _ = write!(out, "{}", o.order_date);
            }
            "ticketType" => {
                let _ = write!(out, "{}", o.ticket_type);
            }
            "amount" => write_double(out, o.amount),
            "orderStatus" => {
                let _ = write!(out, "{}", o.order_status);
            }
            _ => {}
        }
        close(out, fp, field);
    }
    close(out, p, element);
}

/// Encodes the request envelope of `op` carrying `argument` into `out`
/// (cleared first).
pub fn encode_request(out: &mut Vec<u8>, op: &Operation, argument: &Value) {
    out.clear();
    out.extend_from_slice(
        b"<?xml version=\"1.0\" encoding=\"UTF-8\"?>\
          <soap:Envelope xmlns:soap=\"http://schemas.xmlsoap.org/soap/envelope/\"><soap:Body><ns:",
    );
    out.extend_from_slice(op.wrapper.as_bytes());
    out.extend_from_slice(b" xmlns:ns=\"");
    escape_into(out, &op.namespace);
    out.extend_from_slice(b"\">");
    let p = if op.qualified { "ns:" } else { "" };
    match argument {
        Value::Unit => {}
        Value::Str(s) => {
            open(out, p, &op.arg);
            escape_into(out, s);
            close(out, p, &op.arg);
        }
        Value::Order(o) => write_order(out, op, p, &op.arg, o),
        Value::Orders(orders) => {
            for o in orders {
                write_order(out, op, p, &op.arg, o);
            }
        }
    }
    out.extend_from_slice(b"</ns:");
    out.extend_from_slice(op.wrapper.as_bytes());
    out.extend_from_slice(b"></soap:Body></soap:Envelope>");
}

/// The namespace an element resolved to, owned (empty when none).
fn owned_ns(ns: ResolveResult<'_>) -> Result<Vec<u8>, CallError> {
    match ns {
        ResolveResult::Bound(n) => Ok(n.as_ref().to_vec()),
        ResolveResult::Unbound => Ok(Vec::new()),
        ResolveResult::Unknown(p) => Err(CallError::Protocol(format!(
            "SOAP reply uses the undeclared prefix `{}`",
            String::from_utf8_lossy(&p)
        ))),
    }
}

/// A namespace-aware cursor over one document.
struct Cursor<'a> {
    reader: NsReader<&'a [u8]>,
}

/// An element start: namespace (empty when none), local name, whether it
/// is empty (`<x/>`), and whether it says `xsi:nil="true"`.
struct Start {
    ns: Vec<u8>,
    local: Vec<u8>,
    empty: bool,
    nil: bool,
}

/// What comes next in a reply, as the cursor walks it.
enum Step {
    Start(Start),
    End,
    Eof,
}

impl<'a> Cursor<'a> {
    fn new(xml: &'a [u8]) -> Self {
        let mut reader = NsReader::from_reader(xml);
        reader.config_mut().trim_text(false);
        Cursor { reader }
    }

    fn start(&self, ns: Vec<u8>, e: &BytesStart<'_>, empty: bool) -> Result<Start, CallError> {
        let mut nil = false;
        for a in e.attributes() {
            let a = a.map_err(|e| xml_error("SOAP reply", e))?;
            if a.key.local_name().as_ref() == b"nil" {
                let (ans, _) = self.reader.resolve_attribute(a.key);
                if matches!(ans, ResolveResult::Bound(n) if n.as_ref() == XSI) {
                    nil = matches!(a.value.as_ref(), b"true" | b"1");
                }
            }
        }
        Ok(Start {
            ns,
            local: e.local_name().as_ref().to_vec(),
            empty,
            nil,
        })
    }

    /// The next element's start, an element's end or the end of the
    /// document, whichever comes first. Text, comments and declarations
    /// between elements are ignored.
    fn next_step(&mut self) -> Result<Step, CallError> {
        loop {
            let (ns, event) = self
                .reader
                .read_resolved_event()
                .map_err(|e| xml_error("SOAP reply", e))?;
            let ns = owned_ns(ns)?;
            return match event {
                Event::Start(e) => self.start(ns, &e, false).map(Step::Start),
                Event::Empty(e) => self.start(ns, &e, true).map(Step::Start),
                Event::End(_) => Ok(Step::End),
                Event::Eof => Ok(Step::Eof),
                _ => continue,
            };
        }
    }

    /// The next child element of the current element, or `None` at its end
    /// (consumed). Text between elements is ignored.
    fn next_child(&mut self) -> Result<Option<Start>, CallError> {
        match self.next_step()? {
            Step::Start(child) => Ok(Some(child)),
            Step::End => Ok(None),
            Step::Eof => Err(CallError::Protocol(
                "SOAP reply ends inside an element".into(),
            )),
        }
    }

    /// The text content of an element whose start was just read, up to its
    /// end. A child element is an error.
    fn text(&mut self, start: &Start) -> Result<String, CallError> {
        let mut out = String::new();
        if start.empty {
            return Ok(out);
        }
        loop {
            match self
                .reader
                .read_event()
                .map_err(|e| xml_error("SOAP reply", e))?
            {
                Event::Text(t) => {
                    out.push_str(&t.unescape().map_err(|e| xml_error("SOAP reply", e))?)
                }
                Event::CData(c) => {
                    out.push_str(std::str::from_utf8(&c).map_err(|e| xml_error("SOAP reply", e))?)
                }
                Event::End(_) => return Ok(out),
                Event::Start(_) | Event::Empty(_) => {
                    return Err(CallError::WrongResponse(format!(
                        "element <{}> has child elements where text was expected",
                        String::from_utf8_lossy(&start.local)
                    )))
                }
                Event::Eof => {
                    return Err(CallError::Protocol(
                        "SOAP reply ends inside an element".into(),
                    ))
                }
                _ => {}
            }
        }
    }

    /// Skips the rest of an element whose start was just read.
    fn skip(&mut self, start: &Start) -> Result<(), CallError> {
        if start.empty {
            return Ok(());
        }
        let mut depth = 1usize;
        loop {
            match self
                .reader
                .read_event()
                .map_err(|e| xml_error("SOAP reply", e))?
            {
                Event::Start(_) => depth += 1,
                Event::End(_) => {
                    depth -= 1;
                    if depth == 0 {
                        return Ok(());
                    }
                }
                Event::Eof => {
                    return Err(CallError::Protocol(
                        "SOAP reply ends inside an element".into(),
                    ))
                }
                _ => {}
            }
        }
    }
}

fn number<T: std::str::FromStr>(field: &str, text: &str) -> Result<T, CallError> {
    text.trim().parse().map_err(|_| {
        CallError::WrongResponse(format!("Order field {field} is not a number: {text:.40?}"))
    })
}

fn parse_double(text: &str) -> Result<f64, CallError> {
    match text.trim() {
        "INF" | "+INF" => Ok(f64::INFINITY),
        "-INF" => Ok(f64::NEG_INFINITY),
        t => number("amount", t),
    }
}

/// An Order element's fields, by local name (any order; unknown ones
/// skipped; missing ones keep Java's defaults).
fn read_order(cur: &mut Cursor<'_>, start: &Start) -> Result<contract::Order, CallError> {
    let mut o = contract::Order::default();
    if start.empty {
        return Ok(o);
    }
    while let Some(field) = cur.next_child()? {
        match field.local.as_slice() {
            b"orderId" => o.order_id = number("orderId", &cur.text(&field)?)?,
            b"phone" => o.phone = cur.text(&field)?,
            b"name" => o.name = cur.text(&field)?,
            b"orderNum" => o.order_num = cur.text(&field)?,
            b"orderDate" => o.order_date = number("orderDate", &cur.text(&field)?)?,
            b"ticketType" => o.ticket_type = number("ticketType", &cur.text(&field)?)?,
            b"amount" => o.amount = parse_double(&cur.text(&field)?)?,
            b"orderStatus" => o.order_status = number("orderStatus", &cur.text(&field)?)?,
            _ => cur.skip(&field)?,
        }
    }
    Ok(o)
}

/// A SOAP fault (1.1: faultcode, faultstring; 1.2: Code/Value, Reason/Text)
/// as a server error.
fn read_fault(cur: &mut Cursor<'_>, start: &Start) -> CallError {
    let mut code = String::new();
    let mut message = String::new();
    let read = (|| -> Result<(), CallError> {
        if start.empty {
            return Ok(());
        }
        while let Some(child) = cur.next_child()? {
            match child.local.as_slice() {
                b"faultcode" => code = cur.text(&child)?,
                b"faultstring" => message = cur.text(&child)?,
                _ => cur.skip(&child)?,
            }
        }
        Ok(())
    })();
    if let Err(e) = read {
        return CallError::Server(format!("SOAP fault (unreadable: {e})"));
    }
    CallError::Server(format!(
        "SOAP fault {}: {}",
        if code.is_empty() {
            "(no faultcode)"
        } else {
            code.trim()
        },
        if message.is_empty() {
            "(no faultstring)"
        } else {
            message.trim()
        }
    ))
}

fn name_of(s: &Start) -> String {
    if s.ns.is_empty() {
        String::from_utf8_lossy(&s.local).into_owned()
    } else {
        format!(
            "{{{}}}{}",
            String::from_utf8_lossy(&s.ns),
            String::from_utf8_lossy(&s.local)
        )
    }
}

/// Decodes the response envelope to `op`: its value, or a fault as a
/// [`CallError::Server`] with the fault code and string.
pub fn decode_response(xml: &[u8], op: &Operation) -> Result<Value, CallError> {
    let mut cur = Cursor::new(xml);
    // The envelope.
    let envelope = loop {
        match cur.next_step()? {
            Step::Start(root) => break root,
            Step::End => continue,
            Step::Eof => return Err(CallError::Protocol("empty SOAP reply".into())),
        }
    };
    if envelope.local != b"Envelope" || envelope.ns != SOAP11_ENV.as_bytes() {
        let what = if envelope.ns == SOAP12_ENV.as_bytes() {
            "a SOAP 1.2 envelope; this client speaks SOAP 1.1".to_owned()
        } else {
            format!("<{}>", name_of(&envelope))
        };
        return Err(CallError::Protocol(format!(
            "not a SOAP 1.1 envelope: the reply's root is {what}"
        )));
    }
    if envelope.empty {
        return Err(CallError::Protocol("SOAP envelope without a Body".into()));
    }
    // The body (after an optional header).
    loop {
        let Some(child) = cur.next_child()? else {
            return Err(CallError::Protocol("SOAP envelope without a Body".into()));
        };
        if child.local == b"Body" && child.ns == SOAP11_ENV.as_bytes() {
            if child.empty {
                return Err(CallError::Protocol("empty SOAP Body".into()));
            }
            break;
        }
        cur.skip(&child)?;
    }
    let Some(wrapper) = cur.next_child()? else {
        return Err(CallError::Protocol("empty SOAP Body".into()));
    };
    if wrapper.local == b"Fault" && wrapper.ns == SOAP11_ENV.as_bytes() {
        return Err(read_fault(&mut cur, &wrapper));
    }
    if wrapper.local != op.response.as_bytes() || wrapper.ns != op.namespace.as_bytes() {
        return Err(CallError::WrongResponse(format!(
            "expected <{{{}}}{}>, got <{}>",
            op.namespace,
            op.response,
            name_of(&wrapper)
        )));
    }
    let value = read_result(&mut cur, &wrapper, op)?;
    Ok(value)
}

fn read_result(cur: &mut Cursor<'_>, wrapper: &Start, op: &Operation) -> Result<Value, CallError> {
    let ret = op.ret.as_bytes();
    let mut orders = Vec::new();
    let mut single: Option<Value> = None;
    let mut nulls = 0;
    if !wrapper.empty {
        while let Some(child) = cur.next_child()? {
            if child.local != ret || op.method == Method::Empty {
                return Err(CallError::WrongResponse(format!(
                    "unexpected <{}> in <{}>",
                    name_of(&child),
                    op.response
                )));
            }
            if child.nil {
                nulls += 1;
                cur.skip(&child)?;
                continue;
            }
            match op.method {
                Method::EchoOrders => orders.push(read_order(cur, &child)?),
                _ if single.is_some() => {
                    return Err(CallError::WrongResponse(format!(
                        "more than one <{}> in <{}>",
                        op.ret, op.response
                    )))
                }
                Method::EchoOrder => single = Some(Value::Order(read_order(cur, &child)?)),
                Method::EchoString | Method::Hello => single = Some(Value::Str(cur.text(&child)?)),
                Method::Empty => unreachable!("refused above"),
            }
        }
    }
    match op.method {
        Method::Empty => Ok(Value::Unit),
        Method::EchoOrders if nulls == 0 => Ok(Value::Orders(orders)),
        Method::EchoOrders => Err(CallError::WrongResponse(format!(
            "`echoOrders` returned {nulls} null orders"
        ))),
        m => {
            single.ok_or_else(|| CallError::WrongResponse(format!("`{}` returned null", m.name())))
        }
    }
}

/// Decodes `bytes` as a reply to every operation (JAX-WS defaults): what
/// the fuzz target and the property tests run. Never panics.
pub fn exercise(bytes: &[u8]) {
    for method in Method::ALL {
        let _ = decode_response(bytes, &Operation::jaxws_default(method, DEFAULT_NAMESPACE));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::decoding;
    use proptest::prelude::*;
    use rpclab_model::contract::{Operation as ContractOp, StringSize};

    fn op(method: Method) -> Operation {
        Operation::jaxws_default(method, DEFAULT_NAMESPACE)
    }

    /// What a JAX-WS server answers to a request: the argument echoed in
    /// the response wrapper (hello prefixed).
    fn echo(request: &[u8], op: &Operation) -> Vec<u8> {
        let text = std::str::from_utf8(request).unwrap();
        let open = format!("<{}>", op.arg);
        let close = format!("</{}>", op.arg);
        let inner = if op.arg.is_empty() {
            String::new()
        } else {
            text.replace(&open, &format!("<{}>", op.ret))
                .replace(&close, &format!("</{}>", op.ret))
                .split_once(&format!("xmlns:ns=\"{}\">", op.namespace))
                .unwrap()
                .1
                .rsplit_once("</ns:")
                .unwrap()
                .0
                .to_owned()
        };
        let inner = if op.method == Method::Hello {
            inner.replace("<return>", "<return>hello ")
        } else {
            inner
        };
        format!(
            "<?xml version='1.0' encoding='UTF-8'?><S:Envelope xmlns:S=\"{SOAP11_ENV}\"><S:Body>\
             <ns2:{resp} xmlns:ns2=\"{ns}\">{inner}</ns2:{resp}></S:Body></S:Envelope>",
            resp = op.response,
            ns = op.namespace
        )
        .into_bytes()
    }

    #[test]
    fn every_operation_round_trips() {
        for c in ContractOp::ALL {
            let call = c.call();
            let op = op(Method::of(&call).unwrap());
            let mut req = Vec::new();
            encode_request(&mut req, &op, &call.argument);
            assert!(req.len() <= request_capacity(&call.argument), "{c}");
            let value =
                decode_response(&echo(&req, &op), &op).unwrap_or_else(|e| panic!("{c}: {e}"));
            assert!(value == call.expected, "{c}");
        }
    }

    #[test]
    fn escaping_and_doubles() {
        let mut out = Vec::new();
        escape_into(&mut out, "a<b>&\"c\r");
        assert_eq!(out, b"a&lt;b&gt;&amp;&quot;c&#13;");
        for (v, s) in [
            (100.75, "100.75"),
            (1.0, "1.0"),
            (f64::INFINITY, "INF"),
            (f64::NAN, "NaN"),
            (1e300, "1e300"),
        ] {
            let mut out = Vec::new();
            write_double(&mut out, v);
            assert_eq!(std::str::from_utf8(&out).unwrap(), s);
        }
        assert_eq!(parse_double("1.0E10").unwrap(), 1e10);
        assert_eq!(parse_double("-INF").unwrap(), f64::NEG_INFINITY);
    }

    #[test]
    fn faults_and_wrong_replies() {
        let fault = format!(
            "<S:Envelope xmlns:S=\"{SOAP11_ENV}\"><S:Body><S:Fault><faultcode>S:Client</faultcode>\
             <faultstring>Cannot find dispatch method for {{x}}nope</faultstring></S:Fault></S:Body></S:Envelope>"
        );
        match decode_response(fault.as_bytes(), &op(Method::Hello)) {
            Err(CallError::Server(m)) => {
                assert_eq!(
                    m,
                    "SOAP fault S:Client: Cannot find dispatch method for {x}nope"
                )
            }
            other => panic!("{other:?}"),
        }
        let other = format!(
            "<S:Envelope xmlns:S=\"{SOAP11_ENV}\"><S:Body><ns2:helloResponse xmlns:ns2=\"urn:other\">\
             <return>x</return></ns2:helloResponse></S:Body></S:Envelope>"
        );
        assert!(matches!(
            decode_response(other.as_bytes(), &op(Method::Hello)),
            Err(CallError::WrongResponse(_))
        ));
        let null = format!(
            "<S:Envelope xmlns:S=\"{SOAP11_ENV}\"><S:Body><ns2:helloResponse xmlns:ns2=\"{DEFAULT_NAMESPACE}\"/>\
             </S:Body></S:Envelope>"
        );
        assert!(matches!(
            decode_response(null.as_bytes(), &op(Method::Hello)),
            Err(CallError::WrongResponse(m)) if m.contains("null")
        ));
        for bad in [
            "",
            "<x/>",
            "<S:Envelope xmlns:S=\"http://www.w3.org/2003/05/soap-envelope\"/>",
            "<S:Envelope xmlns:S=\"http://schemas.xmlsoap.org/soap/envelope/\"><S:Body>",
            "<S:Envelope xmlns:S=\"http://schemas.xmlsoap.org/soap/envelope/\"><S:Body><p:x/>",
        ] {
            assert!(
                matches!(
                    decode_response(bad.as_bytes(), &op(Method::Empty)),
                    Err(CallError::Protocol(_))
                ),
                "{bad}"
            );
        }
        // A truncated 1 MiB string.
        let call = ContractOp::StringEcho(StringSize::M1).call();
        let o = op(Method::EchoString);
        let mut req = Vec::new();
        encode_request(&mut req, &o, &call.argument);
        let reply = echo(&req, &o);
        assert!(decode_response(&reply[..reply.len() - 40], &o).is_err());
    }

    #[test]
    fn decoding_arbitrary_bytes_never_panics() {
        decoding::arbitrary_bytes_never_panic(exercise);
    }

    #[test]
    fn decoding_mutated_replies_never_panics() {
        let reply = |c: ContractOp| {
            let call = c.call();
            let o = op(Method::of(&call).unwrap());
            let mut req = Vec::new();
            encode_request(&mut req, &o, &call.argument);
            echo(&req, &o)
        };
        decoding::mutated_replies_never_panic(reply, 0, exercise);
    }

    proptest! {
        #![proptest_config(decoding::cases())]

        /// Any text survives the envelope both ways.
        #[test]
        fn strings_round_trip(s in "[^\u{0}-\u{8}\u{b}\u{c}\u{e}-\u{1f}\u{fffe}\u{ffff}]{0,200}") {
            let o = op(Method::EchoString);
            let mut req = Vec::new();
            encode_request(&mut req, &o, &Value::Str(s.clone()));
            prop_assert_eq!(decode_response(&echo(&req, &o), &o).unwrap(), Value::Str(s));
        }
    }
}
