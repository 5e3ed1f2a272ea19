//! Recording calls without locks.
//!
//! Each worker owns a [`WorkerStats`]: a latency histogram and failure
//! counters that only it touches, so recording a call is a few arithmetic
//! operations and never a lock or an allocation (the histogram auto-resizes
//! the rare time a new maximum needs a larger bucket array). The runner
//! merges the workers' stats once, after the measurement window.

use hdrhistogram::serialization::interval_log::IntervalLogWriterBuilder;
use hdrhistogram::serialization::V2DeflateSerializer;
use hdrhistogram::Histogram;
use rpclab_model::percentile::Percentile;
use rpclab_model::result::{Failures, Latency};
use rpclab_protocols::protocol::{CallError, Messages};
use std::collections::BTreeMap;
use std::sync::Mutex;
use std::time::{Duration, Instant, SystemTime};

/// Significant digits of every latency histogram (0.1% relative error).
pub const SIGNIFICANT_DIGITS: u8 = 3;

/// Latencies are recorded in microseconds.
pub fn new_histogram() -> Histogram<u64> {
    Histogram::new(SIGNIFICANT_DIGITS).expect("3 significant digits is a valid histogram")
}

fn micros(d: Duration) -> u64 {
    (d.as_micros() as u64).max(1)
}

/// What one worker saw during the measurement window.
#[derive(Debug)]
pub struct WorkerStats {
    pub latency: Histogram<u64>,
    pub ok: u64,
    pub failures: Failures,
    /// Open loop only: time from send to reply (the latency a closed loop
    /// would report), beside the corrected latency in `latency`.
    pub service: Histogram<u64>,
    /// Open loop only: how late each call was sent after it was due.
    pub send_lag: Histogram<u64>,
    /// Streaming calls only: the messages of the calls in `ok`, sent and
    /// received, and each received message's latency
    /// ([`Messages`]).
    pub messages_sent: u64,
    pub message_latency: Histogram<u64>,
    /// The current interval of the `.hlog` and its histogram; handed to the
    /// [`IntervalSink`] once per interval, never per call.
    interval: Option<(u64, Histogram<u64>)>,
}

impl Default for WorkerStats {
    fn default() -> Self {
        WorkerStats {
            latency: new_histogram(),
            ok: 0,
            failures: Failures::default(),
            service: new_histogram(),
            send_lag: new_histogram(),
            messages_sent: 0,
            message_latency: new_histogram(),
            interval: None,
        }
    }
}

impl WorkerStats {
    pub fn record_ok(&mut self, latency: Duration) {
        self.ok += 1;
        // Auto-resizing histograms accept any value; the error case cannot happen.
        let _ = self.latency.record(micros(latency));
    }

    /// Records a successful call that ended at `end`, in the interval log's
    /// current interval. The call is recorded once: each interval's
    /// histogram is added to `latency` when it is handed to the sink (once
    /// per worker per interval, and at [`WorkerStats::flush_interval`]), and
    /// then reused for the next interval.
    pub fn record_ok_at(&mut self, latency: Duration, end: Instant, sink: &IntervalSink) {
        self.ok += 1;
        let index = sink.index_of(end);
        match &mut self.interval {
            Some((i, h)) if *i == index => {
                let _ = h.record(micros(latency));
            }
            Some((i, h)) => {
                sink.add(*i, h);
                let _ = self.latency.add(&*h);
                h.reset();
                *i = index;
                let _ = h.record(micros(latency));
            }
            slot @ None => {
                let mut h = new_histogram();
                let _ = h.record(micros(latency));
                *slot = Some((index, h));
            }
        }
    }

    /// Records the messages of a streaming call recorded as ok (a unary
    /// call's are none): a count and a histogram record per message.
    pub fn record_messages(&mut self, messages: &Messages) {
        self.messages_sent += messages.sent;
        for latency in &messages.received {
            let _ = self.message_latency.record(micros(*latency));
        }
    }

    /// Messages received on the calls in `ok`.
    pub fn messages_received(&self) -> u64 {
        self.message_latency.len()
    }

    /// Records the open loop's two extra views of a call.
    pub fn record_open_loop(&mut self, service: Duration, send_lag: Duration) {
        let _ = self.service.record(micros(service));
        let _ = self.send_lag.record(send_lag.as_micros() as u64);
    }

    /// Hands the last partial interval to the sink.
    pub fn flush_interval(&mut self, sink: &IntervalSink) {
        if let Some((i, h)) = self.interval.take() {
            sink.add(i, &h);
            let _ = self.latency.add(&h);
        }
    }

    pub fn record_failure(&mut self, error: &CallError) {
        let f = &mut self.failures;
        let (counter, class) = match error {
            CallError::Timeout => (&mut f.timeout, "timeout"),
            CallError::Connect(_) => (&mut f.connect, "connect"),
            CallError::Io(_) => (&mut f.io, "io"),
            CallError::Protocol(_) | CallError::Config(_) => (&mut f.protocol, "protocol"),
            CallError::Server(_) => (&mut f.server_error, "server_error"),
            CallError::WrongResponse(_) => (&mut f.wrong_response, "wrong_response"),
        };
        *counter += 1;
        if *counter == 1 {
            f.examples.insert(class.to_owned(), error.to_string());
        }
    }

