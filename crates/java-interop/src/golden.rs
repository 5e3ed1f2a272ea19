//! A codec crate's `golden/` folder: the vectors Java wrote and the Maven
//! project that wrote them.

use std::path::{Path, PathBuf};

/// The `golden/` folder of one crate.
#[derive(Debug, Clone)]
pub struct Golden {
    dir: PathBuf,
}

impl Golden {
    /// The golden folder of the crate at `manifest_dir`; a test passes
    /// `env!("CARGO_MANIFEST_DIR")`.
    pub fn of(manifest_dir: &str) -> Self {
        Self::at(Path::new(manifest_dir).join("golden"))
    }

    /// A golden folder elsewhere (a protocol's, inside the client).
    pub fn at(dir: PathBuf) -> Self {
        Self { dir }
    }

    /// The folder itself.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The folder of the vectors, `golden/vectors`.
    pub fn vectors(&self) -> PathBuf {
        self.dir.join("vectors")
    }

    /// The Maven project that writes the vectors and verifies Rust's.
    pub fn pom(&self) -> PathBuf {
        self.dir.join("java").join("pom.xml")
    }

    /// The bytes of `vectors/<name>.bin` (`name` may name a subfolder, as
    /// `kryo4/order`).
    pub fn vector(&self, name: &str) -> Vec<u8> {
        self.file(&format!("{name}.bin"))
    }

    /// The bytes of `vectors/<path>`; panics with the path and how to
    /// regenerate the vectors when it cannot be read.
    pub fn file(&self, path: &str) -> Vec<u8> {
        let path = self.vectors().join(path);
        std::fs::read(&path).unwrap_or_else(|e| {
            panic!(
                "{}: {e} (regenerate with {}/regenerate.sh)",
                path.display(),
                self.dir.display()
            )
        })
    }
}
