//! The published reference fixtures round-trip through the project's types.

mod common;

use serde_json::Value;

#[test]
fn reference_fixtures_round_trip() {
    let Some(dir) = common::reference_dir("reference fixtures round-trip") else {
        return;
    };
    let fixtures = dir.join("fixtures");
    let manifest: Value = serde_json::from_str(
        &std::fs::read_to_string(fixtures.join("manifest.json")).expect("reference manifest"),
    )
    .expect("manifest parses");
    let entries = manifest["fixtures"].as_array().expect("fixtures array");
    let mut failures = Vec::new();
    for entry in entries {
        let path = entry["path"].as_str().unwrap_or_default();
        let kind = entry["kind"].as_str().unwrap_or_default();
        let text = std::fs::read_to_string(fixtures.join(path)).expect("fixture file");
        let original: Value = serde_json::from_str(&text).expect("fixture parses");
        match common::round_trip(kind, &original) {
            Ok(back) if common::json_equal(&original, &back) => {}
            Ok(back) => failures.push(format!("{path}: changed\n  in:  {original}\n  out: {back}")),
            Err(e) => failures.push(format!("{path}: {e}")),
        }
    }
    println!(
        "reference fixtures: {}/{} round-trip",
        entries.len() - failures.len(),
        entries.len()
    );
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
