//! Partial expectations and field matchers, the same for every generic
//! call (`grpc-generic`, `dubbo-generic`, `thrift-generic`).
//!
//! An expectation (`--expect`) compares every field of a reply. A field
//! that changes from call to call (a counter, a timestamp, a digest) would
//! make every reply wrong, so a user can say less:
//!
//! * **Partial** (`--expect-partial`, the protocols' `expect_partial=true`
//!   option): only the keys the expectation gives are compared, at every
//!   depth; a reply may carry any others.
//! * **Matchers**: in place of a value, an object of one `$` key:
//!   `{"$any": true}` (any value, or none), `{"$type": "string"}` (one of
//!   `string number integer boolean object array null`), `{"$regex":
//!   "^r-[0-9]+$"}` (a string, or a number's text, that the regular
//!   expression finds a match in), `{"$range": [1, 100]}` (a number, or a
//!   number's text such as proto3 JSON's 64-bit integers, from the first
//!   to the second, both included; `null` for no bound). Any other `$` key
//!   is refused before load starts, in one line that names it.
//!
//! Without either, the protocol's own exact comparison runs as before
//! (typed, with its fast paths: a reply whose bytes equal a verified one
//! is verified without decoding). With them, each reply is decoded, put in
//! the protocol's JSON form (the form a user writes `--expect` in) and
//! compared here: objects key by key, arrays element by element (the same
//! length), numbers by value (`5` equals `"5"`), a string holding
//! `{{.RequestNumber}}` with the call's number in it (the one template
//! value ([`crate::template`]) such an expectation may hold; any other
//! `{{...}}` is refused before load). Without
//! `--expect-partial`, a key the expectation leaves out must be absent or
//! empty in the reply (`null`, `0`, `""`, `false`, `[]`, `{}`: the
//! defaults proto3 and Java leave out), so matchers alone do not loosen
//! the rest of the comparison.

use crate::call_error::CallError;
use crate::error_text::shorten;
use regex::Regex;
use serde_json::{Map, Value as Json};
use std::collections::BTreeMap;

/// The option of `--expect-partial` (`expect_partial=true`), which every
/// generic call takes.
pub const PARTIAL_OPTION: &str = "expect_partial";

/// The expectation `expect` (the protocol's `expect` option, read) as
/// this module judges it, when it has matchers or `expect_partial` is
/// set; an unknown matcher, or `expect_partial` without an expectation,
/// is one line naming it, before any connection.
pub fn from_options(
    options: &BTreeMap<String, String>,
    expect: Option<&Json>,
    ignored: &'static [&'static str],
) -> Result<Option<Expectation>, CallError> {
    match expect {
        None => partial(options, false).map(|_| None),
        Some(json) => Expectation::of(json, partial(options, true)?, ignored)
            .map_err(|e| CallError::Config(format!("--expect: {e}"))),
    }
}

/// Whether `expect_partial` is set (`given`: whether there is an
/// expectation, which it needs); a value other than `true` or `false`, or
/// the option without an expectation, is one line naming it.
pub fn partial(options: &BTreeMap<String, String>, given: bool) -> Result<bool, CallError> {
    let partial = match options.get(PARTIAL_OPTION).map(String::as_str) {
        None | Some("false") => false,
        Some("true") => true,
        Some(other) => {
            return Err(CallError::Config(format!(
                "{PARTIAL_OPTION} is true or false, not `{other}`"
            )))
        }
    };
    if partial && !given {
        return Err(CallError::Config(
            "--expect-partial needs an expectation: --expect or --expect-file".into(),
        ));
    }
    Ok(partial)
}

/// The matchers, in one line, quoted by the error about an unknown one.
pub const MATCHERS: &str = "the matchers are {\"$any\": true}, {\"$type\": \"string|number|integer|boolean|object|array|null\"}, {\"$regex\": \"^a\"} and {\"$range\": [min, max]}";

/// The per-call number a template holds (the generic calls' one template
/// value).
const REQUEST_NUMBER: &str = "{{.RequestNumber}}";

