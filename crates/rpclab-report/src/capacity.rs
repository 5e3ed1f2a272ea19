//! A capacity search rendered (`lab capacity`, `results.json`'s
//! `capacity`): the sentence that ends it ([`conclusion`]: the rate found,
//! the last passing and the first failing step), the table of its steps
//! ([`render`], for the terminal and `summary.md`; [`html()`], for the page)
//! and its latency-vs-rate chart ([`chart`]), drawn with [`crate::svg`]'s
//! primitives like every other chart. Data in, text out.

use crate::svg::{
    esc, frame, legend, marker, nice_step, open, style, tick_label, Axis, Key, BOTTOM, H, LEFT,
    RIGHT, TOP, W,
};
use maud::{html, Markup};
use rpclab_model::capacity::{CapacitySearch, Failure, Outcome, Step};
use std::fmt::Write as _;
use tabled::builder::Builder;

/// The chart's file stem (`charts/capacity.svg`).
pub const CHART: &str = "capacity";

/// The styles of passing and failing steps (green triangles, vermilion
/// diamonds).
const PASS_STYLE: usize = 2;
const FAIL_STYLE: usize = 3;

/// A step in words: `5250 calls/s at step 8 (p99 3.100 ms)`.
fn step_words(search: &CapacitySearch, s: &Step) -> String {
    format!(
        "{} calls/s at step {} ({} {:.3} ms)",
        s.offered_per_s,
        s.step,
        search.asked.percentile,
        s.percentile_us / 1e3
    )
}

/// A number with at most two decimals, and none it does not need: `5`,
/// `0.5`, `2.25`.
fn trim(v: f64) -> String {
    let s = format!("{v:.2}");
    s.trim_end_matches('0').trim_end_matches('.').to_owned()
}

/// Why a step failed, in words.
fn failure_words(search: &CapacitySearch, s: &Step) -> String {
    let words: Vec<String> = s
        .failures
        .iter()
        .map(|f| match f {
            Failure::Latency => format!(
                "{} {:.3} ms ≥ {}",
                search.asked.percentile,
                s.percentile_us / 1e3,
                search.asked.slo
            ),
            Failure::Errors => format!("{} failed calls", s.calls_failed),
            Failure::NotVerified => "replies not verified".to_owned(),
            Failure::Shortfall => format!(
                "achieved {:.0} calls/s, short of {:.0}: the rate was not carried{}",
                s.achieved_per_s,
                s.achieved_least_per_s,
                // Late calls: the server held them up, or the client
                // could not send them in time.
                s.send_lag_p99_us
                    .filter(|l| *l >= 1e3)
                    .map_or(String::new(), |l| format!(
                        " (calls left up to {:.1} ms late, p99)",
                        l / 1e3
                    ))
            ),
            Failure::NoCalls => "no call completed in the window".to_owned(),
        })
        .collect();
    words.join("; ")
}

/// The line that ends a search: the rate found with the last pass and
/// the first fail, or why there is none.
pub fn conclusion(search: &CapacitySearch) -> String {
    let who = format!("{} {}", search.server, search.variant);
    let slo = search.asked.slo_line();
    let pass = search.last_pass();
    let fail = search.first_fail();
    let bracket = format!(
        "last pass {}; first fail {}",
        pass.map_or("none".to_owned(), |s| step_words(search, s)),
        fail.map_or("none".to_owned(), |s| step_words(search, s))
    );
    let n = search.steps.len();
    match (search.outcome, pass) {
        (Some(Outcome::Found), Some(p)) => format!(
            "capacity of {who} under {slo}: {} calls/s ({bracket}; within {} % after {n} steps)",
            p.offered_per_s,
            trim(search.asked.tolerance * 100.0)
        ),
        (Some(Outcome::BudgetSpent), Some(p)) if fail.is_some() => format!(
            "capacity of {who} under {slo}: {} calls/s, not narrowed to {} %: the budget of {} steps was spent ({bracket})",
            p.offered_per_s,
            trim(search.asked.tolerance * 100.0),
            search.asked.budget
        ),
        (Some(Outcome::BudgetSpent), Some(p)) => format!(
            "capacity of {who} under {slo}: at least {} calls/s: every rate tried passed before the budget of {} steps was spent ({bracket})",
            p.offered_per_s, search.asked.budget
        ),
        (Some(Outcome::NoRate), _) | (Some(_), None) => {
            let lowest = search.steps.iter().map(|s| s.offered_per_s).min();
            let reach = match lowest {
                Some(l) if l <= search.asked.min_rate => {
                    format!("down to the lowest rate, {l} calls/s")
                }
                Some(l) => format!(
                    "down to {l} calls/s, where the budget of {} steps was spent (lowest rate {} calls/s)",
                    search.asked.budget, search.asked.min_rate
                ),
                None => "no step was measured".to_owned(),
            };
            format!("no rate holds the SLO {slo} on {who}: every step failed, {reach} ({bracket})")
        }
        (None, _) => format!(
            "the capacity search of {who} under {slo} stopped after {n} steps, with no outcome ({bracket})"
        ),
    }
}

