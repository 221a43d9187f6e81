//! The project's own golden fixtures (embedded with the `fixtures`
//! feature): the manifest is complete and consistent, and every fixture
//! round-trips through the Rust type its kind names.

use std::collections::BTreeSet;

use devicerail_host_fixtures::{self as fixtures, KINDS, json_equal, round_trip};
use devicerail_host_protocol::UiSnapshot;
use serde_json::Value;

fn all() -> Vec<fixtures::Fixture> {
    fixtures::all().unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn project_fixtures_round_trip() {
    let all = all();
    assert!(!all.is_empty(), "the project manifest lists no fixtures");
    let mut failures = Vec::new();
    for fixture in &all {
        let path = &fixture.entry.path;
        let original: Value = match serde_json::from_str(fixture.json) {
            Ok(v) => v,
            Err(e) => {
                failures.push(format!("{path}: does not parse: {e}"));
                continue;
            }
        };
        match round_trip(&fixture.entry.kind, &original) {
            Ok(back) if json_equal(&original, &back) => {}
            Ok(back) => failures.push(format!("{path}: changed\n  in:  {original}\n  out: {back}")),
            Err(e) => failures.push(format!("{path}: {e}")),
        }
    }
    println!(
        "project fixtures: {}/{} round-trip",
        all.len() - failures.len(),
        all.len()
    );
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn manifest_is_complete_and_consistent() {
    let manifest = fixtures::manifest().unwrap_or_else(|e| panic!("manifest.json: {e}"));
    assert_eq!(manifest.manifest_version, 1);
    assert_eq!(manifest.protocol_version, devicerail_host_protocol::LATEST);
    assert_eq!(manifest.fixture_paths_relative_to, "manifestDirectory");
    assert_eq!(manifest.schema_paths_relative_to, "repositoryRoot");

    let mut problems = Vec::new();
    let mut ids = BTreeSet::new();
    for entry in &manifest.fixtures {
        if !ids.insert(entry.id.as_str()) {
            problems.push(format!("duplicate id {}", entry.id));
        }
        if !KINDS.contains(&entry.kind.as_str()) {
            problems.push(format!("{}: unknown kind {:?}", entry.id, entry.kind));
        }
        if !entry.schema.starts_with("schema/v1/") || !entry.schema.ends_with(".schema.json") {
            problems.push(format!("{}: schema path {:?}", entry.id, entry.schema));
        }
        if entry.model.is_empty() {
            problems.push(format!("{}: empty model", entry.id));
        }
    }

    let listed: BTreeSet<&str> = manifest.fixtures.iter().map(|e| e.path.as_str()).collect();
    if listed.len() != manifest.fixtures.len() {
        problems.push("two entries share a path".into());
    }
    let files: BTreeSet<&str> = fixtures::paths()
        .filter(|p| *p != "manifest.json")
        .collect();
    for unlisted in files.difference(&listed) {
        problems.push(format!("{unlisted} is not listed in the manifest"));
    }
    for missing in listed.difference(&files) {
        problems.push(format!("{missing} is listed but not present"));
    }

    let used: BTreeSet<&str> = manifest.fixtures.iter().map(|e| e.kind.as_str()).collect();
    let uncovered: Vec<&&str> = KINDS.iter().filter(|k| !used.contains(**k)).collect();
    if !uncovered.is_empty() {
        problems.push(format!("kinds without a fixture: {uncovered:?}"));
    }
    println!(
        "project manifest: {} fixtures, {} files, {}/{} kinds covered",
        manifest.fixtures.len(),
        files.len(),
        KINDS.len() - uncovered.len(),
        KINDS.len()
    );
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn fixture_files_are_pretty_printed() {
    let mut problems = Vec::new();
    for path in fixtures::paths() {
        let text = fixtures::file(path).unwrap_or_default();
        if !text.ends_with("}\n") && !text.ends_with("]\n") || text.ends_with("\n\n") {
            problems.push(format!("{path}: must end with exactly one newline"));
        }
        if text.contains('\t') || text.contains('\r') {
            problems.push(format!("{path}: tabs or carriage returns"));
        }
        for (n, line) in text.lines().enumerate() {
            let indent = line.len() - line.trim_start_matches(' ').len();
            if indent % 2 != 0 {
                problems.push(format!("{path}:{}: indent is not a multiple of two", n + 1));
                break;
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn ui_snapshots_are_structurally_valid() {
    let mut checked = 0;
    for fixture in all() {
        let value: Value = serde_json::from_str(fixture.json).unwrap_or_default();
        let snapshot = match fixture.entry.kind.as_str() {
            "uiSnapshot" => value,
            "uiSnapshotGetResponse" => value["result"].clone(),
            _ => continue,
        };
        let snapshot: UiSnapshot = serde_json::from_value(snapshot)
            .unwrap_or_else(|e| panic!("{}: {e}", fixture.entry.path));
        assert_eq!(snapshot.validate(), Ok(()), "{}", fixture.entry.path);
        checked += 1;
    }
    assert!(checked >= 2, "expected the UI snapshot fixtures");
}
