//! ghz's template values in the text a generic call sends (request data,
//! metadata): parsed once into [`Text`] segments, rendered per call from
//! [`CallValues`] without parsing anything again.
//!
//! ghz runs Go's `text/template` over the whole JSON on every call; rpclab
//! parses each string once, and a string without a template action stays
//! a literal, so a message without one is still encoded once. The values
//! are ghz's:
//!
//! | action | value |
//! | --- | --- |
//! | `{{.RequestNumber}}` | the call's number: 0, 1, … across every connection |
//! | `{{.WorkerID}}` | the number of the connection that makes the call (ghz's is its worker's name) |
//! | `{{.FullyQualifiedName}}`, `{{.MethodName}}`, `{{.ServiceName}}`, `{{.InputName}}`, `{{.OutputName}}`, `{{.IsClientStreaming}}`, `{{.IsServerStreaming}}` | the method's, fixed for a run: written in when the text is parsed |
//! | `{{.Timestamp}}` | the call's time, RFC 3339 in UTC (`2026-12-07T01:02:03Z`) |
//! | `{{.TimestampUnix}}`, `{{.TimestampUnixMilli}}`, `{{.TimestampUnixNano}}` | the call's time since the Unix epoch in s, ms, ns |
//! | `{{.UUID}}` | a version-4 UUID, one per call |
//! | `{{randomString N}}` | N random letters and digits; N ≤ 0: a random length from 2 to 16 |
//! | `{{randomInt MIN MAX}}` | a random integer in [MIN, MAX) (MIN when MAX ≤ MIN) |
//!
//! Anything else between `{{` and `}}` is an error that names it, before
//! any load starts, as is a `{{` without its `}}`.
//!
//! # Rendering twice, the same
//!
//! A protobuf field's length comes before its bytes, so a text is measured
//! ([`Text::len`]) and then written ([`Text::write`]). Both read the same
//! [`CallValues`]: the time and the UUID are taken once per call, and each
//! random action draws from a generator seeded by the call's seed and the
//! action's own number ([`Segment::Value`]'s `slot`), so measuring and
//! writing, in any order, see the same draws, and two `{{randomString 8}}`
//! in one call still differ.

use crate::error_text::shorten;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

/// What ghz knows of the method beside the call: written into a text when
/// it is parsed.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Method {
    /// `package.Service.Method`.
    pub fully_qualified_name: String,
    pub method_name: String,
    /// The service's name without its package, as ghz gives it.
    pub service_name: String,
    pub input_name: String,
    pub output_name: String,
    pub client_streaming: bool,
    pub server_streaming: bool,
}

/// A value that changes from call to call.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Value {
    RequestNumber,
    WorkerId,
    Timestamp,
    TimestampUnix,
    TimestampUnixMilli,
    TimestampUnixNano,
    Uuid,
    /// `randomString N` (N ≤ 0: a random length from 2 to 16).
    RandomString(i64),
    /// `randomInt MIN MAX`: in [MIN, MAX).
    RandomInt(i64, i64),
}

impl Value {
    /// Whether the value follows from the call's number and connection
    /// alone, so that an expected reply may hold it.
    pub fn is_reproducible(self) -> bool {
        matches!(self, Value::RequestNumber | Value::WorkerId)
    }

    /// The value as an integer, for an integer field whose whole value is
    /// this action; `None` for the values that are text.
    /// (An `i128` holds every value: a call's number is a `u64`, a random
    /// one an `i64`; an integer field takes its low bits.)
    pub fn integer(self, call: &CallValues, slot: u32) -> Option<i128> {
        Some(match self {
            Value::RequestNumber => i128::from(call.number),
            Value::WorkerId => i128::from(call.worker),
            Value::TimestampUnix => call.clock().unix_nanos.div_euclid(1_000_000_000),
            Value::TimestampUnixMilli => call.clock().unix_nanos.div_euclid(1_000_000),
            Value::TimestampUnixNano => call.clock().unix_nanos,
            Value::RandomInt(min, max) => i128::from(random_int(&mut call.rng(slot), min, max)),
            Value::Timestamp | Value::Uuid | Value::RandomString(_) => return None,
        })
    }

