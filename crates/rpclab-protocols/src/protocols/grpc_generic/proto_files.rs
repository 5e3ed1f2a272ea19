//! `.proto` files compiled in-process (the client's `--proto FILE` with
//! `-i/--import-paths DIRS`, ghz's flags): the user's service needs no
//! protoc and no descriptor set made beforehand.
//!
//! [`protox`], a protobuf compiler in Rust, parses and checks the file and
//! everything it imports, and hands back the [`DescriptorPool`] the rest
//! of the generic call uses (the same as a protoset's or reflection's).
//!
//! # Where imports are looked for
//!
//! As ghz does: in the import paths given, in their order, then in the
//! folder of the `.proto` file itself, then in the current folder; the
//! well-known types (`google/protobuf/*.proto`) are built in. Every
//! folder is made absolute first, so that `-i proto` and
//! `proto/shop/v1/inventory.proto` agree on the file's name however each
//! was written.
//!
//! # Mistakes are one line
//!
//! A compiler error is a [`miette`] diagnostic with a span; it becomes
//! `FILE:LINE:COLUMN: message`. An import that none of the folders holds
//! names the import and every folder searched, since the fix is nearly
//! always a missing `-i`.

use miette::Diagnostic;
use prost_reflect::DescriptorPool;
use std::path::{Path, PathBuf};

/// The `.proto` file `file` with the import folders `import_paths`
/// (ghz's `-i`, in order), compiled; an error is one line (see the module
/// documentation).
pub fn compile(file: &str, import_paths: &[String]) -> Result<DescriptorPool, String> {
    let path = Path::new(file);
    if !path.is_file() {
        return Err(format!("--proto {file}: no such file"));
    }
    let folders = search_folders(path, import_paths)?;
    let mut compiler = protox::Compiler::new(&folders).map_err(|e| one_line(&e, &folders))?;
    compiler.include_imports(true).include_source_info(true);
    let absolute = absolute(path).map_err(|e| format!("--proto {file}: {e}"))?;
    compiler
        .open_file(&absolute)
        .map_err(|e| one_line(&e, &folders))?;
    Ok(compiler.descriptor_pool())
}

/// The folders imports are looked for in: `import_paths`, the file's own
/// folder, the current folder; each absolute, each once.
fn search_folders(file: &Path, import_paths: &[String]) -> Result<Vec<PathBuf>, String> {
    let mut folders: Vec<PathBuf> = Vec::new();
    for given in import_paths {
        let folder = Path::new(given);
        if !folder.is_dir() {
            return Err(format!(
                "--import-paths: `{given}` is not a folder (give the folders that imports are relative to, comma-separated)"
            ));
        }
        folders.push(absolute(folder).map_err(|e| format!("--import-paths {given}: {e}"))?);
    }
    let own = file
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    for folder in [own, Path::new(".")] {
        folders.push(absolute(folder).map_err(|e| format!("{}: {e}", folder.display()))?);
    }
    let mut unique = Vec::with_capacity(folders.len());
    for folder in folders {
        if !unique.contains(&folder) {
            unique.push(folder);
        }
    }
    Ok(unique)
}

/// `path` made absolute, symbolic links resolved.
fn absolute(path: &Path) -> std::io::Result<PathBuf> {
    std::fs::canonicalize(path)
}

/// A compiler error as one line: where (file, line, column) when the
/// diagnostic has a span, what, and for a missing import where it was
/// looked for.
fn one_line(error: &protox::Error, folders: &[PathBuf]) -> String {
    let message = error.to_string();
    let place = place(error).or_else(|| error.file().map(str::to_owned));
    let mut line = match place {
        Some(place) => format!("--proto: {place}: {message}"),
        None => format!("--proto: {message}"),
    };
    if error.is_file_not_found() && message.starts_with("import ") {
        let searched: Vec<String> = folders.iter().map(|f| f.display().to_string()).collect();
        line.push_str(&format!(
            " in {} or the built-in google/protobuf files; add the folder it is relative to with -i/--import-paths",
            searched.join(", ")
        ));
    }
    for note in error.help().into_iter().map(|h| h.to_string()) {
        line.push_str(&format!(" ({note})"));
    }
    line.replace('\n', " ")
}

