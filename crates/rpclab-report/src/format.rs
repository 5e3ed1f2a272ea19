//! Number and name formatting shared by the report's tables, charts and
//! pages, and the two looks of a text table.

use tabled::builder::Builder;
use tabled::settings::object::Columns;
use tabled::settings::{Style, Width};

/// A table in Markdown, or boxed for the terminal.
pub fn table(rows: Builder, markdown: bool) -> String {
    wrapped_table(rows, markdown, &[])
}

/// [`table`], where on the terminal the given columns wrap at the given
/// widths (long reasons must not push the table off-screen).
pub fn wrapped_table(rows: Builder, markdown: bool, wrap: &[(usize, usize)]) -> String {
    let mut t = rows.build();
    if markdown {
        t.with(Style::markdown());
    } else {
        t.with(Style::rounded());
        for &(column, width) in wrap {
            t.modify(Columns::one(column), Width::wrap(width).keep_words(true));
        }
    }
    t.to_string()
}

/// A number at a precision that suits its size.
pub fn fmt_value(v: f64) -> String {
    let a = v.abs();
    if v == 0.0 {
        "0".to_owned()
    } else if a >= 1000.0 {
        format!("{v:.0}")
    } else if a >= 100.0 {
        format!("{v:.1}")
    } else if a >= 1.0 {
        format!("{v:.2}")
    } else {
        format!("{v:.3}")
    }
}

/// Turns a name into a file-name-safe slug (also an SVG/HTML id).
pub fn slug(s: &str) -> String {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slugs_are_file_safe() {
        assert_eq!(slug("Seed 001 · concurrency 20"), "seed-001-concurrency-20");
        assert_eq!(slug("tps (calls/s)"), "tps-calls-s");
    }
}