/// An expectation with matchers or partial, ready to judge replies.
#[derive(Debug)]
pub struct Expectation {
    root: Node,
    partial: bool,
    /// Keys a reply may carry whatever the expectation says (Dubbo's
    /// `"class"` of a generalized POJO).
    ignored: &'static [&'static str],
}

#[derive(Debug)]
enum Node {
    /// A value compared as it is (a template string with the call's
    /// number).
    Exact(Json),
    Object(Vec<(String, Node)>),
    Array(Vec<Node>),
    Match(Matcher),
}

#[derive(Debug)]
enum Matcher {
    Any,
    Type(&'static str),
    Regex(Regex),
    Range(Option<f64>, Option<f64>),
}

const TYPES: [&str; 7] = [
    "string", "number", "integer", "boolean", "object", "array", "null",
];

impl Expectation {
    /// `json` as an expectation, when it needs this module: it holds a
    /// matcher, or `partial` is asked. `Ok(None)`: the protocol's exact
    /// comparison judges it. `ignored`: keys never compared. An unknown
    /// matcher or a malformed one is an error naming its path.
    pub fn of(
        json: &Json,
        partial: bool,
        ignored: &'static [&'static str],
    ) -> Result<Option<Expectation>, String> {
        let root = node(json, "")?;
        if !partial && !root.has_matcher() {
            return Ok(None);
        }
        other_template(json, "")?;
        Ok(Some(Expectation {
            root,
            partial,
            ignored,
        }))
    }

    /// `json` with every matcher replaced by `null`: what the protocol's
    /// own reader checks against the reply's type (field names, value
    /// types), so a misspelt field is refused before load as with an exact
    /// expectation.
    pub fn skeleton(json: &Json) -> Json {
        match json {
            Json::Object(map) if is_matcher(map) => Json::Null,
            Json::Object(map) => Json::Object(
                map.iter()
                    .map(|(k, v)| (k.clone(), Expectation::skeleton(v)))
                    .collect(),
            ),
            Json::Array(items) => Json::Array(items.iter().map(Expectation::skeleton).collect()),
            other => other.clone(),
        }
    }

    /// The first difference between this expectation and `got` (the
    /// reply in its protocol's JSON form) for call `n`, as `path: expected
    /// X, got Y`; `None`: the reply is the expected one.
    pub fn first_difference(&self, got: &Json, n: u64) -> Option<String> {
        self.compare(&self.root, Some(got), n, "")
    }

    fn compare(&self, want: &Node, got: Option<&Json>, n: u64, path: &str) -> Option<String> {
        let at = |what: String| {
            Some(if path.is_empty() {
                what
            } else {
                format!("{path}: {what}")
            })
        };
        match (want, got) {
            (Node::Match(m), got) => m.fails(got).and_then(at),
            (Node::Exact(Json::Null), None | Some(Json::Null)) => None,
            (_, None) => at(format!("expected {}, got no entry", want.shown(n))),
            (Node::Exact(e), Some(g)) => (!equal(e, g, n))
                .then(|| format!("expected {}, got {}", want.shown(n), cut(g)))
                .and_then(at),
            (Node::Array(items), Some(Json::Array(got))) => {
                first_element_difference(items, got, path, |w, g, path| {
                    self.compare(w, Some(g), n, path)
                })
            }
            (Node::Object(fields), Some(Json::Object(got))) => {
                let here = |key: &str| {
                    if path.is_empty() {
                        key.to_owned()
                    } else {
                        format!("{path}.{key}")
                    }
                };
                let given = |key: &str| fields.iter().any(|(k, _)| same_key(k, key));
                fields
                    .iter()
                    .find_map(|(key, w)| self.compare(w, entry(got, key), n, &here(key)))
                    .or_else(|| {
                        if self.partial {
                            return None;
                        }
                        got.iter()
                            .find(|(k, v)| {
                                !given(k) && !self.ignored.contains(&k.as_str()) && !empty(v)
                            })
                            .map(|(k, v)| format!("{}: expected no entry, got {}", here(k), cut(v)))
                    })
            }
            (_, Some(g)) => at(format!("expected {}, got {}", want.shown(n), cut(g))),
        }
    }
}

