//! With the `fixtures` feature, embeds every file under the workspace's
//! `fixtures/` directory (manifest and golden examples).

use std::env;
use std::fmt::Write as _;
use std::fs;
use std::path::{Path, PathBuf};

fn collect(dir: &Path, root: &Path, out: &mut Vec<String>) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<_> = entries.filter_map(Result::ok).map(|e| e.path()).collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            collect(&path, root, out);
        } else if path.extension().is_some_and(|e| e == "json")
            && let Ok(rel) = path.strip_prefix(root)
        {
            out.push(rel.to_string_lossy().replace('\\', "/"));
        }
    }
}

fn main() {
    println!("cargo::rerun-if-changed=build.rs");
    if env::var_os("CARGO_FEATURE_FIXTURES").is_none() {
        return;
    }
    let manifest_dir =
        PathBuf::from(env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"));
    let root = manifest_dir.join("../fixtures");
    println!("cargo::rerun-if-changed={}", root.display());
    let mut files = Vec::new();
    collect(&root, &root, &mut files);
    let mut code = String::from("&[\n");
    for rel in &files {
        println!("cargo::rerun-if-changed={}", root.join(rel).display());
        let abs = root
            .join(rel)
            .canonicalize()
            .expect("fixture path resolves");
        writeln!(
            code,
            "    ({rel:?}, include_str!({:?})),",
            abs.display().to_string()
        )
        .expect("write to String");
    }
    code.push(']');
    let out =
        PathBuf::from(env::var("OUT_DIR").expect("cargo sets OUT_DIR")).join("fixture_files.rs");
    fs::write(out, code).expect("write generated fixture table");
}
