//! Embeds the plugin template that `devicerail plugins new` writes: every
//! file of `examples/plugin-template` (a workspace member, so the template
//! is built and tested like any crate) except build output and lock files,
//! as `(path, bytes)` pairs in `$OUT_DIR/plugin_template.rs`. It reads the
//! template and writes only that file.

use std::path::{Path, PathBuf};

/// File and directory names never embedded.
const LEFT_OUT: &[&str] = &["target", "Cargo.lock", ".DS_Store"];

fn walk(root: &Path, dir: &Path, out: &mut Vec<(String, PathBuf)>) {
    let entries = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("cannot read the plugin template {}: {e}", dir.display()));
    for entry in entries {
        let entry = entry.expect("template directory entry");
        let name = entry.file_name();
        let name = name.to_str().expect("template file names are UTF-8");
        if LEFT_OUT.contains(&name) || name.ends_with(".swp") || name.ends_with('~') {
            continue;
        }
        let path = entry.path();
        if entry.file_type().expect("file type").is_dir() {
            walk(root, &path, out);
        } else {
            let relative = path
                .strip_prefix(root)
                .expect("inside the template")
                .components()
                .map(|c| c.as_os_str().to_str().expect("UTF-8"))
                .collect::<Vec<_>>()
                .join("/");
            out.push((relative, path));
        }
    }
}

fn main() {
    let manifest_dir =
        PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").expect("cargo sets it"));
    let template = manifest_dir.join("../../examples/plugin-template");
    println!("cargo:rerun-if-changed={}", template.display());
    let template = template
        .canonicalize()
        .expect("examples/plugin-template exists beside host/cli");
    let mut files = Vec::new();
    walk(&template, &template, &mut files);
    files.sort();
    let mut code = String::from(
        "/// Every file of the plugin template: its path in the crate, `/`\n\
         /// separated, and its contents.\n\
         pub(crate) static TEMPLATE_FILES: &[(&str, &[u8])] = &[\n",
    );
    for (relative, path) in &files {
        code.push_str(&format!("    ({relative:?}, include_bytes!({path:?})),\n"));
    }
    code.push_str("];\n");
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets it"));
    std::fs::write(out.join("plugin_template.rs"), code).expect("write plugin_template.rs");
}
