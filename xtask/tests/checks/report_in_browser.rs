//! The report opens in a real browser: headless Chromium (Debian's
//! `chromium`; `.ci/run` installs it) loads every `report.html` that
//! `lab report` renders, from `file://` only, and the page must render
//! (its sortable tables and its charts are in the DOM, its script ran) with
//! no console error. A page with a broken script proves the check can fail.
//!
//! Chromium is kept off the network: the page is a local file, every host
//! name resolves to nothing (`--host-resolver-rules`), there is no proxy,
//! and background networking, component updates, sync and crash reports
//! are off. Without Chromium the tests say so and pass without checking.

use crate::common;

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Chromium on the PATH, if any.
fn chromium() -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .flat_map(|d| ["chromium", "chromium-browser"].map(|n| d.join(n)))
        .find(|p| p.is_file())
}

/// Every test's set-up: Chromium and a scratch folder for the test's pages,
/// or `None` (the test then skips, and says so) without Chromium.
fn chromium_and_scratch() -> Option<(PathBuf, tempfile::TempDir)> {
    let Some(found) = chromium() else {
        eprintln!(
            "SKIPPED: no `chromium` on the PATH, so the report was not opened in a browser \
             (apt-get install chromium; .ci/run installs it)"
        );
        return None;
    };
    Some((found, tempfile::tempdir().unwrap()))
}

/// What the browser made of a page.
struct Opened {
    dom: String,
    log: String,
}

impl Opened {
    /// The page's console messages and uncaught errors, as Chromium logs
    /// them on stderr (`INFO:CONSOLE(3)] "Uncaught ReferenceError: …"`).
    fn console(&self) -> Vec<&str> {
        self.log
            .lines()
            .filter(|l| l.contains("CONSOLE") || l.contains("Uncaught"))
            .collect()
    }
}

/// Opens `page` (a local file) in headless Chromium and returns the DOM
/// after its scripts ran, and Chromium's log.
fn open(chromium: &Path, page: &Path) -> Opened {
    let profile = tempfile::tempdir().unwrap();
    let url = format!("file://{}", page.canonicalize().unwrap().display());
    let mut child = Command::new(chromium)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-dev-shm-usage",
            "--enable-logging=stderr",
            "--v=0",
            "--no-proxy-server",
            "--host-resolver-rules=MAP * ~NOTFOUND",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--disable-default-apps",
            "--disable-extensions",
            "--disable-domain-reliability",
            "--disable-client-side-phishing-detection",
            "--disable-breakpad",
            "--no-first-run",
            "--no-default-browser-check",
            "--dump-dom",
        ])
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .arg(&url)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("chromium starts");
    let read = |mut r: Box<dyn Read + Send>| {
        std::thread::spawn(move || {
            let mut s = String::new();
            let _ = r.read_to_string(&mut s);
            s
        })
    };
    let out = read(Box::new(child.stdout.take().unwrap()));
    let err = read(Box::new(child.stderr.take().unwrap()));
    // A guard against a browser that never exits, not a timing assertion.
    let give_up = Instant::now() + Duration::from_secs(300);
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if Instant::now() > give_up {
            let _ = child.kill();
            let _ = child.wait();
            panic!("chromium did not finish with {url}");
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    let opened = Opened {
        dom: out.join().unwrap(),
        log: err.join().unwrap(),
    };
    assert!(
        status.success(),
        "chromium failed on {url}: {status}\n{}",
        opened.log
    );
    opened
}