/// `FILE:LINE:COLUMN` of the diagnostic's first labelled span, if it has
/// one and its source.
fn place(error: &protox::Error) -> Option<String> {
    let source = error.source_code()?;
    let label = error.labels()?.next()?;
    let contents = source.read_span(label.inner(), 0, 0).ok()?;
    let name = contents
        .name()
        .map(str::to_owned)
        .or_else(|| error.file().map(str::to_owned))?;
    Some(format!(
        "{name}:{}:{}",
        contents.line() + 1,
        contents.column() + 1
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A folder of this test's own with `files` (name, text) in it.
    fn folder(test: &str, files: &[(&str, &str)]) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("rpclab-proto-{}-{test}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        for (name, text) in files {
            let path = dir.join(name);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        }
        dir
    }

    const COMMON: &str =
        "syntax = \"proto3\";\npackage shop.v1;\nmessage Money { string currency = 1; }\n";
    const SERVICE: &str = "syntax = \"proto3\";\npackage shop.v1;\nimport \"shop/v1/common.proto\";\nimport \"google/protobuf/empty.proto\";\n\
        service Till { rpc Pay(Money) returns (google.protobuf.Empty); }\n";

    #[test]
    fn imports_are_found_in_the_import_paths_and_the_well_known_types_are_built_in() {
        let dir = folder(
            "imports",
            &[
                ("proto/shop/v1/common.proto", COMMON),
                ("proto/shop/v1/till.proto", SERVICE),
            ],
        );
        let file = dir.join("proto/shop/v1/till.proto");
        let pool = compile(
            file.to_str().unwrap(),
            &[dir.join("proto").display().to_string()],
        )
        .unwrap();
        let service = pool.get_service_by_name("shop.v1.Till").unwrap();
        let pay = service.methods().next().unwrap();
        assert_eq!(pay.input().full_name(), "shop.v1.Money");
        assert_eq!(pay.output().full_name(), "google.protobuf.Empty");
        assert!(pool.get_file_by_name("shop/v1/till.proto").is_some());
    }

    #[test]
    fn a_missing_import_is_one_line_naming_it_and_the_folders_searched() {
        let dir = folder("missing", &[("proto/shop/v1/till.proto", SERVICE)]);
        let file = dir.join("proto/shop/v1/till.proto");
        let error = compile(
            file.to_str().unwrap(),
            &[dir.join("proto").display().to_string()],
        )
        .unwrap_err();
        let proto = std::fs::canonicalize(dir.join("proto")).unwrap();
        assert!(!error.contains('\n'), "{error}");
        assert!(
            error.starts_with(
                "--proto: shop/v1/till.proto:3:1: import 'shop/v1/common.proto' not found in "
            ),
            "{error}"
        );
        assert!(error.contains(&proto.display().to_string()), "{error}");
        assert!(
            error.contains(&proto.join("shop/v1").display().to_string()),
            "{error}"
        );
        assert!(error.contains("-i/--import-paths"), "{error}");
    }

    #[test]
    fn a_file_that_does_not_compile_is_the_compiler_s_message_with_file_and_line() {
        let broken = "syntax = \"proto3\";\npackage p;\nmessage A {\n  int32 x = 1\n}\n";
        let dir = folder("syntax", &[("a.proto", broken)]);
        let error = compile(dir.join("a.proto").to_str().unwrap(), &[]).unwrap_err();
        assert!(error.starts_with("--proto: a.proto:5:1: "), "{error}");
        assert!(error.contains("expected ';'"), "{error}");

        let unknown = "syntax = \"proto3\";\npackage p;\nmessage A {\n  Missing x = 1;\n}\n";
        let dir = folder("types", &[("a.proto", unknown)]);
        let error = compile(dir.join("a.proto").to_str().unwrap(), &[]).unwrap_err();
        assert!(error.starts_with("--proto: a.proto:4:3: "), "{error}");
        assert!(error.contains("Missing"), "{error}");
        assert!(!error.contains('\n'), "{error}");
    }

    #[test]
    fn a_missing_file_or_import_folder_is_named() {
        assert_eq!(
            compile("/nonexistent/a.proto", &[]).unwrap_err(),
            "--proto /nonexistent/a.proto: no such file"
        );
        let dir = folder("folder", &[("a.proto", COMMON)]);
        let error = compile(
            dir.join("a.proto").to_str().unwrap(),
            &["/nonexistent".into()],
        )
        .unwrap_err();
        assert!(
            error.starts_with("--import-paths: `/nonexistent` is not a folder"),
            "{error}"
        );
    }
}
