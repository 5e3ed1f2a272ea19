//! xtask's modules import each other without a cycle, and only downwards
//! through its layers (docs/architecture.md, "xtask's layers").
//!
//! Every file under `xtask/src` is a module: `main.rs` is the crate root
//! (`main`), `x.rs` and `x/mod.rs` are `x`, `x/y.rs` is `x::y`. A module
//! depends on another when its code names it: a `use crate::…` tree, a
//! `crate::…` path anywhere (also inside macro arguments, which a parser of
//! Rust items would not see), `super::…` out of the file, or `y::…` for a
//! submodule `y` the file declares (`mod y;`). A path is an edge to the
//! longest module prefix it names, so `crate::report::tables::render` is an
//! edge to `report::tables` and `crate::report::write_all` one to `report`
//! (its `mod.rs`): submodules are nodes of their own, and a cycle between a
//! `mod.rs` and its submodules is found too. A `crate::name` that is no
//! module is an item of the crate root (`main`), or the module that defines
//! the `#[macro_export]` macro `name`. Comments and string literals do not
//! count; `#[cfg(test)]` code does.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

// ----------------------------------------------------------------------
// The layers are xtask/src's folders: a module's layer is the first segment
// of its path (`engine::run` is in `engine`), and `main`, the crate root
// that parses the command line, is in the top one, `cli`. A file at the
// top of xtask/src other than main.rs, or a folder not listed here, fails
// the test: put the file in the folder of its layer, and a new layer here
// and in docs/architecture.md. The report is no folder: it is a crate of
// its own (crates/rpclab-report), which cannot name xtask at all, so the
// layers that used it (`cli`, `tools`) reach it as a dependency.

/// Which layers a layer's modules may import (their own included), top down.
const MAY_IMPORT: &[(&str, &[&str])] = &[
    (
        "cli",
        &[
            "cli",
            "tools",
            "bench",
            "engine",
            "store",
            "definitions",
            "basics",
        ],
    ),
    ("tools", &["tools", "store", "definitions", "basics"]),
    (
        "bench",
        &["bench", "engine", "store", "definitions", "basics"],
    ),
    ("engine", &["engine", "store", "definitions", "basics"]),
    ("store", &["store", "definitions", "basics"]),
    ("definitions", &["definitions", "basics"]),
    ("basics", &["basics"]),
];

/// The layer of a module, from its path; None for a module outside the
/// layer folders.
fn layer_of(module: &str) -> Option<&'static str> {
    let first = match module {
        "main" => "cli",
        m => m.split("::").next().unwrap_or(m),
    };
    MAY_IMPORT.iter().map(|(l, _)| *l).find(|l| *l == first)
}

// ----------------------------------------------------------------------
// Tokens: identifiers, `::` and single punctuation, with comments and
// literals gone.

#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Tok {
    Ident(String),
    Path,
    Punct(char),
}

/// The tokens of `src`, each with its line.
pub(crate) fn tokens(src: &str) -> Vec<(Tok, usize)> {
    let c: Vec<char> = src.chars().collect();
    let (mut i, mut line, mut out) = (0, 1, Vec::new());
    let newlines = |s: &[char]| s.iter().filter(|&&ch| ch == '\n').count();
    while i < c.len() {
        let ch = c[i];
        if ch == '\n' {
            line += 1;
            i += 1;
        } else if ch.is_whitespace() {
            i += 1;
        } else if ch == '/' && c.get(i + 1) == Some(&'/') {
            while i < c.len() && c[i] != '\n' {
                i += 1;
            }
        } else if ch == '/' && c.get(i + 1) == Some(&'*') {
            let (start, mut depth) = (i, 0);
            while i < c.len() {
                if c[i] == '/' && c.get(i + 1) == Some(&'*') {
                    depth += 1;
                    i += 2;
                } else if c[i] == '*' && c.get(i + 1) == Some(&'/') {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    i += 1;
                }
            }
            line += newlines(&c[start..i.min(c.len())]);
        } else if ch == 'r' && matches!(c.get(i + 1), Some('"') | Some('#')) && raw_start(&c, i) {
            // r"…", r#"…"#
            let start = i;
            i += 1;
            let mut hashes = 0;
            while c.get(i) == Some(&'#') {
                hashes += 1;
                i += 1;
            }
            i += 1;
            while i < c.len() {
                if c[i] == '"' && (0..hashes).all(|k| c.get(i + 1 + k) == Some(&'#')) {
                    i += 1 + hashes;
                    break;
                }
                i += 1;
            }
            line += newlines(&c[start..i.min(c.len())]);
        } else if ch == '"' {
            let start = i;
            i += 1;
            while i < c.len() && c[i] != '"' {
                i += if c[i] == '\\' { 2 } else { 1 };
            }
            i += 1;
            line += newlines(&c[start..i.min(c.len())]);
        } else if ch == '\'' {
            // A char literal ('a', '\n', '\u{1F600}') or a lifetime ('a).
            if c.get(i + 1) == Some(&'\\') {
                i += 2;
                while i < c.len() && c[i] != '\'' {
                    i += 1;
                }
                i += 1;
            } else if c.get(i + 2) == Some(&'\'') {
                i += 3;
            } else {
                i += 1;
            }
        } else if ch.is_alphanumeric() || ch == '_' {
            let start = i;
            while i < c.len() && (c[i].is_alphanumeric() || c[i] == '_') {
                i += 1;
            }
            let word: String = c[start..i].iter().collect();
            // b"…" and b'…' are literals; the loop above stopped at the quote.
            if !(word == "b" && matches!(c.get(i), Some('"') | Some('\''))) {
                out.push((Tok::Ident(word), line));
            }
        } else if ch == ':' && c.get(i + 1) == Some(&':') {
            out.push((Tok::Path, line));
            i += 2;
        } else {
            out.push((Tok::Punct(ch), line));
            i += 1;
        }
    }
    out
}