    /// What a value needs taken once per call.
    pub fn needs(self) -> Needs {
        match self {
            Value::Timestamp
            | Value::TimestampUnix
            | Value::TimestampUnixMilli
            | Value::TimestampUnixNano => Needs::CLOCK,
            Value::Uuid => Needs::UUID,
            _ => Needs::NONE,
        }
    }

    /// The action as written, for the report and errors.
    pub fn written(self) -> String {
        match self {
            Value::RequestNumber => "{{.RequestNumber}}".into(),
            Value::WorkerId => "{{.WorkerID}}".into(),
            Value::Timestamp => "{{.Timestamp}}".into(),
            Value::TimestampUnix => "{{.TimestampUnix}}".into(),
            Value::TimestampUnixMilli => "{{.TimestampUnixMilli}}".into(),
            Value::TimestampUnixNano => "{{.TimestampUnixNano}}".into(),
            Value::Uuid => "{{.UUID}}".into(),
            Value::RandomString(n) => format!("{{{{randomString {n}}}}}"),
            Value::RandomInt(min, max) => format!("{{{{randomInt {min} {max}}}}}"),
        }
    }
}

/// A part of a text: as written, or a value of the call.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Segment {
    Literal(String),
    /// `slot`: this action's own number, which seeds its random draws.
    Value {
        value: Value,
        slot: u32,
    },
}

/// What a call must take once before its texts are rendered.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Needs(u8);

impl Needs {
    pub const NONE: Needs = Needs(0);
    const CLOCK: Needs = Needs(1);
    const UUID: Needs = Needs(2);

    pub fn union(self, other: Needs) -> Needs {
        Needs(self.0 | other.0)
    }

    fn has(self, other: Needs) -> bool {
        self.0 & other.0 != 0
    }
}

/// A string parsed once: literals and the values of each call.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Text {
    segments: Vec<Segment>,
}

/// Every action gets its own number, whichever text it is in.
static SLOTS: AtomicU32 = AtomicU32::new(0);

/// The functions and values a text may hold, for the error that names an
/// unknown one.
const KNOWN: &str = "{{.RequestNumber}}, {{.WorkerID}}, {{.FullyQualifiedName}}, {{.MethodName}}, \
    {{.ServiceName}}, {{.InputName}}, {{.OutputName}}, {{.IsClientStreaming}}, \
    {{.IsServerStreaming}}, {{.Timestamp}}, {{.TimestampUnix}}, {{.TimestampUnixMilli}}, \
    {{.TimestampUnixNano}}, {{.UUID}}, {{randomString N}}, {{randomInt MIN MAX}}";

impl Text {
    /// Parses `text`, writing in the values `method` fixes. An action that
    /// is not one of ghz's, or a `{{` without `}}`, is an error naming it.
    pub fn parse(text: &str, method: &Method) -> Result<Text, String> {
        let mut segments: Vec<Segment> = Vec::new();
        let mut literal = String::new();
        let mut rest = text;
        while let Some(open) = rest.find("{{") {
            literal.push_str(&rest[..open]);
            let after = &rest[open + 2..];
            let Some(close) = after.find("}}") else {
                return Err(format!("`{}` has a `{{{{` without its `}}}}`", shown(text)));
            };
            let action = after[..close].trim();
            rest = &after[close + 2..];
            match action_of(action, method)? {
                Action::Fixed(text) => literal.push_str(&text),
                Action::Value(value) => {
                    if !literal.is_empty() {
                        segments.push(Segment::Literal(std::mem::take(&mut literal)));
                    }
                    segments.push(Segment::Value {
                        value,
                        slot: SLOTS.fetch_add(1, Ordering::Relaxed),
                    });
                }
            }
        }
        literal.push_str(rest);
        if !literal.is_empty() || segments.is_empty() {
            segments.push(Segment::Literal(literal));
        }
        Ok(Text { segments })
    }

