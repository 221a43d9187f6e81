//! The checked-in `schema/v1/` and `schema/typescript/` are exactly what the
//! generator produces, and the check notices TypeScript that lags the
//! schemas.

use std::fs;
use std::path::Path;
use std::process::Command;

use devicerail_host_schema_gen::typescript::{
    self, BROKEN_FILE, PACKAGE_JSON, PACKAGE_LOCK, Source, TYPES_FILE, TYPESCRIPT_DIR, VERSION,
    typescript_dir,
};
use devicerail_host_schema_gen::{DOCUMENTS, Difference, SCHEMA_DIR, check, schema_dir};
use serde_json::{Value, json};

fn listed(differences: &[Difference]) -> String {
    differences
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join("\n  ")
}

#[test]
fn schema_folder_is_up_to_date() {
    let differences = check(&schema_dir()).unwrap_or_else(|e| panic!("{SCHEMA_DIR}: {e}"));
    let files = DOCUMENTS.len() + 1;
    println!(
        "schema/v1 up to date: {}/{files} files",
        files
            - differences
                .iter()
                .filter(|d| !matches!(d, Difference::Stale(_)))
                .count()
    );
    assert!(
        differences.is_empty(),
        "{SCHEMA_DIR} is out of date; run `cargo run -p devicerail-host-schema-gen -- write`:\n  {}",
        listed(&differences)
    );
}

#[test]
fn typescript_package_is_up_to_date() {
    let differences =
        typescript::check(&typescript_dir()).unwrap_or_else(|e| panic!("{TYPESCRIPT_DIR}: {e}"));
    println!(
        "{TYPESCRIPT_DIR} up to date: {} differences, version {VERSION}",
        differences.len()
    );
    assert!(
        differences.is_empty(),
        "{TYPESCRIPT_DIR} is out of date; run `cargo run -p devicerail-host-schema-gen -- write`:\n  {}",
        listed(&differences)
    );
}

/// Adds an optional `hint` member to every definition named `name`.
fn add_member(source: &mut Source, name: &str) {
    let edit = |schema: &mut Value| {
        if let Some(properties) = schema["properties"].as_object_mut() {
            properties.insert("hint".into(), json!({"type": "string"}));
        }
    };
    for doc in &mut source.documents {
        if doc.name == name {
            edit(&mut doc.schema);
        }
        if let Some(def) = doc.schema.pointer_mut(&format!("/$defs/{name}")) {
            edit(def);
        }
    }
}

fn copy_manifests(to: &Path) {
    for name in [PACKAGE_JSON, PACKAGE_LOCK] {
        fs::copy(typescript_dir().join(name), to.join(name))
            .unwrap_or_else(|e| panic!("copy {name}: {e}"));
    }
}

#[test]
fn check_reports_typescript_that_lags_the_schemas() {
    let tmp = tempfile::tempdir().unwrap_or_else(|e| panic!("tempdir: {e}"));
    let dir = tmp.path();
    copy_manifests(dir);
    let written = typescript::write(dir).unwrap_or_else(|e| panic!("write: {e}"));
    assert_eq!(written.len(), 3, "{}", listed(&written));
    let current = Source::current().unwrap_or_else(|e| panic!("{e}"));
    let expected = typescript::generate(&current).unwrap_or_else(|e| panic!("{e}"));
    let clean = typescript::check_against(dir, &expected).unwrap_or_else(|e| panic!("{e}"));
    assert!(clean.is_empty(), "{}", listed(&clean));

    // A schema changes (ErrorInfo gains a member) but the TypeScript on disk
    // is the old one.
    let mut changed = current.clone();
    add_member(&mut changed, "ErrorInfo");
    let newer = typescript::generate(&changed).unwrap_or_else(|e| panic!("{e}"));
    assert!(newer.files[TYPES_FILE].contains("  hint?: string;\n"));
    let lagging = typescript::check_against(dir, &newer).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(lagging, [Difference::Changed(TYPES_FILE.into())]);

    // Missing, stale and version drift.
    fs::remove_file(dir.join(BROKEN_FILE)).unwrap_or_else(|e| panic!("rm: {e}"));
    fs::write(dir.join("test/hand-written.ts"), "export {};\n").unwrap_or_else(|e| panic!("{e}"));
    let manifest = fs::read_to_string(dir.join(PACKAGE_JSON)).unwrap_or_default();
    let old = format!("\"version\": \"{VERSION}\"");
    fs::write(
        dir.join(PACKAGE_JSON),
        manifest.replacen(&old, "\"version\": \"0.0.0-old\"", 1),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let drifted = typescript::check(dir).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        drifted,
        [
            Difference::Missing(BROKEN_FILE.into()),
            Difference::Changed(PACKAGE_JSON.into()),
            Difference::Stale("test/hand-written.ts".into()),
        ]
    );
    let repaired = typescript::write(dir).unwrap_or_else(|e| panic!("write: {e}"));
    assert_eq!(repaired, drifted);
    assert!(
        typescript::check(dir)
            .unwrap_or_else(|e| panic!("{e}"))
            .is_empty()
    );
    assert_eq!(
        fs::read_to_string(dir.join(PACKAGE_JSON)).unwrap_or_default(),
        manifest,
        "write restores the version without touching the rest"
    );
}

#[test]
fn write_check_covers_both_folders() {
    let out = Command::new(env!("CARGO_BIN_EXE_devicerail-host-schema-gen"))
        .args(["write", "--check"])
        .output()
        .unwrap_or_else(|e| panic!("devicerail-host-schema-gen: {e}"));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        stdout.contains(&format!("{SCHEMA_DIR}: up to date")),
        "{stdout}"
    );
    assert!(
        stdout.contains(&format!("{TYPESCRIPT_DIR}: up to date")),
        "{stdout}"
    );
}
