//! Helpers shared by the schema crate's tests.
#![allow(dead_code)]

pub(crate) mod node;

use std::path::{Path, PathBuf};

use serde_json::Value;

/// Reads and parses a JSON file, panicking with its path on failure.
pub(crate) fn read_json(path: &Path) -> Value {
    let text = std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{} does not parse: {e}", path.display()))
}

/// A schema that does not compile into a validator.
#[derive(Debug)]
pub(crate) struct SchemaCompileError(pub jsonschema::ValidationError<'static>);

impl std::fmt::Display for SchemaCompileError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "schema does not compile: {}", self.0)
    }
}

impl std::error::Error for SchemaCompileError {}

/// A Draft 2020-12 validator that also checks `format` (uuid, ...).
pub(crate) fn validator(schema: &Value) -> Result<jsonschema::Validator, SchemaCompileError> {
    jsonschema::options()
        .should_validate_formats(true)
        .build(schema)
        .map_err(SchemaCompileError)
}

/// Every validation error of `instance`, one line each.
pub(crate) fn errors(validator: &jsonschema::Validator, instance: &Value) -> Vec<String> {
    validator
        .iter_errors(instance)
        .map(|e| {
            format!(
                "{} (at {:?}, schema {:?})",
                e,
                e.instance_path().as_str(),
                e.schema_path().as_str()
            )
        })
        .collect()
}

/// A project schema file (`schema/v1/x.schema.json`) by its repository path.
pub(crate) fn project_schema(repo_path: &str) -> Value {
    read_json(&devicerail_host_schema_gen::workspace_root().join(repo_path))
}

/// The reference folder, or `None` after printing why the caller skips.
pub(crate) fn reference_dir(test: &str) -> Option<PathBuf> {
    match std::env::var_os("DEVICERAIL_REFERENCE_DIR") {
        Some(dir) => Some(PathBuf::from(dir)),
        None => {
            println!("{test}: skipped: DEVICERAIL_REFERENCE_DIR is not set");
            None
        }
    }
}

/// The file name at the end of a manifest `schema` path.
pub(crate) fn schema_file_name(path: &str) -> &str {
    path.rsplit('/').next().unwrap_or(path)
}
