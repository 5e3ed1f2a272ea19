//! The three parts a run places on CPU sets and engines: the server under
//! test, its registry and the load client.
//!
//! One type instead of strings, so that a container's role label, its
//! name, its CPU set and the manifest's records cannot disagree on the
//! spelling; [`Role::as_str`] is the one spelling on the wire (Docker
//! labels, container names, `manifest.toml`, the `--<role>-cpus` flags).

use std::fmt;

/// A part of a run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Role {
    Server,
    Registry,
    Client,
}

impl Role {
    /// Every role, the server's first (the order engines are listed in).
    pub const ALL: [Role; 3] = [Role::Server, Role::Registry, Role::Client];

    /// The role as labels, names and records spell it.
    pub fn as_str(self) -> &'static str {
        match self {
            Role::Server => "server",
            Role::Registry => "registry",
            Role::Client => "client",
        }
    }
}

/// `roles` as a line says them: `server, registry`.
pub fn joined(roles: &[Role]) -> String {
    roles
        .iter()
        .map(|r| r.as_str())
        .collect::<Vec<_>>()
        .join(", ")
}

impl fmt::Display for Role {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn roles_keep_their_spelling_on_the_wire() {
        let spelled: Vec<String> = Role::ALL.iter().map(Role::to_string).collect();
        assert_eq!(spelled, ["server", "registry", "client"]);
        assert_eq!(joined(&Role::ALL[..2]), "server, registry");
    }
}