/// The steps as a table (Markdown for `summary.md`), then the conclusion.
pub fn render(search: &CapacitySearch, markdown: bool) -> String {
    let mut b = Builder::default();
    b.push_record([
        "step".to_owned(),
        "offered calls/s".to_owned(),
        "achieved calls/s".to_owned(),
        format!("{} ms", search.asked.percentile),
        "failed".to_owned(),
        "verified".to_owned(),
        "verdict".to_owned(),
    ]);
    for s in &search.steps {
        b.push_record([
            s.step.to_string(),
            s.offered_per_s.to_string(),
            format!("{:.0}", s.achieved_per_s),
            format!("{:.3}", s.percentile_us / 1e3),
            s.calls_failed.to_string(),
            if s.verified { "yes" } else { "no" }.to_owned(),
            verdict(search, s),
        ]);
    }
    let table = crate::format::table(b, markdown);
    let mut out = if markdown {
        format!("### capacity search\n\n{}\n\n", setup(search))
    } else {
        format!("capacity search: {}\n\n", setup(search))
    };
    let _ = write!(out, "{table}\n\n{}\n", conclusion(search));
    out
}

fn verdict(search: &CapacitySearch, s: &Step) -> String {
    if s.pass {
        "pass".to_owned()
    } else {
        format!("fail: {}", failure_words(search, s))
    }
}

/// How the search was made, in one line.
fn setup(search: &CapacitySearch) -> String {
    let a = &search.asked;
    let start = match (&search.hint, a.start_rate) {
        (_, Some(r)) => format!("first rate {r} calls/s (given)"),
        (Some(h), None) => format!(
            "first rate the closed-loop throughput of {} at {}: {:.0} calls/s",
            h.scenario, h.concurrency, h.throughput_per_s
        ),
        (None, None) => "first rate from a closed-loop hint".to_owned(),
    };
    format!(
        "{} {}, scenario {}: {} arrivals over {} connection(s), at most {} in flight, {} s windows; SLO {} with no failed call and every reply verified; doubling or halving, then bisecting to {} %, at most {} steps, lowest rate {} calls/s; {start}",
        search.server,
        search.variant,
        search.scenario,
        search.arrival,
        search.connections,
        search.max_in_flight,
        trim(search.window_s),
        a.slo_line(),
        trim(a.tolerance * 100.0),
        a.budget,
        a.min_rate
    )
}

/// The search's section of `report.html`: how it was made, its
/// conclusion, its steps and `figures` (the chart).
pub fn html(search: &CapacitySearch, figures: Markup) -> Markup {
    html! {
        h2 id="capacity-search" { "Capacity under an SLO" }
        p { (setup(search)) }
        p { b { (conclusion(search)) } }
        table class="sortable" {
            thead { tr {
                th { "step" } th { "offered calls/s" } th { "achieved calls/s" }
                th { (search.asked.percentile) " ms" } th { "failed" } th { "verified" }
                th class="l" { "verdict" }
            } }
            tbody {
                @for s in &search.steps {
                    tr class=[(!s.pass).then_some("caveat")] {
                        td data-v=(s.step) { (s.step) }
                        td data-v=(s.offered_per_s) { (s.offered_per_s) }
                        td data-v=(s.achieved_per_s) { (format!("{:.0}", s.achieved_per_s)) }
                        td data-v=(s.percentile_us) { (format!("{:.3}", s.percentile_us / 1e3)) }
                        td data-v=(s.calls_failed) { (s.calls_failed) }
                        td { @if s.verified { "yes" } @else { "no" } }
                        td class="l" { (verdict(search, s)) }
                    }
                }
            }
        }
        (figures)
    }
}