/// Whether the `r` at `i` opens a raw string (not the end of an identifier).
fn raw_start(c: &[char], i: usize) -> bool {
    let after_ident = i > 0 && (c[i - 1].is_alphanumeric() || c[i - 1] == '_');
    let mut j = i + 1;
    while c.get(j) == Some(&'#') {
        j += 1;
    }
    !after_ident && c.get(j) == Some(&'"')
}

/// Every path of a use tree or expression path starting after the `::` at
/// `i`, as its segments after the root (`crate::{a::{b, c}, d}`: `a::b`,
/// `a::c`, `d`).
fn paths_from(t: &[(Tok, usize)], mut i: usize, prefix: Vec<String>) -> Vec<Vec<String>> {
    let mut segs = prefix;
    loop {
        // t[i] is a `::`.
        match t.get(i + 1).map(|x| &x.0) {
            Some(Tok::Ident(id)) => {
                segs.push(id.clone());
                if t.get(i + 2).map(|x| &x.0) == Some(&Tok::Path) {
                    i += 2;
                    continue;
                }
                return vec![segs];
            }
            Some(Tok::Punct('{')) => {
                let mut out = Vec::new();
                let mut j = i + 2;
                // Each member: an identifier path, `self`, or `*`.
                while let Some((tok, _)) = t.get(j) {
                    match tok {
                        Tok::Punct('}') => break,
                        Tok::Ident(id) if id == "self" => out.push(segs.clone()),
                        Tok::Ident(id) => {
                            let mut member = segs.clone();
                            member.push(id.clone());
                            if t.get(j + 1).map(|x| &x.0) == Some(&Tok::Path) {
                                out.extend(paths_from(t, j + 1, member));
                            } else {
                                out.push(member);
                            }
                        }
                        _ => {}
                    }
                    // Skip to the next member of this group.
                    let mut depth = 0;
                    while let Some((tok, _)) = t.get(j) {
                        match tok {
                            Tok::Punct('{') => depth += 1,
                            Tok::Punct('}') if depth == 0 => break,
                            Tok::Punct('}') => depth -= 1,
                            Tok::Punct(',') if depth == 0 => {
                                j += 1;
                                break;
                            }
                            _ => {}
                        }
                        j += 1;
                    }
                }
                return out;
            }
            _ => return vec![segs],
        }
    }
}

// ----------------------------------------------------------------------
// The graph.

/// One module file: its path in the crate and its text.
struct Module {
    path: Vec<String>,
    file: String,
    text: String,
}

fn node(path: &[String]) -> String {
    if path.is_empty() {
        "main".to_owned()
    } else {
        path.join("::")
    }
}

/// Reads every `.rs` file under `src` as a module.
fn read_modules(src: &Path) -> Vec<Module> {
    let mut files = Vec::new();
    let mut stack = vec![src.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for e in std::fs::read_dir(&dir).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "rs") {
                files.push(p);
            }
        }
    }
    files.sort();
    files
        .into_iter()
        .map(|p: PathBuf| {
            let rel = p.strip_prefix(src).unwrap();
            let mut path: Vec<String> = rel
                .with_extension("")
                .components()
                .map(|c| c.as_os_str().to_string_lossy().into_owned())
                .collect();
            if path.last().is_some_and(|l| l == "mod") || path == ["main"] || path == ["lib"] {
                path.pop();
            }
            Module {
                path,
                file: rel.display().to_string(),
                text: std::fs::read_to_string(&p).unwrap(),
            }
        })
        .collect()
}

