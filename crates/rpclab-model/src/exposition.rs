//! What the two text formats dashboards read need of a name or a value:
//! InfluxDB line protocol (<https://docs.influxdata.com/influxdb/v2/reference/syntax/line-protocol/>)
//! and Prometheus' text exposition format
//! (<https://prometheus.io/docs/instrumenting/exposition_formats/>).
//!
//! The client writes a run in both (`rpclab-client ghz -O influx-summary`,
//! `-O prometheus`) and `lab report` a snapshot (`--format influx`,
//! `--format prometheus`); both escape through these.

/// A measurement, tag key, tag value or field key in line protocol: comma,
/// equals sign, space and backslash escaped with a backslash; a newline,
/// which line protocol cannot hold, as `\n`.
pub fn influx_key(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            ',' | '=' | ' ' | '\\' => {
                out.push('\\');
                out.push(c);
            }
            '\n' => out.push_str("\\n"),
            c => out.push(c),
        }
    }
    out
}

/// A Prometheus label value: backslash, double quote and newline escaped.
pub fn prometheus_value(text: &str) -> String {
    text.replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}

/// A Prometheus label (or metric) name made of `text`: `[a-zA-Z_][a-zA-Z0-9_]*`,
/// any other character an underscore.
pub fn prometheus_name(text: &str) -> String {
    let mut name: String = text
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect();
    if name.is_empty() || name.starts_with(|c: char| c.is_ascii_digit()) {
        name.insert(0, '_');
    }
    name
}

/// `{k="v",...}` of the pairs whose value is not empty (`{}`-less when
/// none is).
pub fn prometheus_labels<'a>(pairs: impl IntoIterator<Item = (&'a str, &'a str)>) -> String {
    let all: Vec<String> = pairs
        .into_iter()
        .filter(|(_, v)| !v.is_empty())
        .map(|(k, v)| format!("{}=\"{}\"", prometheus_name(k), prometheus_value(v)))
        .collect();
    if all.is_empty() {
        String::new()
    } else {
        format!("{{{}}}", all.join(","))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_format_escapes_what_its_syntax_reserves() {
        assert_eq!(influx_key("a b,c=d\\"), "a\\ b\\,c\\=d\\\\");
        assert_eq!(influx_key("x\ny"), "x\\ny");
        assert_eq!(prometheus_value("say \"hi\"\n\\"), "say \\\"hi\\\"\\n\\\\");
        assert_eq!(prometheus_name("created by"), "created_by");
        assert_eq!(prometheus_name("1st"), "_1st");
        assert_eq!(prometheus_name(""), "_");
        assert_eq!(
            prometheus_labels([("a", "1"), ("empty", ""), ("b c", "\"")]),
            "{a=\"1\",b_c=\"\\\"\"}"
        );
        assert_eq!(prometheus_labels([("a", "")]), "");
    }
}
