//! The snapshot's charts (`charts/*.svg`) and its HTML page (`report.html`):
//! tables and charts together in one self-contained file (inline SVG and
//! CSS, no script, no network), so it opens from the file system years
//! later. Everything is rendered from `results.json` alone.

use crate::report::charts;
use crate::report::svg::esc;
use crate::report::format::fmt_value;
use crate::report::reproduction::{self, Comparison};
use anyhow::{Context, Result};
use rpclab_model::result::{Aggregate, Results};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

const CSS: &str = "body{font-family:sans-serif;margin:2em;max-width:1200px;color:#222}\
table{border-collapse:collapse;margin:1em 0;font-size:13px}\
th,td{border:1px solid #ccc;padding:3px 7px;text-align:right;vertical-align:top}\
th{background:#f3f3f3}td.l,th.l{text-align:left}\
.pub{color:#a06000}.lab{color:#0060a0}.why{color:#888;font-size:11px}\
.holds{background:#e3f5e3}.reversed{background:#fbe3e3}.noise{background:#fff6d6}.nc{background:#eee}\
figure{margin:1em 0}svg{max-width:100%;height:auto}";

/// Turns a name into a file-name-safe slug.
fn slug(s: &str) -> String {
    let mut out = String::new();
    for c in s.chars() {
        if c.is_ascii_alphanumeric() || c == '.' {
            out.push(c.to_ascii_lowercase());
        } else if !out.ends_with('-') {
            out.push('-');
        }
    }
    out.trim_matches('-').chars().take(60).collect()
}

/// Writes `charts/*.svg` and `report.html` into `dir`; returns the files.
pub fn write_report(dir: &Path, name: &str, results: &Results) -> Result<Vec<PathBuf>> {
    let charts_dir = dir.join("charts");
    std::fs::create_dir_all(&charts_dir)
        .with_context(|| format!("cannot create {}", charts_dir.display()))?;
    let mut written = Vec::new();
    let mut write_svg = |file: String, svg: &str| -> Result<()> {
        let p = charts_dir.join(file);
        std::fs::write(&p, svg).with_context(|| format!("cannot write {}", p.display()))?;
        written.push(p);
        Ok(())
    };
    let mut html = String::new();
    let _ = write!(
        html,
        "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>rpclab {}</title><style>{CSS}</style></head><body>",
        esc(name)
    );
    let _ = write!(html, "<h1>rpclab snapshot {}</h1>", esc(name));
    let _ = write!(
        html,
        "<p>{} · {} cells, {} aggregates · results.json schema {}</p>",
        if results.complete {
            "complete run"
        } else {
            "<b>partial run</b>: it stopped early or some servers could not run"
        },
        results.cells.len(),
        results.aggregates.len(),
        results.schema_version
    );
    if !results.errors.is_empty() {
        html.push_str("<ul>");
        for e in &results.errors {
            let _ = write!(html, "<li class=\"why\">{}</li>", esc(e));
        }
        html.push_str("</ul>");
    }
    if let Some(r) = &results.reproduction {
        let cmp = reproduction::compare(results, r);
        reproduction_html(&mut html, &cmp);
        for (ti, t) in cmp.tables.iter().enumerate() {
            for ci in 0..t.columns.len() {
                if let Some(svg) = charts::published_vs_measured(t, ci) {
                    write_svg(
                        format!(
                            "published-{}-{}-{}.svg",
                            ti + 1,
                            slug(&t.title),
                            slug(&t.columns[ci])
                        ),
                        &svg,
                    )?;
                    let _ = write!(html, "<figure>{svg}</figure>");
                }
            }
        }
    }
    html.push_str("<h2>Measurements</h2>");
    for scenario in charts::scenarios(results) {
        let aggs: Vec<&Aggregate> = results
            .aggregates
            .iter()
            .filter(|a| a.scenario == scenario)
            .collect();
        let load = results
            .cells
            .iter()
            .find(|c| c.scenario == scenario)
            .map(|c| format!("operation {}, {}", c.operation, c.report.load.describe()))
            .unwrap_or_default();
        let _ = write!(
            html,
            "<h3>scenario {}</h3><p>{}</p>",
            esc(&scenario),
            esc(&load)
        );
        aggregates_html(&mut html, &aggs);
        if let Some(svg) = charts::throughput(results, &scenario) {
            write_svg(format!("throughput-{}.svg", slug(&scenario)), &svg)?;
            let _ = write!(html, "<figure>{svg}</figure>");
        }
        if let Some(svg) = charts::latency_spectrum(results, &scenario) {
            write_svg(format!("latency-{}.svg", slug(&scenario)), &svg)?;
            let _ = write!(html, "<figure>{svg}</figure>");
        }
    }
    html.push_str("<p class=\"why\">Rendered by <code>cargo xtask lab report</code> from results.json alone.</p></body></html>\n");
    let page = dir.join("report.html");
    std::fs::write(&page, html).with_context(|| format!("cannot write {}", page.display()))?;
    written.push(page);
    Ok(written)
}

