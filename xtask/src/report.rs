//! Result tables, for the terminal and `summary.md`, from cells alone.

use rpclab_model::result::Cell;
use tabled::settings::Style;
use tabled::{Table, Tabled};

#[derive(Tabled)]
struct Row {
    server: String,
    variant: String,
    #[tabled(rename = "conc.")]
    concurrency: u32,
    #[tabled(rename = "rep")]
    repetition: u32,
    ok: u64,
    failed: u64,
    #[tabled(rename = "calls/s")]
    throughput: String,
    #[tabled(rename = "p50 ms")]
    p50: String,
    #[tabled(rename = "p90 ms")]
    p90: String,
    #[tabled(rename = "p99 ms")]
    p99: String,
    #[tabled(rename = "p99.9 ms")]
    p999: String,
    #[tabled(rename = "max ms")]
    max: String,
    #[tabled(rename = "B/call out")]
    sent: String,
    #[tabled(rename = "B/call in")]
    received: String,
}

fn ms(us: f64) -> String {
    format!("{:.3}", us / 1000.0)
}

/// One table per scenario, in the order scenarios first appear.
pub fn tables(cells: &[Cell], markdown: bool) -> String {
    let mut scenarios: Vec<&str> = Vec::new();
    for c in cells {
        if !scenarios.contains(&c.scenario.as_str()) {
            scenarios.push(&c.scenario);
        }
    }
    let mut out = String::new();
    for scenario in scenarios {
        let rows: Vec<Row> = cells
            .iter()
            .filter(|c| c.scenario == scenario)
            .map(|c| Row {
                server: c.server.clone(),
                variant: c.variant.clone(),
                concurrency: c.concurrency,
                repetition: c.repetition,
                ok: c.calls_ok,
                failed: c.calls_failed,
                throughput: format!("{:.0}", c.throughput_per_s),
                p50: ms(c.latency_us.p50),
                p90: ms(c.latency_us.p90),
                p99: ms(c.latency_us.p99),
                p999: ms(c.latency_us.p999),
                max: ms(c.latency_us.max),
                sent: format!("{:.0}", c.report.bytes_sent_per_call),
                received: format!("{:.0}", c.report.bytes_received_per_call),
            })
            .collect();
        let first = cells.iter().find(|c| c.scenario == scenario).expect("scenario has a cell");
        let mut table = Table::new(rows);
        if markdown {
            table.with(Style::markdown());
        } else {
            table.with(Style::rounded());
        }
        out.push_str(&format!(
            "{}scenario {scenario} ({}, {:?} shape)\n\n{table}\n\n",
            if markdown { "### " } else { "" },
            first.operation,
            shape_of(first),
        ));
    }
    out
}

fn shape_of(c: &Cell) -> rpclab_model::spec::Shape {
    let rpclab_model::spec::Load::Closed(l) = &c.report.load;
    l.shape
}