/// An edge and where it was first seen (`file:line`).
type Edges = BTreeMap<(String, String), String>;

/// The dependency graph of `modules`.
fn graph(modules: &[Module]) -> Edges {
    let known: BTreeSet<Vec<String>> = modules.iter().map(|m| m.path.clone()).collect();
    // `#[macro_export] macro_rules! name` lives at the crate root, but
    // depends on the module that defines it.
    let mut macros: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for m in modules {
        let t = tokens(&m.text);
        for w in t.windows(4) {
            if w[0].0 == Tok::Ident("macro_rules".into()) && w[1].0 == Tok::Punct('!') {
                if let Tok::Ident(name) = &w[2].0 {
                    macros.insert(name.clone(), m.path.clone());
                }
            }
        }
    }
    // The longest module prefix of a crate-rooted path.
    let resolve = |segs: &[String]| -> Vec<String> {
        for n in (1..=segs.len()).rev() {
            if known.contains(&segs[..n]) {
                return segs[..n].to_vec();
            }
        }
        match segs.first().and_then(|s| macros.get(s)) {
            Some(home) => home.clone(),
            None => Vec::new(),
        }
    };
    let mut edges = Edges::new();
    for m in modules {
        let t = tokens(&m.text);
        // Submodules this file declares (`mod y;`).
        let children: BTreeSet<String> = t
            .windows(3)
            .filter(|w| w[0].0 == Tok::Ident("mod".into()) && w[2].0 == Tok::Punct(';'))
            .filter_map(|w| match &w[1].0 {
                Tok::Ident(n) => Some(n.clone()),
                _ => None,
            })
            .collect();
        // Inline modules (`mod tests { … }`) open at a brace depth.
        let mut inline: Vec<usize> = Vec::new();
        let mut depth = 0usize;
        for i in 0..t.len() {
            match &t[i].0 {
                Tok::Punct('{') => {
                    let opens_mod = i >= 2
                        && t[i - 2].0 == Tok::Ident("mod".into())
                        && matches!(t[i - 1].0, Tok::Ident(_));
                    if opens_mod {
                        inline.push(depth);
                    }
                    depth += 1;
                }
                Tok::Punct('}') => {
                    depth = depth.saturating_sub(1);
                    if inline.last() == Some(&depth) {
                        inline.pop();
                    }
                }
                _ => {}
            }
            let Tok::Ident(first) = &t[i].0 else {
                continue;
            };
            if t.get(i + 1).map(|x| &x.0) != Some(&Tok::Path) {
                continue;
            }
            if i > 0 && matches!(t[i - 1].0, Tok::Path | Tok::Punct('.')) {
                continue;
            }
            let target = match first.as_str() {
                "crate" => paths_from(&t, i + 1, Vec::new())
                    .iter()
                    .map(|p| resolve(p))
                    .collect::<Vec<_>>(),
                "super" => {
                    // How far up: `super::super::…`.
                    let (mut ups, mut j) = (1, i + 1);
                    while t.get(j + 1).map(|x| &x.0) == Some(&Tok::Ident("super".into()))
                        && t.get(j + 2).map(|x| &x.0) == Some(&Tok::Path)
                    {
                        ups += 1;
                        j += 2;
                    }
                    if ups <= inline.len() {
                        continue; // still inside this file
                    }
                    let keep = m.path.len().saturating_sub(ups - inline.len());
                    let base = m.path[..keep].to_vec();
                    paths_from(&t, j, base.clone())
                        .iter()
                        .map(|p| resolve(p))
                        .collect()
                }
                name if inline.is_empty() && (children.contains(name) || name == "self") => {
                    let base = m.path.clone();
                    let start = if name == "self" {
                        base
                    } else {
                        let mut b = base;
                        b.push(name.to_owned());
                        b
                    };
                    paths_from(&t, i + 1, start)
                        .iter()
                        .map(|p| resolve(p))
                        .collect()
                }
                _ => continue,
            };
            for to in target {
                if to != m.path {
                    edges
                        .entry((node(&m.path), node(&to)))
                        .or_insert_with(|| format!("{}:{}", m.file, t[i].1));
                }
            }
        }
    }
    edges
}