/// Renders `snapshot` with `lab report` (the command a reader runs).
fn render(snapshot: &Path) {
    let out = common::xtask_command(&["lab", "report"])
        .arg(snapshot)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "lab report failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The committed default-lab snapshot's results and manifest, copied.
fn committed_snapshot(into: &Path) {
    let from = common::repo_root().join("results/20261129T235428Z-vm-c20a70e");
    std::fs::create_dir_all(into).unwrap();
    for f in ["results.json", "manifest.toml"] {
        std::fs::copy(from.join(f), into.join(f)).unwrap();
    }
}

/// The committed snapshot with every cell repeated under two more variant
/// names: 33 series, more than one chart's worth of styles.
fn many_series(into: &Path) {
    committed_snapshot(into);
    let path = into.join("results.json");
    let mut v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let cells = v["cells"].as_array().unwrap().clone();
    for copy in ["b", "c"] {
        for mut c in cells.clone() {
            let variant = format!("{}-{copy}", c["variant"].as_str().unwrap());
            c["variant"] = variant.into();
            v["cells"].as_array_mut().unwrap().push(c);
        }
    }
    std::fs::write(&path, serde_json::to_vec(&v).unwrap()).unwrap();
}

/// The committed snapshot with a capacity search (`lab capacity`) of
/// three steps beside its cells.
fn capacity_search(into: &Path) {
    committed_snapshot(into);
    let path = into.join("results.json");
    let mut v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let step = |n: u32, rate: u32, p99_us: f64, pass: bool| {
        serde_json::json!({
            "step": n, "offered_per_s": rate, "achieved_per_s": rate as f64,
            "achieved_least_per_s": rate as f64 * 0.95, "percentile_us": p99_us,
            "calls_ok": rate, "calls_failed": 0, "verified": true, "pass": pass,
            "failures": if pass { vec![] } else { vec!["latency"] }, "repetition": 1
        })
    };
    v["capacity"] = serde_json::json!({
        "asked": {"scenario": "order-echo", "percentile": "p99", "slo_us": 5000.0,
                  "slo": "5ms", "tolerance": 0.05, "budget": 3, "min_rate": 10},
        "server": "thrift-java", "variant": "0.20", "scenario": "order-echo-open",
        "arrival": "poisson", "connections": 1, "max_in_flight": 256, "window_s": 1.0,
        "hint": {"scenario": "order-echo", "concurrency": 1, "throughput_per_s": 8000.0},
        "steps": [step(1, 8000, 90000.0, false), step(2, 4000, 2100.0, true),
                  step(3, 6000, 7200.0, false)],
        "outcome": "budget-spent", "found_per_s": 4000, "last_pass": 2, "first_fail": 3
    });
    std::fs::write(&path, serde_json::to_vec(&v).unwrap()).unwrap();
}

/// The reproduction fixture (seed ice-dubbo-thrift-grpc), with no manifest.
fn reproduction(into: &Path) {
    std::fs::create_dir_all(into).unwrap();
    std::fs::copy(
        common::repo_root().join("xtask/tests/fixtures/results.json"),
        into.join("results.json"),
    )
    .unwrap();
}

#[test]
fn every_report_renders_in_chromium_without_console_errors() {
    let Some((chromium, dir)) = chromium_and_scratch() else {
        return;
    };
    type Make = fn(&Path);
    let snapshots: [(&str, Make); 4] = [
        ("default-lab", committed_snapshot),
        ("many-series", many_series),
        ("reproduction", reproduction),
        ("capacity", capacity_search),
    ];
    for (name, make) in snapshots {
        let snap = dir.path().join(name);
        make(&snap);
        render(&snap);
        let charts = std::fs::read_dir(snap.join("charts")).unwrap().count();
        assert!(charts > 0, "{name}: no chart written");
        let opened = open(&chromium, &snap.join("report.html"));
        let console = opened.console();
        assert!(console.is_empty(), "{name}: console: {console:#?}");
        let dom = &opened.dom;
        assert!(
            dom.contains("data-sortable=\"ready\""),
            "{name}: the table script did not run"
        );
        assert!(
            dom.contains("<table class=\"sortable\">"),
            "{name}: no table"
        );
        assert!(
            dom.matches("<figure").count() >= charts,
            "{name}: {charts} charts written, fewer in the page"
        );
        assert!(dom.contains("<svg"), "{name}: no chart in the page");
        assert!(dom.contains("id=\"setup\""), "{name}: no setup");
        if name == "reproduction" {
            assert!(dom.contains("id=\"reproduction\""), "{name}");
        }
        if name == "capacity" {
            assert!(
                dom.contains("<h2 id=\"capacity-search\">"),
                "{name}: no section"
            );
            assert!(dom.contains("<figure id=\"capacity\">"), "{name}: no chart");
        }
    }
}

/// Clicking a column's header sorts the rows by it, ascending and then
/// descending: a script appended to the page clicks `calls/s` and writes
/// the column's values, in row order, into the DOM.
#[test]
fn clicking_a_header_sorts_the_rows() {
    let Some((chromium, dir)) = chromium_and_scratch() else {
        return;
    };
    let snap = dir.path().join("default-lab");
    committed_snapshot(&snap);
    render(&snap);
    let page = std::fs::read_to_string(snap.join("report.html")).unwrap();
    let probe = "<script>(function(){\
        var th=Array.prototype.filter.call(document.querySelectorAll('table.sortable th'),\
          function(h){return h.textContent==='calls/s';})[0];\
        var t=th.closest('table'),i=Array.prototype.indexOf.call(th.parentNode.children,th);\
        function col(){return Array.prototype.map.call(t.tBodies[0].rows,\
          function(r){return r.cells[i].getAttribute('data-v');}).join(' ');}\
        var before=col();th.click();var up=col();th.click();var down=col();\
        document.body.setAttribute('data-probe',before+'|'+up+'|'+down);})();</script>";
    let probed = snap.join("probed.html");
    std::fs::write(&probed, page.replace("</body>", &format!("{probe}</body>"))).unwrap();
    let opened = open(&chromium, &probed);
    assert!(opened.console().is_empty(), "{:#?}", opened.console());
    let at = opened.dom.find("data-probe=\"").expect("the probe ran") + 12;
    let end = at + opened.dom[at..].find('"').unwrap();
    let columns: Vec<Vec<f64>> = opened.dom[at..end]
        .split('|')
        .map(|c| c.split(' ').map(|v| v.parse().unwrap()).collect())
        .collect();
    let [before, up, down] = columns.as_slice() else {
        panic!("probe: {}", &opened.dom[at..end]);
    };
    assert!(before.len() > 2, "{before:?}");
    let mut sorted = before.clone();
    sorted.sort_by(f64::total_cmp);
    assert_ne!(
        before, &sorted,
        "the rows were sorted already; the test proves nothing"
    );
    assert_eq!(up, &sorted);
    sorted.reverse();
    assert_eq!(down, &sorted);
}

#[test]
fn a_broken_script_is_caught() {
    let Some((chromium, dir)) = chromium_and_scratch() else {
        return;
    };
    let page = dir.path().join("broken.html");
    std::fs::write(
        &page,
        "<!DOCTYPE html><html><body><table class=\"sortable\"></table>\
         <script>document.querySelectorAll('table').forEach(function(t){t.sortRows();});</script>\
         </body></html>",
    )
    .unwrap();
    let opened = open(&chromium, &page);
    assert!(opened.dom.contains("<table"), "the page did not load");
    let console = opened.console();
    assert!(
        console.iter().any(|l| l.contains("Uncaught")),
        "a script error went unnoticed; Chromium said:\n{}",
        opened.log
    );
}
