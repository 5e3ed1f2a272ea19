//! A failure a run kept in `results.json`, as data: which server variant
//! failed (or that the run itself stopped), and why. The report finds a
//! variant's failure by its fields; nothing parses the message.

use serde::{Deserialize, Serialize};
use std::fmt;

/// One failure the run kept.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(from = "Stored")]
pub struct RunError {
    pub kind: RunErrorKind,
    /// The server variant whose work failed (with [`RunErrorKind::Variant`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub variant: Option<String>,
    /// Why, as the run said it (its whole error chain).
    pub message: String,
}

/// What a failure cost.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum RunErrorKind {
    /// One server variant's work failed (its remaining cells are lost);
    /// the run went on with the others.
    Variant,
    /// The run itself stopped (Ctrl-C, an engine that never came back, a
    /// build): what was measured before is kept.
    Run,
    /// A snapshot of schema 1 kept its errors as text only; they are kept
    /// as they were, not attributed to a variant.
    Text,
}

impl RunError {
    /// A failure of `server`/`variant`'s work.
    pub fn of_variant(server: &str, variant: &str, message: String) -> RunError {
        RunError {
            kind: RunErrorKind::Variant,
            server: Some(server.to_owned()),
            variant: Some(variant.to_owned()),
            message,
        }
    }

    /// The run itself stopped.
    pub fn of_run(message: String) -> RunError {
        RunError {
            kind: RunErrorKind::Run,
            server: None,
            variant: None,
            message,
        }
    }

    /// Whether this is `server`/`variant`'s failure.
    pub fn is_of(&self, server: &str, variant: &str) -> bool {
        self.kind == RunErrorKind::Variant
            && self.server.as_deref() == Some(server)
            && self.variant.as_deref() == Some(variant)
    }

    /// The message's first line (the error itself, without its chain's
    /// details on later lines).
    pub fn first_line(&self) -> &str {
        self.message.lines().next().unwrap_or_default()
    }
}

impl fmt::Display for RunError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (&self.server, &self.variant) {
            (Some(s), Some(v)) => write!(f, "{s}/{v}: {}", self.message),
            _ => f.write_str(&self.message),
        }
    }
}

/// As `results.json` holds an error: typed, or the text of schema 1.
#[derive(Deserialize)]
#[serde(untagged)]
enum Stored {
    Typed {
        kind: RunErrorKind,
        #[serde(default)]
        server: Option<String>,
        #[serde(default)]
        variant: Option<String>,
        message: String,
    },
    Text(String),
}

impl From<Stored> for RunError {
    fn from(stored: Stored) -> RunError {
        match stored {
            Stored::Typed {
                kind,
                server,
                variant,
                message,
            } => RunError {
                kind,
                server,
                variant,
                message,
            },
            Stored::Text(message) => RunError {
                kind: RunErrorKind::Text,
                server: None,
                variant: None,
                message,
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_variant_s_failure_round_trips_and_is_found_by_its_fields() {
        let e = RunError::of_variant("dubbo-2.6", "2.6-kryo", "exited with code 137\nlog".into());
        let json = serde_json::to_string(&e).unwrap();
        assert_eq!(
            json,
            r#"{"kind":"variant","server":"dubbo-2.6","variant":"2.6-kryo","message":"exited with code 137\nlog"}"#
        );
        let back: RunError = serde_json::from_str(&json).unwrap();
        assert_eq!(back, e);
        assert!(back.is_of("dubbo-2.6", "2.6-kryo"));
        assert!(!back.is_of("dubbo-2.6", "2.6"));
        assert_eq!(back.first_line(), "exited with code 137");
        assert_eq!(
            back.to_string(),
            "dubbo-2.6/2.6-kryo: exited with code 137\nlog"
        );
    }

    #[test]
    fn a_run_s_own_failure_names_no_variant() {
        let e = RunError::of_run("interrupted".into());
        let json = serde_json::to_string(&e).unwrap();
        assert_eq!(json, r#"{"kind":"run","message":"interrupted"}"#);
        assert!(!e.is_of("a", "b"));
    }

    #[test]
    fn schema_1_text_loads_as_text_and_is_not_attributed() {
        let e: RunError = serde_json::from_str(r#""dubbo-2.6/2.6-kryo: exited""#).unwrap();
        assert_eq!(e.kind, RunErrorKind::Text);
        assert!(!e.is_of("dubbo-2.6", "2.6-kryo"));
        assert_eq!(e.to_string(), "dubbo-2.6/2.6-kryo: exited");
    }
}