fn aggregates_html(html: &mut String, aggs: &[&Aggregate]) {
    html.push_str("<table><tr><th class=\"l\">server</th><th class=\"l\">variant</th><th>conc./rate</th><th>reps</th><th>calls/s</th><th>CI of median</th><th>CV</th><th>p50 ms</th><th>p90 ms</th><th>p99 ms</th><th>p99.9 ms</th><th>max ms</th><th>srv CPU µs/call</th><th class=\"l\">flags</th></tr>");
    for a in aggs {
        let _ = write!(
            html,
            "<tr><td class=\"l\">{}</td><td class=\"l\">{}</td><td>{}</td><td>{}</td><td>{:.0}</td><td>{}</td><td>{}</td><td>{:.3}</td><td>{:.3}</td><td>{:.3}</td><td>{:.3}</td><td>{:.3}</td><td>{}</td><td class=\"l\">{}</td></tr>",
            esc(&a.server),
            esc(&a.variant),
            a.concurrency,
            a.repetitions,
            a.throughput_median,
            crate::report::tables::median_ci(a),
            crate::report::tables::cv(a),
            a.latency_us.p50 / 1e3,
            a.latency_us.p90 / 1e3,
            a.latency_us.p99 / 1e3,
            a.latency_us.p999 / 1e3,
            a.latency_us.max / 1e3,
            a.server_cpu_us_per_call.map_or("-".into(), |v| format!("{v:.1}")),
            esc(&a.flags.join("; "))
        );
    }
    html.push_str("</table>");
}

