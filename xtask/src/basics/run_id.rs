//! A run's id, as its containers carry it ([`RunId`]).
//!
//! Apart from the engine layer, which labels containers with it
//! (`engine::docker`), and the scope, which claims engines for it
//! (`engine::scope`): both use it, neither owns it.

use crate::basics::owner::Sharing;

/// A run's id, as its containers' run label and names carry it, with whom
/// the run shares its engine ([`Sharing`]), which its containers carry too.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RunId {
    id: String,
    sharing: Sharing,
}

impl RunId {
    pub fn new(id: String, sharing: Sharing) -> RunId {
        RunId { id, sharing }
    }

    pub fn sharing(&self) -> Sharing {
        self.sharing
    }
}

/// The id as text: container names and the run label are made of it.
impl std::ops::Deref for RunId {
    type Target = str;
    fn deref(&self) -> &str {
        &self.id
    }
}

impl std::fmt::Display for RunId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.id)
    }
}