impl Node {
    fn has_matcher(&self) -> bool {
        match self {
            Node::Match(_) => true,
            Node::Exact(_) => false,
            Node::Object(fields) => fields.iter().any(|(_, n)| n.has_matcher()),
            Node::Array(items) => items.iter().any(Node::has_matcher),
        }
    }

    /// The expectation as an error shows it.
    fn shown(&self, n: u64) -> String {
        match self {
            Node::Exact(Json::String(s)) => {
                format!("{:?}", s.replace(REQUEST_NUMBER, &n.to_string()))
            }
            Node::Exact(v) => cut(v),
            Node::Object(_) => "an object".into(),
            Node::Array(items) => format!("{} elements", items.len()),
            Node::Match(_) => "a match".into(),
        }
    }
}

impl Matcher {
    /// Why `got` does not match, or `None`.
    fn fails(&self, got: Option<&Json>) -> Option<String> {
        let shown = got.map_or_else(|| "no entry".to_owned(), cut);
        let ok = match (self, got) {
            (Matcher::Any, _) => true,
            (Matcher::Type(ty), Some(g)) => type_of(g).contains(ty),
            (Matcher::Regex(re), Some(Json::String(s))) => re.is_match(s),
            (Matcher::Regex(re), Some(Json::Number(x))) => re.is_match(&x.to_string()),
            (Matcher::Range(lo, hi), Some(g)) => number(g)
                .is_some_and(|x| lo.is_none_or(|lo| x >= lo) && hi.is_none_or(|hi| x <= hi)),
            _ => false,
        };
        (!ok).then(|| match self {
            Matcher::Any => unreachable!("any value matches"),
            Matcher::Type(ty) => format!("expected a value of type {ty}, got {shown}"),
            Matcher::Regex(re) => format!("expected a match of /{re}/, got {shown}"),
            Matcher::Range(lo, hi) => format!(
                "expected a number in [{}, {}], got {shown}",
                lo.map_or("-inf".into(), |v| v.to_string()),
                hi.map_or("inf".into(), |v| v.to_string())
            ),
        })
    }
}

/// The first difference of two lists, element by element (`compare` with
/// each pair and its path `path[i]`), or their lengths' if those differ:
/// how an expectation and the generic protocols' own value types walk a
/// list.
pub(crate) fn first_element_difference<E, G>(
    expected: &[E],
    got: &[G],
    path: &str,
    compare: impl Fn(&E, &G, &str) -> Option<String>,
) -> Option<String> {
    if let Some(lengths) = length_difference(path, expected.len(), got.len()) {
        return Some(lengths);
    }
    expected
        .iter()
        .zip(got)
        .enumerate()
        .find_map(|(i, (e, g))| compare(e, g, &format!("{path}[{i}]")))
}

/// `path: expected N elements, got M` where two collections' sizes differ
/// (without `path: ` at the root), the one wording of every comparison.
pub(crate) fn length_difference(path: &str, expected: usize, got: usize) -> Option<String> {
    let what = format!("expected {expected} elements, got {got}");
    match (expected == got, path.is_empty()) {
        (true, _) => None,
        (false, true) => Some(what),
        (false, false) => Some(format!("{path}: {what}")),
    }
}

/// The expectation's tree, each `$` object read as a matcher.
fn node(json: &Json, path: &str) -> Result<Node, String> {
    let here = |key: &str| {
        if path.is_empty() {
            key.to_owned()
        } else {
            format!("{path}.{key}")
        }
    };
    Ok(match json {
        Json::Object(map) if map.keys().any(|k| k.starts_with('$')) => {
            Node::Match(matcher(map).map_err(|e| {
                let at = if path.is_empty() { "the reply" } else { path };
                format!("{at}: {e}")
            })?)
        }
        Json::Object(map) => Node::Object(
            map.iter()
                .map(|(k, v)| Ok((k.clone(), node(v, &here(k))?)))
                .collect::<Result<_, String>>()?,
        ),
        Json::Array(items) => Node::Array(
            items
                .iter()
                .enumerate()
                .map(|(i, v)| node(v, &format!("{path}[{i}]")))
                .collect::<Result<_, _>>()?,
        ),
        other => Node::Exact(other.clone()),
    })
}