/// The latency-vs-rate chart: each step's percentile at its offered rate
/// (passing and failing steps told apart, joined in rate order), the SLO
/// as a line, the rate found as another: the SVG document the page
/// inlines and saves as `charts/capacity.svg` ([`CHART`]). None without a
/// step. (It names no type of
/// [`crate::charts`], which reads the snapshot's cells: the search is
/// drawn from its own record with [`crate::svg`]'s primitives.)
pub fn chart(search: &CapacitySearch) -> Option<String> {
    let mut steps: Vec<&Step> = search.steps.iter().collect();
    if steps.is_empty() {
        return None;
    }
    steps.sort_by_key(|s| (s.offered_per_s, s.step));
    let ms = |s: &Step| s.percentile_us / 1e3;
    let slo_ms = search.asked.slo_us / 1e3;
    let (lo, hi) = (
        steps[0].offered_per_s as f64,
        steps[steps.len() - 1].offered_per_s as f64,
    );
    let x_log = lo > 0.0 && hi / lo >= 10.0;
    let x = if hi > lo {
        Axis {
            lo,
            hi,
            log: x_log,
            from: LEFT + 20.0,
            to: W - RIGHT - 20.0,
        }
    } else {
        Axis {
            lo: lo - 1.0,
            hi: hi + 1.0,
            log: false,
            from: LEFT + 20.0,
            to: W - RIGHT - 20.0,
        }
    };
    let values: Vec<f64> = steps.iter().map(|s| ms(s)).chain([slo_ms]).collect();
    let positive: Vec<f64> = values.iter().copied().filter(|v| *v > 0.0).collect();
    let (vmin, vmax) = positive
        .iter()
        .fold((f64::INFINITY, 0f64), |(a, b), v| (a.min(*v), b.max(*v)));
    let y_log = !positive.is_empty() && vmax / vmin > 30.0;
    let y = Axis::new(values.iter().copied(), y_log, H - BOTTOM, TOP)?;
    let mut svg = String::new();
    open(
        &mut svg,
        &format!(
            "capacity of {} {} under {}",
            search.server,
            search.variant,
            search.asked.slo_line()
        ),
    );
    let _ = write!(
        svg,
        r##"<text x="{LEFT}" y="38" fill="#555">{}</text>"##,
        esc(&format!(
            "{} of each step's window at its offered rate ({} arrivals, {} s windows); {}",
            search.asked.percentile,
            search.arrival,
            trim(search.window_s),
            search.outcome.map_or("no outcome", Outcome::as_str)
        ))
    );
    // Every rate measured, when there are few; else round figures.
    let mut rates: Vec<f64> = steps.iter().map(|s| s.offered_per_s as f64).collect();
    rates.dedup();
    let mut ticks: Vec<f64> = if rates.len() <= 6 {
        rates
    } else if x_log {
        Axis::new([lo, hi].into_iter(), true, 0.0, 1.0)
            .map(|a| a.ticks())
            .unwrap_or_default()
    } else {
        let step = nice_step((hi - lo) / 5.0);
        (0..)
            .map(|k| ((lo / step).ceil() + k as f64) * step)
            .take_while(|t| *t <= hi)
            .collect()
    };
    ticks.retain(|t| *t >= x.lo && *t <= x.hi);
    // Labels that would overlap the one before are left out (each rate is
    // still named by its marker's tooltip).
    let mut labelled: Vec<(f64, String)> = Vec::new();
    for t in ticks {
        let label = tick_label(t);
        let room = 7.0 * label.len().max(3) as f64;
        if labelled
            .last()
            .is_none_or(|(before, _)| x.px(t) - x.px(*before) >= room)
        {
            labelled.push((t, label));
        }
    }
    let ticks = labelled;
    let y_label = format!(
        "{} latency ms{}",
        search.asked.percentile,
        if y_log { " (log)" } else { "" }
    );
    let x_label = format!("offered rate, calls/s{}", if x_log { " (log)" } else { "" });
    frame(&mut svg, &x, &y, &x_label, &y_label, &ticks);
    // The SLO.
    let sy = y.px(slo_ms);
    let _ = write!(
        svg,
        r##"<line x1="{LEFT}" x2="{:.1}" y1="{sy:.1}" y2="{sy:.1}" stroke="#C00" stroke-dasharray="6 4" stroke-width="1.5"/><text x="{:.1}" y="{:.1}" text-anchor="end" fill="#C00">SLO {}</text>"##,
        W - RIGHT,
        W - RIGHT - 4.0,
        sy - 5.0,
        esc(&search.asked.slo_line())
    );
    // The rate found.
    if let Some(found) = search.found_rate() {
        let fx = x.px(found as f64);
        let _ = write!(
            svg,
            r##"<line x1="{fx:.1}" x2="{fx:.1}" y1="{TOP}" y2="{:.1}" stroke="#009E73" stroke-dasharray="3 3" stroke-width="1.5"/><text x="{:.1}" y="{:.1}" fill="#007050">found {found} calls/s</text>"##,
            H - BOTTOM,
            fx + 4.0,
            TOP + 14.0
        );
    }
    // The curve, in rate order.
    let path: Vec<String> = steps
        .iter()
        .map(|s| format!("{:.1},{:.1}", x.px(s.offered_per_s as f64), y.px(ms(s))))
        .collect();
    let _ = write!(
        svg,
        r##"<polyline points="{}" fill="none" stroke="#555" stroke-width="1.5" stroke-opacity="0.8"/>"##,
        path.join(" ")
    );
    for s in &steps {
        let (colour, m) = style(if s.pass { PASS_STYLE } else { FAIL_STYLE });
        let tip = format!(
            "step {}: offered {} calls/s, achieved {:.0} calls/s, {} {:.3} ms, {} failed: {}",
            s.step,
            s.offered_per_s,
            s.achieved_per_s,
            search.asked.percentile,
            ms(s),
            s.calls_failed,
            verdict(search, s)
        );
        let (px, py) = (x.px(s.offered_per_s as f64), y.px(ms(s)));
        svg.push_str(&marker(m, px, py, 5.0, colour, colour, &tip));
    }
    legend(
        &mut svg,
        CHART,
        &[
            ("step held the SLO".to_owned(), Key::Series(PASS_STYLE)),
            ("step failed".to_owned(), Key::Series(FAIL_STYLE)),
        ],
    );
    svg.push_str("</svg>\n");
    Some(svg)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rpclab_model::capacity::{Asked, Percentile};

    /// Steps 1, 2, … at these rates, each passing the SLO or not.
    fn steps(rates: &[(u32, bool)]) -> Vec<Step> {
        (1..)
            .zip(rates)
            .map(|(n, &(rate, pass))| step(n, rate, pass))
            .collect()
    }

    fn step(n: u32, rate: u32, pass: bool) -> Step {
        Step {
            step: n,
            offered_per_s: rate,
            achieved_per_s: rate as f64,
            achieved_least_per_s: rate as f64 * 0.95,
            percentile_us: if pass { 1200.0 } else { 8000.0 },
            calls_ok: 500,
            calls_failed: 0,
            verified: true,
            send_lag_p99_us: None,
            pass,
            failures: if pass { vec![] } else { vec![Failure::Latency] },
            repetition: 1,
        }
    }

    fn search(steps: Vec<Step>, outcome: Outcome) -> CapacitySearch {
        let mut s = CapacitySearch {
            asked: Asked {
                scenario: "order-echo".into(),
                percentile: Percentile::P99,
                slo_us: 5000.0,
                slo: "5ms".into(),
                tolerance: 0.05,
                budget: 12,
                start_rate: Some(1000),
                min_rate: 10,
            },
            server: "thrift-java".into(),
            variant: "0.20".into(),
            scenario: "order-echo-open".into(),
            arrival: "poisson".into(),
            connections: 1,
            max_in_flight: 256,
            window_s: 1.0,
            hint: None,
            steps,
            outcome: None,
            found_per_s: None,
            last_pass: None,
            first_fail: None,
        };
        s.conclude(outcome);
        s
    }

    #[test]
    fn the_conclusion_names_the_rate_found_the_last_pass_and_the_first_fail() {
        let s = search(
            steps(&[
                (1000, true),
                (2000, false),
                (1500, true),
                (1750, false),
                (1625, false),
                (1562, true),
            ]),
            Outcome::Found,
        );
        let line = conclusion(&s);
        assert!(
            line.starts_with("capacity of thrift-java 0.20 under p99 < 5ms: 1562 calls/s"),
            "{line}"
        );
        assert!(line.contains("last pass 1562 calls/s at step 6"), "{line}");
        assert!(line.contains("first fail 1625 calls/s at step 5"), "{line}");
        let none = search(
            steps(&[(40, false), (20, false), (10, false)]),
            Outcome::NoRate,
        );
        let line = conclusion(&none);
        assert!(
            line.starts_with("no rate holds the SLO p99 < 5ms"),
            "{line}"
        );
        assert!(
            line.contains("down to the lowest rate, 10 calls/s"),
            "{line}"
        );
        assert!(!line.contains('\n'));
    }

    #[test]
    fn the_chart_draws_every_step_at_its_rate_with_the_slo_and_the_rate_found() {
        let s = search(
            steps(&[(1000, true), (2000, false), (1500, true)]),
            Outcome::BudgetSpent,
        );
        let svg = chart(&s).unwrap();
        for rate in [1000, 2000, 1500] {
            assert!(svg.contains(&format!("offered {rate} calls/s")), "{rate}");
        }
        assert!(svg.contains("SLO p99 &lt; 5ms"));
        assert!(svg.contains("found 1500 calls/s"));
        assert!(!svg.contains("NaN"));
        assert!(svg.ends_with("</svg>\n"));
        // One step, every step failing at 0 ms (no call): still drawn.
        let one = search(
            vec![Step {
                percentile_us: 0.0,
                ..step(1, 10, false)
            }],
            Outcome::NoRate,
        );
        let svg = chart(&one).unwrap();
        assert!(!svg.contains("NaN") && !svg.contains("found"));
        assert!(chart(&search(vec![], Outcome::NoRate)).is_none());
        let table = render(&s, true);
        assert!(table.contains("fail: p99 8.000 ms ≥ 5ms"), "{table}");
        assert_eq!(
            table.matches("\n|").count(),
            5,
            "a header, its rule and 3 steps: {table}"
        );
    }
}
