//! No function of xtask is longer than a screenful and a half
//! ([`MOST_LINES`]): a function that long does several things, and its
//! reader keeps them all in mind at once (docs/architecture.md). A body is
//! counted from its `fn` line to its closing brace, tests included; the
//! tokens are the import-cycle check's, so comments and string literals
//! hold no braces that count.

use super::no_import_cycles::{tokens, xtask_src, Tok};
use std::path::Path;

/// The most lines a function of xtask may take.
const MOST_LINES: usize = 120;

/// Each function of `src` with a body: its name, first and last line.
fn functions(src: &str) -> Vec<(String, usize, usize)> {
    let toks = tokens(src);
    let mut found = Vec::new();
    for (i, (tok, line)) in toks.iter().enumerate() {
        let (Tok::Ident(kw), Some((Tok::Ident(name), _))) = (tok, toks.get(i + 1)) else {
            continue;
        };
        if kw != "fn" {
            continue;
        }
        // The body's `{`, unless a `;` ends a declaration first (a trait's
        // method, an extern function); parentheses and brackets nest.
        let mut depth = 0i32;
        let mut open = None;
        for (j, (t, _)) in toks.iter().enumerate().skip(i + 2) {
            match t {
                Tok::Punct('(') | Tok::Punct('[') => depth += 1,
                Tok::Punct(')') | Tok::Punct(']') => depth -= 1,
                Tok::Punct(';') if depth == 0 => break,
                Tok::Punct('{') if depth == 0 => {
                    open = Some(j);
                    break;
                }
                _ => {}
            }
        }
        let Some(open) = open else { continue };
        let mut braces = 0i32;
        for (t, end) in &toks[open..] {
            match t {
                Tok::Punct('{') => braces += 1,
                Tok::Punct('}') => {
                    braces -= 1;
                    if braces == 0 {
                        found.push((name.clone(), *line, *end));
                        break;
                    }
                }
                _ => {}
            }
        }
    }
    found
}

fn rust_files(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

#[test]
fn no_function_of_xtask_is_over_120_lines() {
    let mut files = Vec::new();
    rust_files(&xtask_src(), &mut files);
    let mut long = Vec::new();
    for file in &files {
        let src = std::fs::read_to_string(file).unwrap();
        for (name, first, last) in functions(&src) {
            let lines = last - first + 1;
            if lines > MOST_LINES {
                let shown = file
                    .strip_prefix(env!("CARGO_MANIFEST_DIR"))
                    .unwrap_or(file);
                long.push(format!(
                    "xtask/{}:{first} fn {name}: {lines} lines",
                    shown.display()
                ));
            }
        }
    }
    assert!(
        long.is_empty(),
        "functions over {MOST_LINES} lines (split each into the steps it takes):\n{}",
        long.join("\n")
    );
}

#[test]
fn a_function_s_lines_run_from_fn_to_its_closing_brace() {
    let src = "trait T { fn declared(&self); }\n\
               fn f(x: [u8; 2]) -> u8 {\n\
                   let s = \"}}\"; // }\n\
                   if x[0] > 0 { 1 } else { 2 }\n\
               }\n\
               fn g() {}\n";
    assert_eq!(
        functions(src),
        vec![("f".to_owned(), 2, 5), ("g".to_owned(), 6, 6)]
    );
}