    /// The text when it is the same on every call.
    pub fn fixed(&self) -> Option<&str> {
        match self.segments.as_slice() {
            [Segment::Literal(s)] => Some(s),
            _ => None,
        }
    }

    /// The value when the whole text is one action (an integer field's
    /// value), with its slot.
    pub fn sole_value(&self) -> Option<(Value, u32)> {
        match self.segments.as_slice() {
            [Segment::Value { value, slot }] => Some((*value, *slot)),
            _ => None,
        }
    }

    pub fn segments(&self) -> &[Segment] {
        &self.segments
    }

    /// The values in this text, in order.
    pub fn values(&self) -> impl Iterator<Item = Value> + '_ {
        self.segments.iter().filter_map(|s| match s {
            Segment::Value { value, .. } => Some(*value),
            Segment::Literal(_) => None,
        })
    }

    /// What a call must take before rendering this text.
    pub fn needs(&self) -> Needs {
        self.values().fold(Needs::NONE, |n, v| n.union(v.needs()))
    }

    /// The text as written back (with the method's values in it), for the
    /// report.
    pub fn written(&self) -> String {
        self.segments
            .iter()
            .map(|s| match s {
                Segment::Literal(s) => s.clone(),
                Segment::Value { value, .. } => value.written(),
            })
            .collect()
    }

    /// The length of this text rendered for `call`.
    pub fn len(&self, call: &CallValues) -> usize {
        self.segments
            .iter()
            .map(|s| match s {
                Segment::Literal(s) => s.len(),
                Segment::Value { value, slot } => value_len(*value, *slot, call),
            })
            .sum()
    }

    pub fn is_empty(&self) -> bool {
        self.fixed().is_some_and(str::is_empty)
    }

    /// Writes this text rendered for `call`.
    pub fn write(&self, call: &CallValues, out: &mut impl Out) {
        for segment in &self.segments {
            match segment {
                Segment::Literal(s) => out.put(s.as_bytes()),
                Segment::Value { value, slot } => write_value(*value, *slot, call, out),
            }
        }
    }

    /// This text rendered for `call`, as a string (the generic Dubbo and
    /// Thrift calls, whose values are built per call).
    pub fn render(&self, call: &CallValues) -> String {
        let mut out = Vec::with_capacity(self.len(call));
        self.write(call, &mut out);
        String::from_utf8(out).expect("literals and values are UTF-8")
    }
}

/// Where a rendered text goes.
pub trait Out {
    fn put(&mut self, bytes: &[u8]);
}

impl Out for Vec<u8> {
    fn put(&mut self, bytes: &[u8]) {
        self.extend_from_slice(bytes);
    }
}

impl Out for bytes::BytesMut {
    fn put(&mut self, bytes: &[u8]) {
        self.extend_from_slice(bytes);
    }
}

/// A parsed action.
enum Action {
    Fixed(String),
    Value(Value),
}