/// The cycles of a graph: one per strongly connected component with more
/// than one node (Tarjan), each as a shortest closed walk `a, b, …, a`
/// through the component's first node.
fn cycles(edges: &Edges) -> Vec<Vec<String>> {
    components(edges)
        .into_iter()
        .map(|(_, walk)| walk)
        .collect()
}

/// Every strongly connected component of more than one node, with its
/// members and a cycle through it.
fn components(edges: &Edges) -> Vec<(Vec<String>, Vec<String>)> {
    let mut next: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for (a, b) in edges.keys() {
        next.entry(a).or_default().push(b);
        next.entry(b).or_default();
    }
    struct Tarjan<'a> {
        next: &'a BTreeMap<&'a str, Vec<&'a str>>,
        index: BTreeMap<&'a str, usize>,
        low: BTreeMap<&'a str, usize>,
        stack: Vec<&'a str>,
        on_stack: BTreeSet<&'a str>,
        sccs: Vec<Vec<&'a str>>,
    }
    impl<'a> Tarjan<'a> {
        fn visit(&mut self, v: &'a str) {
            let i = self.index.len();
            self.index.insert(v, i);
            self.low.insert(v, i);
            self.stack.push(v);
            self.on_stack.insert(v);
            let next = self.next;
            for &w in &next[v] {
                if !self.index.contains_key(w) {
                    self.visit(w);
                    let l = self.low[v].min(self.low[w]);
                    self.low.insert(v, l);
                } else if self.on_stack.contains(w) {
                    let l = self.low[v].min(self.index[w]);
                    self.low.insert(v, l);
                }
            }
            if self.low[v] == self.index[v] {
                let mut scc = Vec::new();
                while let Some(w) = self.stack.pop() {
                    self.on_stack.remove(w);
                    scc.push(w);
                    if w == v {
                        break;
                    }
                }
                self.sccs.push(scc);
            }
        }
    }
    let mut t = Tarjan {
        next: &next,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on_stack: BTreeSet::new(),
        sccs: Vec::new(),
    };
    for &v in next.keys() {
        if !t.index.contains_key(v) {
            t.visit(v);
        }
    }
    let mut out = Vec::new();
    for scc in t.sccs.into_iter().filter(|s| s.len() > 1) {
        // A shortest walk from the component's first node back to it,
        // inside the component (breadth first).
        let members: BTreeSet<&str> = scc.iter().copied().collect();
        let start = *members.iter().next().unwrap();
        let mut came_from: BTreeMap<&str, &str> = BTreeMap::new();
        let mut queue = std::collections::VecDeque::from([start]);
        let mut last = None;
        'search: while let Some(v) = queue.pop_front() {
            for &w in &next[v] {
                if !members.contains(w) {
                    continue;
                }
                if w == start {
                    last = Some(v);
                    break 'search;
                }
                if !came_from.contains_key(w) {
                    came_from.insert(w, v);
                    queue.push_back(w);
                }
            }
        }
        let mut walk = vec![start.to_owned()];
        let mut v = last.expect("a component of two or more nodes has a cycle");
        while v != start {
            walk.push(v.to_owned());
            v = came_from[v];
        }
        walk.push(start.to_owned());
        let end = walk.len() - 1;
        walk[1..end].reverse();
        out.push((members.iter().map(|m| m.to_string()).collect(), walk));
    }
    out
}

/// A cycle in words, with where each of its imports is.
fn describe(cycle: &[String], edges: &Edges) -> String {
    let steps: Vec<String> = cycle
        .windows(2)
        .map(|w| {
            format!(
                "  {} -> {} ({})",
                w[0],
                w[1],
                edges[&(w[0].clone(), w[1].clone())]
            )
        })
        .collect();
    format!("{}\n{}", cycle.join(" -> "), steps.join("\n"))
}

pub(crate) fn xtask_src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

#[test]
fn xtask_has_no_import_cycle() {
    let edges = graph(&read_modules(&xtask_src()));
    assert!(
        edges.len() > 20,
        "the scan found only {} imports: is it reading xtask/src?",
        edges.len()
    );
    let found = components(&edges);
    assert!(
        found.is_empty(),
        "xtask's modules import each other in a cycle:\n{}",
        found
            .iter()
            .map(|(members, walk)| format!(
                "{} modules in one cycle: {}\nfor example {}",
                members.len(),
                members.join(", "),
                describe(walk, &edges)
            ))
            .collect::<Vec<_>>()
            .join("\n")
    );
}

