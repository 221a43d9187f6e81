//! The checked-in `schema/v1/` is exactly what the generator produces.

use devicerail_schema_gen::{DOCUMENTS, SCHEMA_DIR, check, schema_dir};

#[test]
fn schema_folder_is_up_to_date() {
    let differences = check(&schema_dir()).unwrap_or_else(|e| panic!("{SCHEMA_DIR}: {e}"));
    let files = DOCUMENTS.len() + 1;
    println!(
        "schema/v1 up to date: {}/{files} files",
        files
            - differences
                .iter()
                .filter(|d| !matches!(d, devicerail_schema_gen::Difference::Stale(_)))
                .count()
    );
    assert!(
        differences.is_empty(),
        "{SCHEMA_DIR} is out of date; run `cargo run -p devicerail-schema-gen -- write`:\n  {}",
        differences
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join("\n  ")
    );
}