/// The first string of `json` that holds a template value other than
/// `{{.RequestNumber}}`, which an expectation judged here cannot hold (an
/// exact one goes to the protocol, which renders them all).
fn other_template(json: &Json, path: &str) -> Result<(), String> {
    let here = |key: &str| {
        if path.is_empty() {
            key.to_owned()
        } else {
            format!("{path}.{key}")
        }
    };
    match json {
        Json::String(text) if text.replace(REQUEST_NUMBER, "").contains("{{") => {
            let at = if path.is_empty() { "the reply" } else { path };
            Err(format!(
                "{at}: `{text}`: with matchers or --expect-partial, {REQUEST_NUMBER} is the one \
                 template value an expectation may hold"
            ))
        }
        Json::Object(map) => map
            .iter()
            .try_for_each(|(k, v)| other_template(v, &here(k))),
        Json::Array(items) => items
            .iter()
            .enumerate()
            .try_for_each(|(i, v)| other_template(v, &format!("{path}[{i}]"))),
        _ => Ok(()),
    }
}

fn is_matcher(map: &Map<String, Json>) -> bool {
    map.keys().any(|k| k.starts_with('$'))
}

fn matcher(map: &Map<String, Json>) -> Result<Matcher, String> {
    let mut entries = map.iter();
    let (Some((key, arg)), None) = (entries.next(), entries.next()) else {
        return Err(format!("a matcher is an object of one $ key; {MATCHERS}"));
    };
    match (key.as_str(), arg) {
        ("$any", Json::Bool(true)) => Ok(Matcher::Any),
        ("$type", Json::String(t)) => match TYPES.iter().find(|ty| *ty == t) {
            Some(ty) => Ok(Matcher::Type(ty)),
            None => Err(format!("unknown $type `{t}`; {MATCHERS}")),
        },
        ("$regex", Json::String(re)) => Regex::new(re).map(Matcher::Regex).map_err(|e| {
            format!(
                "$regex `{re}` does not compile: {}",
                one_line(&e.to_string())
            )
        }),
        ("$range", Json::Array(bounds)) if bounds.len() == 2 => {
            let bound = |b: &Json| match b {
                Json::Null => Ok(None),
                b => b.as_f64().map(Some).ok_or(()),
            };
            match (bound(&bounds[0]), bound(&bounds[1])) {
                (Ok(lo), Ok(hi)) if lo.zip(hi).is_none_or(|(lo, hi)| lo <= hi) => {
                    Ok(Matcher::Range(lo, hi))
                }
                _ => Err(format!(
                    "$range takes [min, max], numbers or null with min <= max; {MATCHERS}"
                )),
            }
        }
        ("$any" | "$type" | "$regex" | "$range", _) => {
            Err(format!("`{key}` with a value it does not take; {MATCHERS}"))
        }
        _ => Err(format!("unknown matcher `{key}`; {MATCHERS}")),
    }
}

fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// A reply's entry for an expectation's key: as written, else in proto3
/// JSON's lowerCamelCase (`request_id` finds `requestId`).
fn entry<'a>(got: &'a Map<String, Json>, key: &str) -> Option<&'a Json> {
    got.get(key).or_else(|| got.get(&camel(key)))
}

fn same_key(expected: &str, got: &str) -> bool {
    expected == got || camel(expected) == got
}

fn camel(key: &str) -> String {
    let mut out = String::with_capacity(key.len());
    let mut upper = false;
    for c in key.chars() {
        if c == '_' {
            upper = true;
        } else if upper {
            out.extend(c.to_uppercase());
            upper = false;
        } else {
            out.push(c);
        }
    }
    out
}

