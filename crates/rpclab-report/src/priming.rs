//! "Priming and the JIT": how each server start was primed under the
//! profile's JIT rule (`prime_jit_quiet_cores`), and how busy its JIT
//! compiler threads still were in the measured windows, as a Markdown
//! table for `summary.md`. Facts only: the rule's verdict is the priming's
//! own `jit_quiet`, and a window's compiler cores are shown, not judged.

use rpclab_model::result::{Cell, Results};

/// One row: a primed server start and the cells measured after it.
struct Row<'a> {
    cell: &'a Cell,
    /// The most cores the compiler threads used over a window of the
    /// cells of this start (None where no window had them).
    most_in_a_window: Option<f64>,
}

/// Cores the compiler threads of `cell`'s server used over its window.
fn window_compiler_cores(cell: &Cell) -> Option<f64> {
    let ms = cell.server_cost?.compiler_cpu_ms?;
    (cell.duration_s > 0.0).then(|| ms / 1e3 / cell.duration_s)
}

/// The table, or nothing when no priming was judged by the JIT rule (a
/// profile without it, an older snapshot, a server on another machine).
pub fn render(results: &Results) -> String {
    let mut rows: Vec<Row> = Vec::new();
    for cell in &results.cells {
        let judged = cell
            .primed
            .as_ref()
            .is_some_and(|p| !p.compiler_cores_by_pass.is_empty());
        let same_start = |row: &Row| {
            row.cell.server == cell.server
                && row.cell.variant == cell.variant
                && row.cell.start == cell.start
        };
        if judged {
            rows.push(Row {
                cell,
                most_in_a_window: None,
            });
        }
        if let (Some(row), Some(cores)) = (
            rows.iter_mut().rev().find(|r| same_start(r)),
            window_compiler_cores(cell),
        ) {
            row.most_in_a_window = Some(row.most_in_a_window.map_or(cores, |m| m.max(cores)));
        }
    }
    if rows.is_empty() {
        return String::new();
    }
    let mut md = String::from(
        "## Priming and the JIT\n\n\
         Each server start was primed until its JIT compiler threads were quiet \
         (the profile's `prime_jit_quiet_cores`), or until `prime_max_s` ran out.\n\n\
         | server | variant | first pass | more passes | compiler cores by pass | JIT quiet | most compiler cores in a window |\n\
         | --- | --- | ---: | ---: | --- | --- | ---: |\n",
    );
    for row in &rows {
        let primed = row.cell.primed.as_ref().expect("a judged priming");
        let cores: Vec<String> = (primed.compiler_cores_by_pass.iter())
            .map(|c| format!("{c:.2}"))
            .collect();
        md.push_str(&format!(
            "| {} | {} | {:.1} s | {:.1} s | {} | {} | {} |\n",
            row.cell.server,
            row.cell.variant,
            primed.warmup.seconds,
            primed.more_passes_s,
            cores.join(", "),
            match primed.jit_quiet {
                Some(true) => "yes",
                Some(false) => "**no**",
                None => "not judged",
            },
            row.most_in_a_window
                .map_or("n/a".to_owned(), |c| format!("{c:.3}"))
        ));
    }
    md
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixture;
    use rpclab_model::result::{Cost, Priming, Warmup};

    fn results() -> Results {
        let text = std::fs::read_to_string(fixture::results_json()).unwrap();
        serde_json::from_str(&text).unwrap()
    }

    #[test]
    fn a_snapshot_without_the_rule_has_no_section() {
        assert_eq!(render(&results()), "");
    }

    #[test]
    fn each_primed_start_has_its_passes_verdict_and_busiest_window() {
        let mut results = results();
        let first = 0;
        let (server, variant) = {
            let c = &results.cells[first];
            (c.server.clone(), c.variant.clone())
        };
        results.cells[first].primed = Some(Priming {
            scenario: results.cells[first].scenario.clone(),
            concurrency: 5,
            warmup: Warmup {
                seconds: 12.5,
                ..Warmup::default()
            },
            calls_ok: 1000,
            calls_failed: 0,
            compiler_cores_by_pass: vec![0.34, 0.11, 0.01],
            more_passes_s: 6.4,
            jit_quiet: Some(true),
        });
        for (i, c) in results.cells.iter_mut().enumerate() {
            if c.server == server && c.variant == variant {
                // 10 ms of compiling a second of window, 20 in one cell.
                let ms = if i == first { 20.0 } else { 10.0 } * c.duration_s;
                c.server_cost = Some(Cost {
                    compiler_cpu_ms: Some(ms),
                    ..c.server_cost.unwrap_or_default()
                });
            }
        }
        let md = render(&results);
        assert!(md.starts_with("## Priming and the JIT"), "{md}");
        let line = md
            .lines()
            .find(|l| l.starts_with(&format!("| {server} | {variant} |")))
            .unwrap();
        assert!(
            line.contains("| 0.34, 0.11, 0.01 | yes | 0.020 |"),
            "{line}"
        );
        assert!(line.contains("| 12.5 s | 6.4 s |"), "{line}");
    }
}