fn reproduction_html(html: &mut String, cmp: &Comparison) {
    let r = &cmp.reproduction;
    let _ = write!(
        html,
        "<h2>Reproduction of seed {}: {}</h2><p>Source: {}</p><p>Each cell shows the <span class=\"pub\">published</span> figure, the <span class=\"lab\">lab's</span> figure in the same unit, and lab / published. Absolute figures come from other hardware; the claims below compare ratios and rankings.</p>",
        esc(&r.seed),
        esc(&r.title),
        esc(&r.source)
    );
    html.push_str("<h3>Systems</h3><table><tr><th class=\"l\">system</th><th class=\"l\">published as</th><th class=\"l\">lab stand-in</th><th class=\"l\">status</th></tr>");
    for s in &r.systems {
        let standin = match (&s.server, &s.variant) {
            (Some(a), Some(b)) => format!("{a} {b}"),
            _ => "—".into(),
        };
        let status = reproduction::system_status(cmp, s);
        let _ = write!(
            html,
            "<tr><td class=\"l\">{}</td><td class=\"l\">{}</td><td class=\"l\">{}</td><td class=\"l\">{}</td></tr>",
            esc(&s.key),
            esc(&s.published_as),
            esc(&standin),
            esc(&status)
        );
    }
    html.push_str("</table>");
    for t in &cmp.tables {
        let _ = write!(html, "<h3>{}</h3><table><tr><th></th>", esc(&t.title));
        for c in &t.columns {
            let _ = write!(html, "<th>{}</th>", esc(c));
        }
        html.push_str("</tr>");
        for (row, cells) in &t.rows {
            let _ = write!(html, "<tr><th class=\"l\">{}</th>", esc(row));
            for c in cells {
                match c {
                    None => html.push_str("<td></td>"),
                    Some(c) => {
                        let p = &c.published;
                        let measured = match (c.measured, &c.missing) {
                            (Some(m), _) if c.caveats.is_empty() => {
                                format!("{} {}", fmt_value(m), esc(&p.unit))
                            }
                            (Some(m), _) => format!(
                                "{} {} ({})",
                                fmt_value(m),
                                esc(&p.unit),
                                c.caveats.join(", ")
                            ),
                            (None, Some(why)) => format!("<span class=\"why\">{}</span>", esc(why)),
                            (None, None) => "—".into(),
                        };
                        let _ = write!(
                            html,
                            "<td><span class=\"pub\">{}{}</span><br><span class=\"lab\">{measured}</span><br>{}</td>",
                            esc(p.raw.trim()),
                            if p.value.is_none() { " (failed)" } else { "" },
                            c.ratio.map_or(String::new(), |r| format!("×{}", fmt_value(r)))
                        );
                    }
                }
            }
            html.push_str("</tr>");
        }
        html.push_str("</table>");
    }
    html.push_str("<h3>Claims</h3><table><tr><th class=\"l\">claim</th><th class=\"l\">verdict</th><th class=\"l\">measured</th></tr>");
    for c in &cmp.claims {
        let class = match if c.checked == 0 {
            reproduction::Verdict::NotComparable
        } else {
            c.verdict
        } {
            reproduction::Verdict::Holds => "holds",
            reproduction::Verdict::Reversed | reproduction::Verdict::DoesNotHold => "reversed",
            reproduction::Verdict::WithinNoise => "noise",
            reproduction::Verdict::NotComparable => "nc",
        };
        let _ = write!(
            html,
            "<tr class=\"{class}\" id=\"claim-{}\"><td class=\"l\">{}</td><td class=\"l\">{}</td><td class=\"l\">{}</td></tr>",
            esc(&c.id),
            esc(&c.text),
            esc(&c.label()),
            esc(&c.detail)
        );
    }
    let _ = write!(
        html,
        "</table><p class=\"why\">{}</p>",
        esc(&reproduction::verdict_legend())
    );
    if !r.notes.is_empty() {
        html.push_str("<h3>Notes</h3><ul>");
        for n in &r.notes {
            let _ = write!(html, "<li>{}</li>", esc(n));
        }
        html.push_str("</ul>");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixture() -> Results {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/results.json");
        let text = std::fs::read_to_string(&path).unwrap();
        serde_json::from_str(&text).unwrap()
    }

    #[test]
    fn the_fixture_renders_charts_and_a_self_contained_page() {
        let results = fixture();
        let dir = tempfile::tempdir().unwrap();
        let files = write_report(dir.path(), "fixture", &results).unwrap();
        let page = std::fs::read_to_string(dir.path().join("report.html")).unwrap();
        assert!(page.contains("<svg"), "no inline chart");
        assert!(!page.contains("<script"), "the page must not need scripts");
        assert!(
            !page.contains("src=\"http"),
            "the page must not load anything"
        );
        // A chart per scenario: throughput and latency spectrum.
        for s in charts::scenarios(&results) {
            assert!(
                files
                    .iter()
                    .any(|f| f.ends_with(format!("charts/throughput-{}.svg", slug(&s)))),
                "{s}"
            );
            assert!(
                files
                    .iter()
                    .any(|f| f.ends_with(format!("charts/latency-{}.svg", slug(&s)))),
                "{s}"
            );
        }
        for f in files
            .iter()
            .filter(|f| f.extension().is_some_and(|e| e == "svg"))
        {
            let svg = std::fs::read_to_string(f).unwrap();
            assert!(svg.starts_with("<svg xmlns=\"http://www.w3.org/2000/svg\""));
            assert!(svg.trim_end().ends_with("</svg>"));
            assert!(!svg.contains("NaN"), "{}", f.display());
        }
        let r = results
            .reproduction
            .as_ref()
            .expect("the fixture is a reproduction");
        assert!(page.contains("Reproduction of seed"));
        for c in &r.cells {
            assert!(
                page.contains(&esc(c.raw.trim())),
                "published {} missing",
                c.raw
            );
        }
        assert!(page.contains("id=\"claim-"), "no claim rows");
        assert!(files
            .iter()
            .any(|f| f.to_string_lossy().contains("published-")));
    }

    #[test]
    fn a_system_that_did_not_run_says_why_in_the_page() {
        let mut results = fixture();
        let r = results.reproduction.as_mut().unwrap();
        r.systems[0].server = None;
        r.systems[0].variant = None;
        r.systems[0].not_run = Some("no server folder for it yet".into());
        let key = r.systems[0].key.clone();
        let dir = tempfile::tempdir().unwrap();
        write_report(dir.path(), "fixture", &results).unwrap();
        let page = std::fs::read_to_string(dir.path().join("report.html")).unwrap();
        assert!(
            page.contains("not run: no server folder for it yet"),
            "{key}"
        );
    }

    #[test]
    fn a_snapshot_from_before_reproductions_still_loads_and_renders() {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/results.json");
        let mut value: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
        value.as_object_mut().unwrap().remove("reproduction");
        let results: Results = serde_json::from_value(value).unwrap();
        assert!(results.reproduction.is_none());
        let dir = tempfile::tempdir().unwrap();
        write_report(dir.path(), "old", &results).unwrap();
        let page = std::fs::read_to_string(dir.path().join("report.html")).unwrap();
        assert!(!page.contains("Reproduction of seed"));
        assert!(page.contains("<svg"));
    }

    #[test]
    fn slugs_are_file_safe() {
        assert_eq!(slug("Seed 001 · concurrency 20"), "seed-001-concurrency-20");
        assert_eq!(slug("tps (calls/s)"), "tps-calls-s");
    }
}