/// Whether an exact expectation `e` equals `g` for call `n`: numbers by
/// value, a number's text equal to the number, templates with `n`.
fn equal(e: &Json, g: &Json, n: u64) -> bool {
    match (e, g) {
        (Json::String(e), g) if e.contains(REQUEST_NUMBER) => {
            let e = Json::String(e.replace(REQUEST_NUMBER, &n.to_string()));
            equal(&e, g, n)
        }
        (Json::Number(_), _) | (_, Json::Number(_)) => {
            number(e).zip(number(g)).is_some_and(|(a, b)| a == b)
        }
        (Json::Array(e), Json::Array(g)) => {
            e.len() == g.len() && e.iter().zip(g).all(|(e, g)| equal(e, g, n))
        }
        (Json::Object(e), Json::Object(g)) => {
            e.len() == g.len()
                && e.iter()
                    .all(|(k, v)| g.get(k).is_some_and(|w| equal(v, w, n)))
        }
        (e, g) => e == g,
    }
}

/// A number, or a string that is one (proto3 JSON writes 64-bit integers
/// as strings).
fn number(v: &Json) -> Option<f64> {
    match v {
        Json::Number(x) => x.as_f64(),
        Json::String(s) => s.parse::<f64>().ok().filter(|x| x.is_finite()),
        _ => None,
    }
}

/// The `$type` names a value has (an integer is a number too).
fn type_of(v: &Json) -> &'static [&'static str] {
    match v {
        Json::Null => &["null"],
        Json::Bool(_) => &["boolean"],
        Json::Number(x) if x.is_i64() || x.is_u64() => &["integer", "number"],
        Json::Number(_) => &["number"],
        Json::String(_) => &["string"],
        Json::Array(_) => &["array"],
        Json::Object(_) => &["object"],
    }
}

/// A reply's value left out of an exact expectation is fine when empty.
fn empty(v: &Json) -> bool {
    match v {
        Json::Null => true,
        Json::Bool(b) => !b,
        Json::Number(x) => x.as_f64() == Some(0.0),
        Json::String(s) => s.is_empty() || s == "0",
        Json::Array(a) => a.is_empty(),
        Json::Object(o) => o.is_empty(),
    }
}