    pub fn merge(&mut self, other: WorkerStats) {
        self.ok += other.ok;
        let _ = self.latency.add(&other.latency);
        let _ = self.service.add(&other.service);
        let _ = self.send_lag.add(&other.send_lag);
        self.messages_sent += other.messages_sent;
        let _ = self.message_latency.add(&other.message_latency);
        let (a, b) = (&mut self.failures, other.failures);
        a.timeout += b.timeout;
        a.connect += b.connect;
        a.io += b.io;
        a.protocol += b.protocol;
        a.server_error += b.server_error;
        a.wrong_response += b.wrong_response;
        for (class, example) in b.examples {
            a.examples.entry(class).or_insert(example);
        }
    }
}

/// An interval's calls and percentiles, for a live view.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LastInterval {
    pub calls: u64,
    pub p50_us: f64,
    pub p99_us: f64,
}

/// The measurement window cut into fixed intervals, each the merge of every
/// worker's histogram for that interval: the source of the `.hlog` file.
#[derive(Debug)]
pub struct IntervalSink {
    start: Instant,
    start_wall: SystemTime,
    interval: Duration,
    intervals: Mutex<BTreeMap<u64, Histogram<u64>>>,
}

impl IntervalSink {
    pub fn new(start: Instant, interval: Duration) -> IntervalSink {
        IntervalSink {
            start,
            start_wall: SystemTime::now() - start.elapsed(),
            interval,
            intervals: Mutex::new(BTreeMap::new()),
        }
    }

    /// When the window (and the first interval) started.
    pub fn start(&self) -> Instant {
        self.start
    }

    fn index_of(&self, t: Instant) -> u64 {
        // In u64 nanoseconds (584 years), not u128: a 64-bit division per call.
        let since = t.saturating_duration_since(self.start).as_nanos() as u64;
        since / (self.interval.as_nanos() as u64).max(1)
    }

    fn add(&self, index: u64, h: &Histogram<u64>) {
        let mut map = self.intervals.lock().unwrap_or_else(|p| p.into_inner());
        match map.get_mut(&index) {
            Some(existing) => {
                let _ = existing.add(h);
            }
            None => {
                map.insert(index, h.clone());
            }
        }
    }

    /// The interval log in HdrHistogram's text format (V2 + DEFLATE, with
    /// version and legend lines), readable by HistogramLogAnalyzer. Values
    /// are microseconds; `MaxValueDivisor` 1000 makes `Interval_Max` read in
    /// milliseconds. The header is the hdrhistogram crate's own (comments,
    /// start and base time, divisor), so no line of it is written twice;
    /// the crate writes no legend, and the legend goes after the header as
    /// Java's `HistogramLogWriter` places it.
    pub fn to_hlog(&self, comment: &str) -> std::io::Result<Vec<u8>> {
        const LEGEND: &str = "\"StartTimestamp\",\"Interval_Length\",\"Interval_Max\",\"Interval_Compressed_Histogram\"\n";
        let map = self.intervals.lock().unwrap_or_else(|p| p.into_inner());
        let mut out = Vec::new();
        let mut serializer = V2DeflateSerializer::new();
        let mut writer = IntervalLogWriterBuilder::new()
            .add_comment(comment)
            .add_comment("[Histogram log format version 1.3]")
            .with_start_time(self.start_wall)
            .with_base_time(self.start_wall)
            .with_max_value_divisor(1000.0)
            .begin_log_with(&mut out, &mut serializer)?;
        for (index, h) in map.iter() {
            let start = self.interval * (*index as u32);
            writer
                .write_histogram(h, start, self.interval, None)
                .map_err(|e| std::io::Error::other(format!("{e:?}")))?;
        }
        drop(writer);
        let header: usize = out
            .split_inclusive(|&b| b == b'\n')
            .take_while(|line| line.first() == Some(&b'#'))
            .map(<[u8]>::len)
            .sum();
        out.splice(header..header, LEGEND.bytes());
        Ok(out)
    }

    /// The whole interval before the one `now` falls in, as the workers
    /// have handed it over so far (a live view's last second); `None`
    /// before the window's first interval has ended, or if it had no call.
    pub fn last_interval(&self, now: Instant) -> Option<LastInterval> {
        let index = self.index_of(now).checked_sub(1)?;
        let map = self.intervals.lock().unwrap_or_else(|p| p.into_inner());
        let h = map.get(&index).filter(|h| !h.is_empty())?;
        Some(LastInterval {
            calls: h.len(),
            p50_us: h.value_at_quantile(0.5) as f64,
            p99_us: h.value_at_quantile(0.99) as f64,
        })
    }

    /// Every interval merged: the whole window's histogram.
    pub fn merged(&self) -> Histogram<u64> {
        let map = self.intervals.lock().unwrap_or_else(|p| p.into_inner());
        let mut total = new_histogram();
        for h in map.values() {
            let _ = total.add(h);
        }
        total
    }
}

