//! What the client needs from a service's WSDL: the namespace and element
//! names of each operation's document/literal wrapped messages, the order
//! of the Order's fields, whether local elements are namespace-qualified,
//! and each operation's `SOAPAction`.
//!
//! Read once at start-up (the first `connect`) from `GET <path>?wsdl`, plus
//! the schemas it imports by `schemaLocation` (JAX-WS RI publishes its
//! schema as `?xsd=1`; CXF inlines it). Only what document/literal wrapped
//! SOAP 1.1 needs is scanned: top-level `xs:element`s and their (named or
//! anonymous) `xs:complexType` sequences, and the binding's
//! `soap:operation`s. Anything missing is a configuration error naming the
//! WSDL and what it lacks.

use super::envelope::{xml_error, Operation, ORDER_FIELDS};
use crate::java_contract::Method;
use crate::protocol::CallError;
use quick_xml::events::{BytesStart, Event};
use quick_xml::name::ResolveResult;
use quick_xml::NsReader;
use std::collections::HashMap;

pub const XSD_NS: &[u8] = b"http://www.w3.org/2001/XMLSchema";
pub const WSDL_NS: &[u8] = b"http://schemas.xmlsoap.org/wsdl/";
pub const WSDL_SOAP11_NS: &[u8] = b"http://schemas.xmlsoap.org/wsdl/soap/";
pub const WSDL_SOAP12_NS: &[u8] = b"http://schemas.xmlsoap.org/wsdl/soap12/";

/// A child element of a complex type's sequence.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Child {
    pub name: String,
    /// Local name of its type (`string`, `order`), empty when anonymous.
    pub ty: String,
    /// Whether the element is namespace-qualified: its `form`, else its
    /// schema's `elementFormDefault` (CXF's simple frontend qualifies the
    /// parameter and return elements of an unqualified schema).
    pub qualified: bool,
}

/// The scanned parts of a WSDL and its schemas.
#[derive(Debug, Default)]
pub struct Scan {
    /// Top-level element name → (schema namespace, qualified locals, type
    /// name or "" when anonymous, anonymous type's children).
    pub elements: HashMap<String, (String, bool, String, Vec<Child>)>,
    /// Named complex type → its sequence's children.
    pub types: HashMap<String, Vec<Child>>,
    /// Binding operation → SOAPAction (SOAP 1.1 bindings only).
    pub actions: HashMap<String, String>,
    pub soap11_binding: bool,
    pub soap12_binding: bool,
    /// `schemaLocation`s of imported or included schemas.
    pub imports: Vec<String>,
    /// The binding operation being read.
    pending_op: Option<String>,
}

fn attr(e: &BytesStart<'_>, name: &[u8]) -> Result<Option<String>, CallError> {
    for a in e.attributes() {
        let a = a.map_err(|e| xml_error("WSDL", e))?;
        if a.key.as_ref() == name {
            let v = a.unescape_value().map_err(|e| xml_error("WSDL", e))?;
            return Ok(Some(v.into_owned()));
        }
    }
    Ok(None)
}

fn local(qname: &str) -> String {
    qname.rsplit(':').next().unwrap_or(qname).to_owned()
}

/// Where a `xs:element` inside a sequence belongs.
#[derive(Clone, Debug)]
enum Owner {
    Type(String),
    Element(String),
}