fn action_of(action: &str, method: &Method) -> Result<Action, String> {
    let fixed = |s: &str| Ok(Action::Fixed(s.to_owned()));
    let value = |v| Ok(Action::Value(v));
    match action {
        ".RequestNumber" => value(Value::RequestNumber),
        ".WorkerID" => value(Value::WorkerId),
        ".Timestamp" => value(Value::Timestamp),
        ".TimestampUnix" => value(Value::TimestampUnix),
        ".TimestampUnixMilli" => value(Value::TimestampUnixMilli),
        ".TimestampUnixNano" => value(Value::TimestampUnixNano),
        ".UUID" => value(Value::Uuid),
        ".FullyQualifiedName" => fixed(&method.fully_qualified_name),
        ".MethodName" => fixed(&method.method_name),
        ".ServiceName" => fixed(&method.service_name),
        ".InputName" => fixed(&method.input_name),
        ".OutputName" => fixed(&method.output_name),
        ".IsClientStreaming" => fixed(if method.client_streaming {
            "true"
        } else {
            "false"
        }),
        ".IsServerStreaming" => fixed(if method.server_streaming {
            "true"
        } else {
            "false"
        }),
        _ => {
            let mut words = action.split_whitespace();
            let name = words.next().unwrap_or("");
            let args: Vec<&str> = words.collect();
            let int = |i: usize| -> Result<i64, String> {
                args[i].parse().map_err(|_| {
                    format!(
                        "`{{{{{action}}}}}`: {name}'s arguments are integers, not `{}`",
                        args[i]
                    )
                })
            };
            let arity = |n: usize, usage: &str| {
                if args.len() == n {
                    Ok(())
                } else {
                    Err(format!("`{{{{{action}}}}}`: write {usage}"))
                }
            };
            match name {
                "randomString" => {
                    arity(1, "{{randomString N}}")?;
                    value(Value::RandomString(int(0)?))
                }
                "randomInt" => {
                    arity(2, "{{randomInt MIN MAX}}")?;
                    value(Value::RandomInt(int(0)?, int(1)?))
                }
                _ => Err(format!(
                    "unknown template action `{{{{{action}}}}}`; use one of {KNOWN}"
                )),
            }
        }
    }
}

/// A text cut to 60 characters, for errors.
fn shown(text: &str) -> String {
    shorten(text.to_owned(), 60)
}

/// The time of a call, taken once.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Clock {
    pub unix_nanos: i128,
}

/// The numbers of a generic call's calls and connections, shared by all
/// its connections: the next call's `{{.RequestNumber}}`, the next
/// connection's `{{.WorkerID}}`, and whether the first connection, which
/// makes one verified call before anything is measured, has come.
#[derive(Debug, Default)]
pub struct Numbering {
    numbers: Arc<AtomicU64>,
    workers: AtomicU64,
    first_verified: AtomicBool,
}

impl Numbering {
    /// A new connection's numbers.
    pub fn worker(&self) -> Worker {
        Worker {
            numbers: Arc::clone(&self.numbers),
            id: self.workers.fetch_add(1, Ordering::Relaxed),
        }
    }

    /// Whether the connection asking is the first (true once): the one
    /// that makes the verified first call.
    pub fn first(&self) -> bool {
        !self.first_verified.swap(true, Ordering::AcqRel)
    }
}

/// One connection's numbers: its `{{.WorkerID}}` and the call numbers it
/// shares with the other connections ([`Numbering`]).
#[derive(Clone, Debug)]
pub struct Worker {
    numbers: Arc<AtomicU64>,
    id: u64,
}

impl Worker {
    /// The next call's number, 0, 1, … across every connection.
    pub fn next_number(&self) -> u64 {
        self.numbers.fetch_add(1, Ordering::Relaxed)
    }

    /// The values of call `n` on this connection ([`CallValues::new`]).
    pub fn values(&self, n: u64, needs: Needs) -> CallValues {
        CallValues::new(n, self.id, needs)
    }

    /// The next call's number and values.
    pub fn next(&self, needs: Needs) -> (u64, CallValues) {
        let n = self.next_number();
        (n, self.values(n, needs))
    }
}

/// What the values of one call are made of: its number, its connection,
/// its seed, and (when a text needs them) its time and UUID, taken once.
#[derive(Clone, Debug)]
pub struct CallValues {
    pub number: u64,
    pub worker: u64,
    seed: u64,
    clock: Option<Clock>,
    uuid: Option<[u8; 36]>,
}

impl CallValues {
    /// The values of call `number` on connection `worker`, with the time
    /// and UUID taken if `needs` says so.
    pub fn new(number: u64, worker: u64, needs: Needs) -> CallValues {
        let seed = fastrand::u64(..);
        let clock = needs.has(Needs::CLOCK).then(|| {
            let since = SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .unwrap_or_default();
            Clock {
                unix_nanos: since.as_nanos() as i128,
            }
        });
        let uuid = needs.has(Needs::UUID).then(|| uuid_v4(fastrand::u128(..)));
        CallValues {
            number,
            worker,
            seed,
            clock,
            uuid,
        }
    }