/// Percentiles of a histogram in microseconds.
pub fn latency_summary(h: &Histogram<u64>) -> Latency {
    if h.is_empty() {
        return Latency::default();
    }
    let q = |p: f64| h.value_at_quantile(p) as f64;
    Latency {
        min: h.min() as f64,
        mean: h.mean(),
        p50: q(0.50),
        p90: q(0.90),
        p95: q(0.95),
        p99: q(0.99),
        p999: q(0.999),
        max: h.max() as f64,
    }
}

/// Percentile `p` of `h`, µs (0 for no calls), as [`latency_summary`]
/// reads its own: a cell's extra percentiles (`CellSpec::percentiles`).
pub fn percentile_us(h: &Histogram<u64>, p: Percentile) -> f64 {
    match p {
        _ if h.is_empty() => 0.0,
        Percentile::MIN => h.min() as f64,
        Percentile::MAX => h.max() as f64,
        _ => h.value_at_quantile(p.quantile()) as f64,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn merging_keeps_every_sample_and_the_extremes() {
        let mut a = WorkerStats::default();
        let mut b = WorkerStats::default();
        for us in 1..=1000 {
            a.record_ok(Duration::from_micros(us));
        }
        b.record_ok(Duration::from_millis(250));
        b.record_failure(&CallError::Timeout);
        b.record_failure(&CallError::WrongResponse("x".into()));
        a.merge(b);
        assert_eq!(a.ok, 1001);
        assert_eq!(a.latency.len(), 1001);
        assert_eq!(a.failures.total(), 2);
        assert_eq!(a.failures.examples.len(), 2);
        let s = latency_summary(&a.latency);
        assert_eq!(s.min, 1.0);
        assert!(
            (s.max - 250_000.0).abs() / 250_000.0 < 0.001,
            "max {}",
            s.max
        );
        assert!((s.p50 - 500.0).abs() <= 1.0, "p50 {}", s.p50);
    }

    #[test]
    fn interval_log_parses_back_and_holds_every_sample() {
        use hdrhistogram::serialization::interval_log::{IntervalLogIterator, LogEntry};
        use hdrhistogram::serialization::Deserializer;
        let start = Instant::now();
        let sink = IntervalSink::new(start, Duration::from_millis(100));
        let mut w = WorkerStats::default();
        for i in 0..50u64 {
            w.record_ok_at(
                Duration::from_micros(100 + i),
                start + Duration::from_millis(i * 5),
                &sink,
            );
        }
        w.flush_interval(&sink);
        assert_eq!(sink.merged().len(), 50);
        // Recorded once per call, in its interval; the whole window's
        // histogram is the sum of the intervals.
        assert_eq!(w.latency.len(), 50);
        assert_eq!(w.ok, 50);
        assert_eq!(w.latency, sink.merged());
        let log = sink.to_hlog("test").unwrap();
        let text = String::from_utf8(log.clone()).unwrap();
        assert!(text.contains("#[Histogram log format version 1.3]"));
        assert!(text.contains("\"StartTimestamp\",\"Interval_Length\""));
        for line in [
            "#test\n",
            "#[StartTime: ",
            "#[BaseTime: ",
            "#[MaxValueDivisor: 1000.000]",
        ] {
            assert_eq!(text.matches(line).count(), 1, "{line:?} once in:\n{text}");
        }
        let legend = text.find("\"StartTimestamp\"").unwrap();
        assert!(
            text[..legend].lines().all(|l| l.starts_with('#')),
            "the legend follows the header, before the first interval:\n{text}"
        );
        let mut count = 0;
        let mut intervals = 0;
        for entry in IntervalLogIterator::new(&log) {
            if let LogEntry::Interval(ilh) = entry.unwrap() {
                intervals += 1;
                let bytes = base64_decode(ilh.encoded_histogram());
                let h: Histogram<u64> = Deserializer::new().deserialize(&mut &bytes[..]).unwrap();
                count += h.len();
            }
        }
        assert_eq!(intervals, 3, "250 ms of calls in 100 ms intervals");
        assert_eq!(count, 50);
    }

    fn base64_decode(s: &str) -> Vec<u8> {
        const ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
        let mut out = Vec::new();
        let (mut acc, mut bits) = (0u32, 0);
        for c in s.bytes().filter(|&c| c != b'=') {
            let v = ALPHABET.iter().position(|&a| a == c).expect("base64") as u32;
            acc = (acc << 6) | v;
            bits += 6;
            if bits >= 8 {
                bits -= 8;
                out.push((acc >> bits) as u8);
            }
        }
        out
    }

    #[test]
    fn sub_microsecond_calls_are_recorded_as_one_microsecond() {
        let mut a = WorkerStats::default();
        a.record_ok(Duration::from_nanos(10));
        assert_eq!(a.latency.min(), 1);
    }

    #[test]
    fn only_the_first_example_of_a_class_is_kept() {
        let mut a = WorkerStats::default();
        a.record_failure(&CallError::Server("first".into()));
        a.record_failure(&CallError::Server("second".into()));
        assert_eq!(a.failures.server_error, 2);
        assert!(a.failures.examples["server_error"].contains("first"));
    }
}