impl Scan {
    /// Adds what `xml` (a WSDL or a schema document) declares.
    pub fn add(&mut self, xml: &[u8]) -> Result<(), CallError> {
        let mut reader = NsReader::from_reader(xml);
        reader.config_mut().trim_text(true);
        // Per open element: (namespace, local name).
        let mut stack: Vec<(Vec<u8>, Vec<u8>)> = Vec::new();
        // Per open xs:schema: (targetNamespace, qualified).
        let mut schemas: Vec<(String, bool, usize)> = Vec::new();
        // The complex type being read, and the depth of its xs:sequence.
        let mut owner: Option<(Owner, usize)> = None;
        loop {
            let (ns, event) = reader
                .read_resolved_event()
                .map_err(|e| xml_error("WSDL", e))?;
            let ns = match ns {
                ResolveResult::Bound(n) => n.as_ref().to_vec(),
                _ => Vec::new(),
            };
            let (start, empty) = match &event {
                Event::Start(e) => (Some(e.clone()), false),
                Event::Empty(e) => (Some(e.clone()), true),
                Event::End(_) => {
                    let depth = stack.len();
                    stack.pop();
                    if schemas.last().is_some_and(|s| s.2 == depth) {
                        schemas.pop();
                    }
                    if owner.as_ref().is_some_and(|(_, d)| *d >= depth) {
                        owner = None;
                    }
                    continue;
                }
                Event::Eof => break,
                _ => continue,
            };
            let Some(e) = start else { continue };
            let name = e.local_name().as_ref().to_vec();
            let depth = stack.len() + 1;
            let parent = stack.last().map(|(n, l)| (n.as_slice(), l.as_slice()));
            if ns == XSD_NS {
                match name.as_slice() {
                    b"schema" => {
                        let tns = attr(&e, b"targetNamespace")?.unwrap_or_default();
                        let q = attr(&e, b"elementFormDefault")?.as_deref() == Some("qualified");
                        if !empty {
                            schemas.push((tns, q, depth));
                        }
                    }
                    b"import" | b"include" => {
                        if let Some(loc) = attr(&e, b"schemaLocation")? {
                            self.imports.push(loc);
                        }
                    }
                    b"complexType" if parent == Some((XSD_NS, b"schema")) => {
                        if let Some(n) = attr(&e, b"name")? {
                            self.types.entry(n.clone()).or_default();
                            owner = Some((Owner::Type(n), depth + 1));
                        }
                    }
                    b"element" if parent == Some((XSD_NS, b"schema")) => {
                        if let (Some(n), Some((tns, q, _))) = (attr(&e, b"name")?, schemas.last()) {
                            let ty = attr(&e, b"type")?.map(|t| local(&t)).unwrap_or_default();
                            self.elements
                                .insert(n.clone(), (tns.clone(), *q, ty, Vec::new()));
                            if !empty {
                                // element / complexType / sequence / element
                                owner = Some((Owner::Element(n), depth + 2));
                            }
                        }
                    }
                    b"element" => {
                        if let Some((o, seq_depth)) = &owner {
                            // A direct child of the owner's sequence.
                            if depth == seq_depth + 1 && parent.is_some_and(|p| p.1 == b"sequence")
                            {
                                let default = schemas.last().is_some_and(|s| s.1);
                                let child = Child {
                                    name: attr(&e, b"name")?
                                        .or(attr(&e, b"ref")?.map(|r| local(&r)))
                                        .unwrap_or_default(),
                                    ty: attr(&e, b"type")?.map(|t| local(&t)).unwrap_or_default(),
                                    qualified: match attr(&e, b"form")?.as_deref() {
                                        Some("qualified") => true,
                                        Some("unqualified") => false,
                                        _ => default,
                                    },
                                };
                                match o {
                                    Owner::Type(t) => {
                                        self.types.entry(t.clone()).or_default().push(child)
                                    }
                                    Owner::Element(el) => {
                                        if let Some(entry) = self.elements.get_mut(el) {
                                            entry.3.push(child);
                                        }
                                    }
                                }
                            }
                        }
                    }
                    _ => {}
                }
            } else if ns == WSDL_SOAP11_NS || ns == WSDL_SOAP12_NS {
                let soap11 = ns == WSDL_SOAP11_NS;
                match name.as_slice() {
                    b"binding" => {
                        if soap11 {
                            self.soap11_binding = true;
                        } else {
                            self.soap12_binding = true;
                        }
                    }
                    b"operation" if soap11 => {
                        // wsdl:binding / wsdl:operation / soap:operation
                        let op = stack
                            .last()
                            .filter(|(n, l)| n == WSDL_NS && l == b"operation")
                            .and(self.pending_op.clone());
                        if let Some(op) = op {
                            self.actions
                                .insert(op, attr(&e, b"soapAction")?.unwrap_or_default());
                        }
                    }
                    _ => {}
                }
            } else if ns == WSDL_NS && name == b"operation" {
                let in_binding = stack
                    .last()
                    .is_some_and(|(n, l)| n == WSDL_NS && l == b"binding");
                self.pending_op = if in_binding { attr(&e, b"name")? } else { None };
            }
            if !empty {
                stack.push((ns, name));
            }
        }
        Ok(())
    }
}