    /// Fixed values, for tests and for the texts of an expected reply.
    pub fn fixed(
        number: u64,
        worker: u64,
        seed: u64,
        unix_nanos: i128,
        uuid_bits: u128,
    ) -> CallValues {
        CallValues {
            number,
            worker,
            seed,
            clock: Some(Clock { unix_nanos }),
            uuid: Some(uuid_v4(uuid_bits)),
        }
    }

    fn clock(&self) -> Clock {
        self.clock.unwrap_or(Clock { unix_nanos: 0 })
    }

    /// The generator of action `slot` in this call.
    fn rng(&self, slot: u32) -> fastrand::Rng {
        fastrand::Rng::with_seed(self.seed ^ u64::from(slot).wrapping_mul(0x9E37_79B9_7F4A_7C15))
    }
}

/// Version 4, variant 1, lower-case hex with hyphens.
fn uuid_v4(bits: u128) -> [u8; 36] {
    let bits = (bits & !(0xF000 << 64) | (0x4000 << 64)) & !(0xC000 << 48) | (0x8000 << 48);
    let hex = b"0123456789abcdef";
    let mut out = [b'-'; 36];
    let mut nibble = 0;
    for (i, byte) in out.iter_mut().enumerate() {
        if [8, 13, 18, 23].contains(&i) {
            continue;
        }
        *byte = hex[((bits >> (124 - 4 * nibble)) & 0xF) as usize];
        nibble += 1;
    }
    out
}

const CHARSET: &[u8] = b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";

fn random_string_len(rng: &mut fastrand::Rng, n: i64) -> usize {
    if n <= 0 {
        rng.usize(2..=16)
    } else {
        n as usize
    }
}

fn random_int(rng: &mut fastrand::Rng, min: i64, max: i64) -> i64 {
    if max <= min {
        min
    } else {
        rng.i64(min..max)
    }
}

fn value_len(value: Value, slot: u32, call: &CallValues) -> usize {
    match value {
        Value::Timestamp => 20,
        Value::Uuid => 36,
        Value::RandomString(n) => random_string_len(&mut call.rng(slot), n),
        integer => {
            let v = integer.integer(call, slot).expect("an integer value");
            Digits::of(v).len()
        }
    }
}

fn write_value(value: Value, slot: u32, call: &CallValues, out: &mut impl Out) {
    match value {
        Value::Timestamp => out.put(&rfc3339(call.clock().unix_nanos)),
        Value::Uuid => out.put(call.uuid.as_ref().unwrap_or(&[b'0'; 36])),
        Value::RandomString(n) => {
            let mut rng = call.rng(slot);
            let len = random_string_len(&mut rng, n);
            let mut buf = [0u8; 64];
            let mut left = len;
            while left > 0 {
                let chunk = left.min(buf.len());
                for b in &mut buf[..chunk] {
                    *b = CHARSET[rng.usize(..CHARSET.len())];
                }
                out.put(&buf[..chunk]);
                left -= chunk;
            }
        }
        integer => {
            let v = integer.integer(call, slot).expect("an integer value");
            out.put(Digits::of(v).as_bytes());
        }
    }
}

/// `YYYY-MM-DDTHH:MM:SSZ` of a Unix time (the proleptic Gregorian
/// calendar, days to civil date as in Howard Hinnant's algorithm).
pub fn rfc3339(unix_nanos: i128) -> [u8; 20] {
    let secs = unix_nanos.div_euclid(1_000_000_000) as i64;
    let days = secs.div_euclid(86_400);
    let of_day = secs.rem_euclid(86_400);
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    let mut out = *b"0000-00-00T00:00:00Z";
    let mut put = |at: usize, width: usize, mut v: i64| {
        for i in (0..width).rev() {
            out[at + i] = b'0' + (v % 10) as u8;
            v /= 10;
        }
    };
    put(0, 4, year.clamp(0, 9999));
    put(5, 2, month);
    put(8, 2, day);
    put(11, 2, of_day / 3600);
    put(14, 2, of_day % 3600 / 60);
    put(17, 2, of_day % 60);
    out
}