/// A value as an error shows it, cut to 60 characters.
fn cut(v: &Json) -> String {
    shorten(v.to_string(), 60)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use serde_json::json;

    fn of(json: Json, partial: bool) -> Expectation {
        Expectation::of(&json, partial, &["class"])
            .unwrap()
            .unwrap()
    }

    #[test]
    fn without_matchers_or_partial_the_protocol_compares() {
        assert!(Expectation::of(&json!({"a": 1, "b": [2]}), false, &[])
            .unwrap()
            .is_none());
    }

    #[test]
    fn a_partial_expectation_compares_only_the_keys_it_gives() {
        let e = of(json!({"status": "RESERVED", "total": {"units": 5}}), true);
        let reply =
            json!({"status": "RESERVED", "total": {"units": "5", "currency": "EUR"}, "id": "x-7"});
        assert_eq!(e.first_difference(&reply, 7), None);
        let reply = json!({"status": "PARTIAL", "total": {"units": 5}});
        assert_eq!(
            e.first_difference(&reply, 7).unwrap(),
            "status: expected \"RESERVED\", got \"PARTIAL\""
        );
        assert_eq!(
            e.first_difference(&json!({"status": "RESERVED"}), 7)
                .unwrap(),
            "total: expected an object, got no entry"
        );
    }

    #[test]
    fn matchers_judge_their_field_and_the_rest_stays_exact() {
        let e = of(
            json!({
                "id": {"$regex": "^r-[0-9]+$"},
                "seq": {"$range": [0, null]},
                "at": {"$any": true},
                "name": {"$type": "string"},
                "n": "{{.RequestNumber}}",
                "lines": [{"sku": "a", "reserved": {"$range": [1, 100]}}]
            }),
            false,
        );
        let reply = |id: &str, reserved: i64, extra: Json| {
            let mut r = json!({"id": id, "seq": "12", "at": 1733, "name": "ada", "n": 3,
                "lines": [{"sku": "a", "reserved": reserved}], "class": "a.B", "zero": 0});
            r.as_object_mut()
                .unwrap()
                .extend(extra.as_object().unwrap().clone());
            r
        };
        assert_eq!(e.first_difference(&reply("r-1", 5, json!({})), 3), None);
        assert_eq!(
            e.first_difference(&reply("x-1", 5, json!({})), 3).unwrap(),
            "id: expected a match of /^r-[0-9]+$/, got \"x-1\""
        );
        assert_eq!(
            e.first_difference(&reply("r-1", 101, json!({})), 3)
                .unwrap(),
            "lines[0].reserved: expected a number in [1, 100], got 101"
        );
        assert_eq!(
            e.first_difference(&reply("r-1", 5, json!({})), 4).unwrap(),
            "n: expected \"4\", got 3"
        );
        assert_eq!(
            e.first_difference(&reply("r-1", 5, json!({"extra": "x"})), 3)
                .unwrap(),
            "extra: expected no entry, got \"x\"",
            "not partial: a key left out must be empty"
        );
        assert_eq!(
            e.first_difference(&reply("r-1", 5, json!({"name": 7})), 3)
                .unwrap(),
            "name: expected a value of type string, got 7"
        );
    }

    #[test]
    fn a_matcher_it_does_not_know_is_one_line_naming_it() {
        for (bad, says) in [
            (
                json!({"a": {"$anything": true}}),
                "a: unknown matcher `$anything`",
            ),
            (
                json!({"a": [{"$type": "text"}]}),
                "a[0]: unknown $type `text`",
            ),
            (
                json!({"a": {"$regex": "("}}),
                "a: $regex `(` does not compile",
            ),
            (
                json!({"a": {"$range": [5, 1]}}),
                "a: $range takes [min, max]",
            ),
            (
                json!({"a": {"$any": true, "b": 1}}),
                "a: a matcher is an object of one $ key",
            ),
            (
                json!({"$any": 1}),
                "the reply: `$any` with a value it does not take",
            ),
            (
                json!({"a": "{{.WorkerID}}", "b": {"$any": true}}),
                "a: `{{.WorkerID}}`: with matchers or --expect-partial",
            ),
        ] {
            let e = Expectation::of(&bad, false, &[]).unwrap_err();
            assert!(e.starts_with(says), "{e}");
            assert!(
                e.contains(MATCHERS)
                    || e.contains("does not compile")
                    || e.contains(REQUEST_NUMBER),
                "{e}"
            );
            assert!(!e.contains('\n'), "{e}");
        }
    }

    #[test]
    fn the_skeleton_has_nulls_where_the_matchers_were() {
        assert_eq!(
            Expectation::skeleton(
                &json!({"a": {"$any": true}, "b": [{"c": {"$regex": "x"}}], "d": 1})
            ),
            json!({"a": null, "b": [{"c": null}], "d": 1})
        );
    }

    proptest! {
        /// Every reply is its own partial and exact expectation, and `$any`
        /// at the top matches anything.
        #[test]
        fn a_value_matches_itself(v in json_value()) {
            let exact = Expectation { root: node(&v, "").unwrap(), partial: false, ignored: &[] };
            prop_assert_eq!(exact.first_difference(&v, 0), None);
            let any = of(json!({"$any": true}), false);
            prop_assert_eq!(any.first_difference(&v, 0), None);
        }
    }

    fn json_value() -> impl Strategy<Value = Json> {
        let leaf = prop_oneof![
            Just(Json::Null),
            any::<bool>().prop_map(Json::Bool),
            any::<i64>().prop_map(|n| json!(n)),
            "[a-z]{0,6}".prop_map(Json::String),
        ];
        leaf.prop_recursive(3, 24, 4, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..4).prop_map(Json::Array),
                prop::collection::btree_map("[a-z]{1,4}", inner, 0..4)
                    .prop_map(|m| Json::Object(m.into_iter().collect())),
            ]
        })
    }
}