/// Every other crate of the workspace (the client, the floor, the codecs,
/// the protocols, the model and the report): no file imports another that
/// imports it back, by the same reading as xtask's. A cycle between files is
/// a room that cannot be understood without the other; the issue that split
/// the client removed the last four, and this keeps them out.
#[test]
fn no_crate_of_the_workspace_has_an_import_cycle() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    let mut srcs = vec![root.join("client/src")];
    for e in std::fs::read_dir(root.join("crates")).unwrap() {
        let src = e.unwrap().path().join("src");
        if src.is_dir() {
            srcs.push(src);
        }
    }
    srcs.sort();
    assert!(
        srcs.len() > 10,
        "found only {srcs:?}: is it reading crates/?"
    );
    let mut found = Vec::new();
    for src in &srcs {
        let edges = graph(&read_modules(src));
        for (members, walk) in components(&edges) {
            found.push(format!(
                "{}: {} modules in one cycle: {}\nfor example {}",
                src.strip_prefix(root).unwrap().display(),
                members.len(),
                members.join(", "),
                describe(&walk, &edges)
            ));
        }
    }
    assert!(found.is_empty(), "import cycles:\n{}", found.join("\n"));
}

#[test]
fn xtask_src_holds_main_rs_and_the_layer_folders_only() {
    let mut outside = Vec::new();
    let mut folders = Vec::new();
    for entry in std::fs::read_dir(xtask_src()).unwrap() {
        let entry = entry.unwrap();
        let name = entry.file_name().to_string_lossy().into_owned();
        if entry.file_type().unwrap().is_dir() {
            folders.push(name);
        } else if name != "main.rs" {
            outside.push(name);
        }
    }
    assert!(
        outside.is_empty(),
        "files at the top of xtask/src, in no layer: {outside:?}; move each into the folder of its layer"
    );
    folders.sort();
    let mut layers: Vec<String> = MAY_IMPORT.iter().map(|(l, _)| l.to_string()).collect();
    layers.sort();
    assert_eq!(
        folders, layers,
        "xtask/src's folders are its layers: a new folder is a new layer, listed in MAY_IMPORT here and in docs/architecture.md"
    );
}

#[test]
fn every_module_imports_only_its_layer_and_those_below() {
    let modules = read_modules(&xtask_src());
    let missing: Vec<String> = modules
        .iter()
        .map(|m| node(&m.path))
        .filter(|n| layer_of(n).is_none())
        .collect();
    assert!(
        missing.is_empty(),
        "modules in no layer: {missing:?}; move each into the folder of its layer"
    );
    let mut wrong = Vec::new();
    for ((a, b), at) in graph(&modules) {
        let (la, lb) = (layer_of(&a).unwrap(), layer_of(&b).unwrap());
        let allowed = MAY_IMPORT.iter().find(|(l, _)| *l == la).unwrap().1;
        if !allowed.contains(&lb) {
            wrong.push(format!("{a} ({la}) imports {b} ({lb}) at {at}"));
        }
    }
    assert!(
        wrong.is_empty(),
        "imports against the layers:\n{}",
        wrong.join("\n")
    );
}

#[test]
fn architecture_md_names_every_module_in_its_layer() {
    let doc = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/architecture.md"),
    )
    .unwrap();
    let section = doc
        .split("## xtask's layers")
        .nth(1)
        .expect("docs/architecture.md has a section `## xtask's layers`");
    let section = section.split("\n## ").next().unwrap();
    for m in read_modules(&xtask_src()) {
        let name = node(&m.path);
        let layer = layer_of(&name).unwrap();
        let line = section
            .lines()
            .find(|l| l.starts_with(&format!("| `{layer}/` |")))
            .unwrap_or_else(|| panic!("no row `| `{layer}/` |` in the layers table"));
        let shown = name.rsplit("::").next().unwrap();
        if shown == layer {
            continue; // the folder's own mod.rs: the row names the folder
        }
        assert!(
            line.contains(&format!("`{shown}`")),
            "the `{layer}/` row of docs/architecture.md does not name `{name}`"
        );
    }
}

// ----------------------------------------------------------------------
// The detector on its own.

fn edges_of(pairs: &[(&str, &str)]) -> Edges {
    pairs
        .iter()
        .map(|(a, b)| ((a.to_string(), b.to_string()), "here:1".to_owned()))
        .collect()
}