/// Builds the operations' envelopes' names from a scan: the wrapper element
/// of each method (its Java name), the response wrapper (`<name>Response`),
/// their child elements, the Order's field order and the SOAPActions.
pub fn operations(scan: &Scan, wsdl: &str) -> Result<Vec<Operation>, CallError> {
    if !scan.soap11_binding {
        return Err(CallError::Config(format!(
            "the WSDL at {wsdl} has no SOAP 1.1 binding{}; this client speaks SOAP 1.1",
            if scan.soap12_binding {
                " (only SOAP 1.2)"
            } else {
                ""
            }
        )));
    }
    let children = |element: &str| -> Result<(String, Vec<Child>), CallError> {
        let (ns, _, ty, anonymous) = scan.elements.get(element).ok_or_else(|| {
            CallError::Config(format!(
                "the WSDL at {wsdl} declares no element `{element}`: not this contract's service, \
                 or not document/literal wrapped"
            ))
        })?;
        let kids = if ty.is_empty() {
            anonymous.clone()
        } else {
            scan.types.get(ty).cloned().ok_or_else(|| {
                CallError::Config(format!(
                    "the WSDL at {wsdl} declares element `{element}` of type `{ty}` but not the type"
                ))
            })?
        };
        Ok((ns.clone(), kids))
    };
    let mut order_fields: Option<(Vec<String>, bool)> = None;
    let mut ops = Vec::with_capacity(Method::ALL.len());
    for method in Method::ALL {
        let name = method.name();
        let (namespace, request) = children(name)?;
        let response_name = format!("{name}Response");
        let (_, response) = children(&response_name)?;
        let needs_arg = method != Method::Empty;
        // The one child of the request (the parameter) or of the response
        // (the return value); `empty` has neither.
        let first_child = |children: &[Child], element: &str, what: &str| {
            if !needs_arg {
                return Ok(Child::default());
            }
            children.first().cloned().ok_or_else(|| {
                CallError::Config(format!(
                    "the WSDL at {wsdl}: element `{element}` has no {what} element"
                ))
            })
        };
        let arg = first_child(&request, name, "parameter")?;
        let ret = first_child(&response, &response_name, "return")?;
        if needs_arg && arg.qualified != ret.qualified {
            return Err(CallError::Config(format!(
                "the WSDL at {wsdl}: `{name}` qualifies its parameter and its return differently; \
                 not supported"
            )));
        }
        if method == Method::EchoOrder {
            let fields = scan.types.get(&arg.ty).ok_or_else(|| {
                CallError::Config(format!(
                    "the WSDL at {wsdl} does not declare the Order type `{}`",
                    arg.ty
                ))
            })?;
            let names: Vec<String> = fields.iter().map(|c| c.name.clone()).collect();
            let mut sorted = names.clone();
            sorted.sort();
            let mut expected: Vec<String> = ORDER_FIELDS.iter().map(|s| s.to_string()).collect();
            expected.sort();
            if sorted != expected {
                return Err(CallError::Config(format!(
                    "the WSDL at {wsdl} declares the Order with fields {names:?}, not the contract's {ORDER_FIELDS:?}"
                )));
            }
            order_fields = Some((names, fields.iter().any(|c| c.qualified)));
        }
        ops.push(Operation {
            method,
            namespace,
            qualified: arg.qualified,
            fields_qualified: false,
            wrapper: name.to_owned(),
            arg: arg.name,
            response: response_name,
            ret: ret.name,
            soap_action: scan.actions.get(name).cloned().unwrap_or_default(),
            order_fields: Vec::new(),
        });
    }
    let (order_fields, fields_qualified) = order_fields.expect("echoOrder is in Method::ALL");
    for op in &mut ops {
        op.order_fields = order_fields.clone();
        op.fields_qualified = fields_qualified;
    }
    Ok(ops)
}