/// The decimal digits of an integer, without an allocation.
pub struct Digits {
    buf: [u8; 40],
    start: usize,
}

impl Digits {
    pub fn of(v: i128) -> Digits {
        let mut buf = [0u8; 40];
        let mut start = 40;
        let mut n = v.unsigned_abs();
        loop {
            start -= 1;
            buf[start] = b'0' + (n % 10) as u8;
            n /= 10;
            if n == 0 {
                break;
            }
        }
        if v < 0 {
            start -= 1;
            buf[start] = b'-';
        }
        Digits { buf, start }
    }

    pub fn len(&self) -> usize {
        40 - self.start
    }

    pub fn is_empty(&self) -> bool {
        false
    }

    pub fn as_bytes(&self) -> &[u8] {
        &self.buf[self.start..]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn shop() -> Method {
        Method {
            fully_qualified_name: "shop.v1.Inventory.Reserve".into(),
            method_name: "Reserve".into(),
            service_name: "Inventory".into(),
            input_name: "ReserveRequest".into(),
            output_name: "ReserveReply".into(),
            client_streaming: false,
            server_streaming: false,
        }
    }

    fn render(text: &str, call: &CallValues) -> String {
        Text::parse(text, &shop()).unwrap().render(call)
    }

    fn at(number: u64) -> CallValues {
        // 2026-12-07T01:02:03.004005006Z
        CallValues::fixed(number, 3, 42, 1_796_605_323_004_005_006, 0)
    }

    #[test]
    fn the_methods_values_are_written_in_when_parsed() {
        let text = Text::parse(
            "{{.FullyQualifiedName}} {{ .MethodName }} {{.ServiceName}} {{.InputName}} \
             {{.OutputName}} {{.IsClientStreaming}} {{.IsServerStreaming}}",
            &shop(),
        )
        .unwrap();
        assert_eq!(
            text.fixed(),
            Some("shop.v1.Inventory.Reserve Reserve Inventory ReserveRequest ReserveReply false false")
        );
        assert_eq!(
            Text::parse("no action", &shop()).unwrap().fixed(),
            Some("no action")
        );
        assert_eq!(Text::parse("", &shop()).unwrap().fixed(), Some(""));
    }

    #[test]
    fn each_calls_values_are_rendered() {
        let call = at(7);
        assert_eq!(
            render("r-{{.RequestNumber}}-w{{.WorkerID}}", &call),
            "r-7-w3"
        );
        assert_eq!(render("{{.Timestamp}}", &call), "2026-12-07T01:02:03Z");
        assert_eq!(render("{{.TimestampUnix}}", &call), "1796605323");
        assert_eq!(render("{{.TimestampUnixMilli}}", &call), "1796605323004");
        assert_eq!(
            render("{{.TimestampUnixNano}}", &call),
            "1796605323004005006"
        );
        assert_eq!(
            render("{{.UUID}}", &CallValues::fixed(0, 0, 0, 0, u128::MAX)),
            "ffffffff-ffff-4fff-bfff-ffffffffffff"
        );
        assert_eq!(
            render("{{.UUID}}", &call),
            "00000000-0000-4000-8000-000000000000"
        );
        assert_eq!(
            render("{{.Timestamp}}", &CallValues::fixed(0, 0, 0, 0, 0)),
            "1970-01-01T00:00:00Z"
        );
        assert_eq!(
            render(
                "{{.Timestamp}}",
                &CallValues::fixed(0, 0, 0, 951_782_400_000_000_000, 0)
            ),
            "2000-02-29T00:00:00Z"
        );
    }

    #[test]
    fn unknown_actions_and_bad_arguments_are_one_line_that_names_them() {
        let error = |text: &str| Text::parse(text, &shop()).unwrap_err();
        let e = error("a {{randomFloat 1 2}}");
        assert!(
            e.starts_with(
                "unknown template action `{{randomFloat 1 2}}`; use one of {{.RequestNumber}}"
            ),
            "{e}"
        );
        assert!(!e.contains('\n'));
        assert!(error("{{.Nope}}").starts_with("unknown template action `{{.Nope}}`"));
        assert_eq!(
            error("{{randomInt 1}}"),
            "`{{randomInt 1}}`: write {{randomInt MIN MAX}}"
        );
        assert_eq!(
            error("{{randomString x}}"),
            "`{{randomString x}}`: randomString's arguments are integers, not `x`"
        );
        assert_eq!(
            error("a {{.UUID"),
            "`a {{.UUID` has a `{{` without its `}}`"
        );
    }

    #[test]
    fn random_functions_keep_ghzs_ranges() {
        for number in 0..200 {
            let call = CallValues::new(number, 0, Needs::NONE);
            let s = render("{{randomString 8}}", &call);
            assert_eq!(s.len(), 8);
            assert!(s.bytes().all(|b| CHARSET.contains(&b)), "{s}");
            let s = render("{{randomString 0}}", &call);
            assert!((2..=16).contains(&s.len()), "{s}");
            let n: i64 = render("{{randomInt 5 9}}", &call).parse().unwrap();
            assert!((5..9).contains(&n), "{n}");
            assert_eq!(render("{{randomInt 5 5}}", &call), "5");
            let n: i64 = render("{{randomInt -3 0}}", &call).parse().unwrap();
            assert!((-3..0).contains(&n), "{n}");
        }
        // Two actions in one call draw apart.
        let both = render(
            "{{randomString 16}}{{randomString 16}}",
            &CallValues::new(0, 0, Needs::NONE),
        );
        assert_ne!(both[..16], both[16..]);
    }

    #[test]
    fn only_reproducible_values_may_be_expected() {
        let reproducible = |t: &str| {
            Text::parse(t, &shop())
                .unwrap()
                .values()
                .all(Value::is_reproducible)
        };
        assert!(reproducible(
            "{{.RequestNumber}}/{{.WorkerID}}/{{.MethodName}}"
        ));
        assert!(!reproducible("{{.UUID}}"));
        assert!(!reproducible("{{randomInt 1 2}}"));
    }

    proptest! {
        /// Measuring and writing agree whatever the text and the call, and
        /// the literals come back as written.
        #[test]
        fn length_and_bytes_agree(
            parts in proptest::collection::vec(prop_oneof![
                "[a-z {}.-]{0,8}".prop_map(|s| s.replace("{{", "{")),
                Just("{{.RequestNumber}}".to_owned()),
                Just("{{.WorkerID}}".to_owned()),
                Just("{{.Timestamp}}".to_owned()),
                Just("{{.TimestampUnixNano}}".to_owned()),
                Just("{{.UUID}}".to_owned()),
                (-5i64..40).prop_map(|n| format!("{{{{randomString {n}}}}}")),
                (-9i64..9, -9i64..9).prop_map(|(a, b)| format!("{{{{randomInt {a} {b}}}}}")),
            ], 0..6),
            number in any::<u64>(),
            seed in any::<u64>(),
            nanos in 0i128..4_000_000_000_000_000_000,
        ) {
            let text = parts.concat();
            // A lone `{` next to an action may make `{{`; skip those.
            prop_assume!(Text::parse(&text, &shop()).is_ok());
            let parsed = Text::parse(&text, &shop()).unwrap();
            let call = CallValues::fixed(number, 1, seed, nanos, u128::from(seed));
            let rendered = parsed.render(&call);
            prop_assert_eq!(rendered.len(), parsed.len(&call));
            prop_assert_eq!(parsed.render(&call), rendered.clone());
            if parsed.fixed().is_some() {
                prop_assert_eq!(rendered, text);
            }
        }

        #[test]
        fn digits_are_decimal(v in any::<i128>()) {
            let digits = Digits::of(v);
            let text = v.to_string();
            prop_assert_eq!(digits.as_bytes(), text.as_bytes());
        }
    }
}