#[test]
fn tarjan_finds_a_cycle_and_names_it() {
    let e = edges_of(&[("a", "b"), ("b", "c"), ("c", "a"), ("c", "d"), ("d", "e")]);
    assert_eq!(cycles(&e), vec![vec!["a", "b", "c", "a"]]);
    // Two separate cycles, and a two-node one.
    let e = edges_of(&[("x", "y"), ("y", "x"), ("p", "q"), ("q", "r"), ("r", "p")]);
    assert_eq!(cycles(&e).len(), 2);
    assert!(describe(&["x".into(), "y".into(), "x".into()], &e).contains("y -> x (here:1)"));
}

#[test]
fn tarjan_finds_none_in_a_dag() {
    let e = edges_of(&[("a", "b"), ("a", "c"), ("b", "d"), ("c", "d")]);
    assert!(cycles(&e).is_empty());
}

fn module(path: &str, text: &str) -> Module {
    Module {
        path: if path.is_empty() {
            Vec::new()
        } else {
            path.split("::").map(str::to_owned).collect()
        },
        file: format!("{path}.rs"),
        text: text.to_owned(),
    }
}

fn targets(edges: &Edges, from: &str) -> Vec<String> {
    edges
        .keys()
        .filter(|(a, _)| a == from)
        .map(|(_, b)| b.clone())
        .collect()
}

#[test]
fn the_scan_reads_use_trees_paths_and_macro_arguments_but_not_comments_or_strings() {
    let modules = vec![
        module(
            "",
            "mod a; mod b; mod c; mod d; mod e; mod p; fn main() { b::go(); }",
        ),
        module(
            "a",
            r##"
            use crate::{b::{self, X}, c::*};
            // crate::d::nothing
            /* crate::d::nothing */
            const S: &str = "crate::d::nothing";
            const R: &str = r#"crate::d::"nothing""#;
            fn f<'x>(s: &'x str) -> char { println!("{}", crate::e::g(s)); crate::say!("x"); 'c' }
            "##,
        ),
        module("b", "pub fn go() {}"),
        module("c", "use crate::repo_root;"),
        module("d", ""),
        module("e", ""),
        module("p", "#[macro_export] macro_rules! say { () => {} }"),
    ];
    let e = graph(&modules);
    assert_eq!(targets(&e, "a"), vec!["b", "c", "e", "p"]);
    assert_eq!(targets(&e, "main"), vec!["b"]);
    assert_eq!(targets(&e, "c"), vec!["main"]);
    // c -> main -> b is no cycle; main -> c would make one.
    assert!(cycles(&e).is_empty());
}

#[test]
fn the_scan_resolves_submodules_and_super() {
    let modules = vec![
        module("", "mod report; mod run;"),
        module(
            "report",
            "pub mod html; pub mod tables; pub fn write_all() { html::write(); }",
        ),
        module(
            "report::html",
            "use super::tables::render; fn t() {} #[cfg(test)] mod tests { use super::*; }",
        ),
        module("report::tables", "pub fn render() {}"),
        module("run", "fn f() { crate::report::write_all(); }"),
    ];
    let e = graph(&modules);
    assert_eq!(targets(&e, "report"), vec!["report::html"]);
    // `super::*` in the inline `mod tests` is the file itself.
    assert_eq!(targets(&e, "report::html"), vec!["report::tables"]);
    assert_eq!(targets(&e, "run"), vec!["report"]);
    assert!(cycles(&e).is_empty());
}

#[test]
fn a_cycle_written_in_source_files_fails_with_its_path() {
    // The same pipeline as the real test, on files on disk.
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path();
    std::fs::create_dir_all(src.join("report")).unwrap();
    let files = [
        ("main.rs", "mod report; mod run; mod snapshot;"),
        ("run.rs", "use crate::snapshot::Snapshot;"),
        ("snapshot.rs", "fn f() { crate::report::html::write(); }"),
        ("report/mod.rs", "pub mod html;"),
        ("report/html.rs", "use crate::run::{self, Outcome};"),
    ];
    for (f, text) in files {
        std::fs::write(src.join(f), text).unwrap();
    }
    let edges = graph(&read_modules(src));
    let found = cycles(&edges);
    assert_eq!(
        found,
        vec![vec!["report::html", "run", "snapshot", "report::html"]]
    );
    let text = describe(&found[0], &edges);
    assert!(
        text.contains("snapshot -> report::html (snapshot.rs:1)"),
        "{text}"
    );
    assert!(
        text.contains("report::html -> run (report/html.rs:1)"),
        "{text}"
    );
}
