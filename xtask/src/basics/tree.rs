//! The files under a folder, at any depth: what the extra certificates of
//! an image build, a scaffold's search for a copied port and `--target`'s
//! IDL folder each walk.

use anyhow::{Context, Result};
use std::path::{Path, PathBuf};

/// Every file under `dir` (its sub-folders' too) that `keep` keeps,
/// sorted.
pub fn files_under(dir: &Path, keep: impl Fn(&Path) -> bool) -> Result<Vec<PathBuf>> {
    let mut files = Vec::new();
    let mut pending = vec![dir.to_owned()];
    while let Some(folder) = pending.pop() {
        let entries = std::fs::read_dir(&folder)
            .with_context(|| format!("cannot read {}", folder.display()))?;
        for entry in entries {
            let path = entry?.path();
            if path.is_dir() {
                pending.push(path);
            } else if keep(&path) {
                files.push(path);
            }
        }
    }
    files.sort();
    Ok(files)
}

/// Whether `path` ends in `.<extension>`.
pub fn has_extension(path: &Path, extension: &str) -> bool {
    path.extension().is_some_and(|e| e == extension)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn files_at_every_depth_are_found_sorted_and_filtered() {
        let dir = tempfile::tempdir().unwrap();
        let nested = dir.path().join("a/b");
        std::fs::create_dir_all(&nested).unwrap();
        for f in ["z.thrift", "a/y.thrift", "a/b/x.thrift", "a/b/notes.txt"] {
            std::fs::write(dir.path().join(f), "").unwrap();
        }
        let found = files_under(dir.path(), |p| has_extension(p, "thrift")).unwrap();
        let relative: Vec<_> = found
            .iter()
            .map(|p| p.strip_prefix(dir.path()).unwrap().display().to_string())
            .collect();
        assert_eq!(relative, ["a/b/x.thrift", "a/y.thrift", "z.thrift"]);
    }
}
