//! The type-only TypeScript package `@devicerail-host/protocol`, generated
//! from the same schemas as `schema/v1/` into [`TYPESCRIPT_DIR`].
//!
//! Generated files (every `*.ts` file of the package folder is one of them;
//! any other is stale):
//!
//! - `index.d.ts`: one exported type per schema document and per shared
//!   `$defs` entry (one namespace: a name always has one definition), and
//!   the `Methods` map from each method name to its params, result,
//!   request and response types;
//! - `test/fixtures.ts`: every golden fixture of `fixtures/manifest.json` as
//!   an object literal with `satisfies <Type>`;
//! - `test/broken.ts`: broken copies of fixtures under `// @ts-expect-error`
//!   and valid variants (listed in [`BROKEN`] and [`VALID`]).
//!
//! `package.json` and `package-lock.json` are written by hand (the lock by
//! npm); this module only keeps their `version` equal to the crate version.
//!
//! How schemas map to types:
//!
//! - `$ref: #/$defs/X` → `X`; `const`/`enum` → literal unions (per-variant
//!   descriptions are kept as member docs); `type: [T, "null"]` and
//!   `anyOf: [X, {type: null}]` → `T | null`; untyped schemas → `unknown`.
//! - Objects are closed: `additionalProperties: false` and objects the
//!   schema leaves open both become object types without an index
//!   signature, so excess-property checks catch typos in literals; the open
//!   ones say so in their TSDoc. A closed object without properties is
//!   `{ [key: string]: never }` (TypeScript accepts any object for `{}`).
//! - `oneOf`/`anyOf` of objects sharing a required constant member (`type`,
//!   `kind`, `outcome`, …) → a discriminated union. Objects without such a
//!   tag (success or failure responses) → an exclusive union: each member
//!   gets `key?: never` for the other members' keys, so `result` and
//!   `error` cannot appear together.
//! - Bounds, lengths, `format` and `default` → TSDoc tags.
//! - Anything else (another keyword, an external `$ref`, a schema for
//!   additional properties, …) is an [`EmitError`], never `unknown`.

mod cases;
mod emit;

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use devicerail_host_fixtures as fixtures;
use devicerail_host_protocol::LATEST;
use devicerail_host_protocol::methods::METHODS;
use serde_json::Value;

pub use cases::{BROKEN, Case, Edit, EditError, VALID, apply};
pub use emit::EmitError;
use emit::{Registry, fail, render_doc};

use crate::{DOCUMENTS, Difference, SCHEMA_DIR, workspace_root};

/// Where the package lives, relative to the workspace root.
pub const TYPESCRIPT_DIR: &str = "schema/typescript";
/// The npm package name.
pub const PACKAGE_NAME: &str = "@devicerail-host/protocol";
/// The package version: always the crate (workspace) version.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");
/// The type declarations.
pub const TYPES_FILE: &str = "index.d.ts";
/// Every golden fixture with `satisfies`.
pub const FIXTURES_FILE: &str = "test/fixtures.ts";
/// Broken copies and valid variants of fixtures.
pub const BROKEN_FILE: &str = "test/broken.ts";
/// The hand-written package manifest whose `version` is kept in sync.
pub const PACKAGE_JSON: &str = "package.json";
/// npm's lockfile; its root package `version` is kept in sync.
pub const PACKAGE_LOCK: &str = "package-lock.json";

/// The checked-in package folder.
pub fn typescript_dir() -> PathBuf {
    workspace_root().join(TYPESCRIPT_DIR)
}

/// What the package is generated from.
#[derive(Debug, Clone)]
pub struct Source {
    /// Every schema document, in [`DOCUMENTS`] order; each becomes an
    /// exported type of `index.d.ts`.
    pub documents: Vec<SourceDocument>,
    /// Every protocol method, in the method table's order; they make up the
    /// `Methods` map.
    pub methods: Vec<SourceMethod>,
    /// Every golden fixture, in manifest order; each becomes a literal of
    /// `test/fixtures.ts`.
    pub fixtures: Vec<SourceFixture>,
    /// `major.minor` of the protocol the schemas describe.
    pub protocol: String,
}

/// One schema document.
#[derive(Debug, Clone)]
pub struct SourceDocument {
    /// The exported type name (the document's `title`, such as
    /// `DeviceInfo`).
    pub name: String,
    /// The complete document (with `$id`, `$defs`, …).
    pub schema: Value,
    /// The document this one repeats under another name
    /// (`DeviceConnectResult` → `DeviceInfo`).
    pub alias_of: Option<String>,
}

/// One method and the names of its message types.
#[derive(Debug, Clone)]
pub struct SourceMethod {
    /// The wire method name, such as `device.observe`.
    pub name: String,
    /// The type name of its request message (`DeviceObserveRequest`).
    pub request: String,
    /// The type name of its response message (`DeviceObserveResponse`).
    pub response: String,
    /// The success member of the response (a `$defs` entry).
    pub success: String,
}

/// One golden fixture.
#[derive(Debug, Clone)]
pub struct SourceFixture {
    /// The manifest id, such as `device.observation.v1`.
    pub id: String,
    /// The fixture file, relative to the `fixtures/` folder.
    pub path: String,
    /// The type its manifest schema maps to.
    pub type_name: String,
    /// The fixture's JSON text, as embedded.
    pub json: String,
}

impl Source {
    /// The schemas of [`DOCUMENTS`], the protocol crate's method table and
    /// its embedded fixtures.
    pub fn current() -> Result<Self, EmitError> {
        let documents = DOCUMENTS
            .iter()
            .map(|d| SourceDocument {
                name: d.name.to_owned(),
                schema: d.schema(),
                alias_of: (d.rust_type != d.name
                    && DOCUMENTS.iter().any(|o| o.name == d.rust_type))
                .then(|| d.rust_type.to_owned()),
            })
            .collect();
        let methods = METHODS
            .iter()
            .map(|m| {
                let prefix: String = m.name.split('.').map(upper_first).collect();
                SourceMethod {
                    name: m.name.to_owned(),
                    request: format!("{prefix}Request"),
                    response: format!("{prefix}Response"),
                    success: format!("{prefix}Success"),
                }
            })
            .collect();
        let all = fixtures::all().or_else(|e| fail("fixtures/manifest.json", e.to_string()))?;
        let fixtures = all
            .into_iter()
            .map(|f| {
                let file = f.entry.schema_file();
                let doc = DOCUMENTS.iter().find(|d| d.file_name() == file);
                match doc {
                    Some(doc) if f.entry.schema == format!("{SCHEMA_DIR}/{file}") => {
                        Ok(SourceFixture {
                            id: f.entry.id.clone(),
                            path: f.entry.path.clone(),
                            type_name: doc.name.to_owned(),
                            json: f.json.to_owned(),
                        })
                    }
                    _ => fail(
                        &f.entry.id,
                        format!("schema {} is not a generated document", f.entry.schema),
                    ),
                }
            })
            .collect::<Result<_, _>>()?;
        Ok(Self {
            documents,
            methods,
            fixtures,
            protocol: format!("{}.{}", LATEST.major, LATEST.minor),
        })
    }
}

/// The generated files, by path relative to the package folder, and what
/// they hold.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Output {
    /// Each generated file's text, by path relative to the package folder
    /// ([`TYPES_FILE`], [`FIXTURES_FILE`], [`BROKEN_FILE`]).
    pub files: BTreeMap<String, String>,
    /// Exported types derived from the schemas (without `Methods`).
    pub types: usize,
    /// Entries of the `Methods` map.
    pub methods: usize,
    /// Fixture literals in [`FIXTURES_FILE`].
    pub fixtures: usize,
    /// Broken copies under `// @ts-expect-error` in [`BROKEN_FILE`].
    pub broken: usize,
    /// Valid variants (expected to type-check) in [`BROKEN_FILE`].
    pub valid: usize,
}

fn upper_first(word: &str) -> String {
    let mut chars = word.chars();
    match chars.next() {
        Some(c) => c.to_ascii_uppercase().to_string() + chars.as_str(),
        None => String::new(),
    }
}

/// `rpc.device-connect.request.v1` → `rpcDeviceConnectRequestV1`.
fn identifier(id: &str) -> String {
    let mut words = id
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|w| !w.is_empty());
    let first = words.next().unwrap_or("fixture").to_owned();
    let mut out = first;
    for word in words {
        out.push_str(&upper_first(word));
    }
    if out.starts_with(|c: char| c.is_ascii_digit()) {
        out.insert(0, '_');
    }
    out
}

fn header(what: &str, from: &str) -> String {
    format!(
        "// {PACKAGE_NAME} {VERSION}: {what}\n// Generated from {from} by `cargo run -p devicerail-host-schema-gen -- write`; do not edit.\n"
    )
}

/// Generates every file of the package.
pub fn generate(source: &Source) -> Result<Output, EmitError> {
    let registry = Registry::build(&source.documents)?;
    for doc in &source.documents {
        if !registry.contains(&doc.name) {
            return fail(&doc.name, "document has no type");
        }
    }
    let mut index = header(
        &format!(
            "the message types of DeviceRail protocol {} (type-only).",
            source.protocol
        ),
        SCHEMA_DIR,
    );
    index.push_str(&registry.declarations()?);
    index.push_str(&methods(&registry, &source.methods)?);

    let (fixtures_ts, fixtures) = fixtures_file(&registry, source)?;
    let (broken_ts, broken, valid) = broken_file(&registry, source)?;

    let files = BTreeMap::from([
        (TYPES_FILE.to_owned(), index),
        (FIXTURES_FILE.to_owned(), fixtures_ts),
        (BROKEN_FILE.to_owned(), broken_ts),
    ]);
    Ok(Output {
        files,
        types: registry.len(),
        methods: source.methods.len(),
        fixtures,
        broken,
        valid,
    })
}

/// The object body of a named type, for the method map.
fn object_property<'a>(
    registry: &'a Registry,
    type_name: &str,
    property: &str,
) -> Result<(&'a Value, bool), EmitError> {
    let Some(body) = registry.body(type_name) else {
        return fail(type_name, "no such type");
    };
    let Some(schema) = body.get("properties").and_then(|p| p.get(property)) else {
        return fail(type_name, format!("has no `{property}` property"));
    };
    let required = body
        .get("required")
        .and_then(Value::as_array)
        .is_some_and(|r| r.iter().any(|v| v.as_str() == Some(property)));
    Ok((schema, required))
}

/// `export type Methods = { "name": { params; result; request; response } }`.
fn methods(registry: &Registry, methods: &[SourceMethod]) -> Result<String, EmitError> {
    let mut out = String::from("\n");
    out.push_str(&render_doc(
        &[
            "Every method by name: its `params` (optional when a request may omit them), its"
                .into(),
            "`result`, and its complete `request` and `response` messages.".into(),
        ],
        0,
    ));
    out.push_str("export type Methods = {\n");
    let mut seen = BTreeSet::new();
    for method in methods {
        if !seen.insert(&method.name) {
            return fail(&method.name, "method listed twice");
        }
        let (name, _) = object_property(registry, &method.request, "method")?;
        let names_method = name.get("const").or_else(|| name.get("enum")?.get(0));
        if names_method.and_then(Value::as_str) != Some(method.name.as_str()) {
            return fail(
                &method.request,
                format!("is not a `{}` request", method.name),
            );
        }
        for (t, what) in [(&method.response, "response"), (&method.success, "success")] {
            if !registry.contains(t) {
                return fail(&method.name, format!("no {what} type {t}"));
            }
        }
        let (params, params_required) = object_property(registry, &method.request, "params")?;
        let (result, _) = object_property(registry, &method.success, "result")?;
        let at = |t: &str, p: &str| format!("{t}#/properties/{p}");
        let params = registry.ty(params, &at(&method.request, "params"), 4)?;
        let result = registry.ty(result, &at(&method.success, "result"), 4)?;
        let optional = if params_required { "" } else { "?" };
        out.push_str(&format!(
            "  {}: {{\n    params{optional}: {params};\n    result: {result};\n    request: {};\n    response: {};\n  }};\n",
            serde_json::to_string(&method.name).unwrap_or_default(),
            method.request,
            method.response,
        ));
    }
    out.push_str(
        "};\n\n/** The name of every method. */\nexport type MethodName = keyof Methods;\n",
    );
    Ok(out)
}

/// Rejects `__proto__` keys: in an object literal they set the prototype
/// instead of adding a member.
fn check_keys(value: &Value, at: &str) -> Result<(), EmitError> {
    match value {
        Value::Object(map) => {
            if map.contains_key("__proto__") {
                return fail(
                    at,
                    "a `__proto__` key cannot be embedded in an object literal",
                );
            }
            map.values().try_for_each(|v| check_keys(v, at))
        }
        Value::Array(items) => items.iter().try_for_each(|v| check_keys(v, at)),
        _ => Ok(()),
    }
}

fn imports(types: &BTreeSet<&str>) -> String {
    let mut out = String::from("import type {\n");
    for t in types {
        out.push_str(&format!("  {t},\n"));
    }
    out.push_str("} from \"../index.js\";\n");
    out
}

/// `test/fixtures.ts`: the fixture text pasted verbatim (JSON is a valid
/// expression), so literals keep their narrow types and excess-property
/// checks apply. Imported JSON modules would widen literals and skip them.
fn fixtures_file(registry: &Registry, source: &Source) -> Result<(String, usize), EmitError> {
    let mut types = BTreeSet::new();
    let mut names = BTreeSet::new();
    let mut body = String::new();
    for fixture in &source.fixtures {
        let value: Value = serde_json::from_str(&fixture.json)
            .or_else(|e| fail(&fixture.id, format!("does not parse: {e}")))?;
        check_keys(&value, &fixture.id)?;
        if !registry.contains(&fixture.type_name) {
            return fail(&fixture.id, format!("no type {}", fixture.type_name));
        }
        let name = identifier(&fixture.id);
        if !names.insert(name.clone()) {
            return fail(
                &fixture.id,
                format!("two fixtures map to the constant {name}"),
            );
        }
        types.insert(fixture.type_name.as_str());
        body.push_str(&format!(
            "\n/** {} ({}) */\nexport const {name} = {} satisfies {};\n",
            fixture.id,
            fixture.path,
            fixture.json.trim(),
            fixture.type_name
        ));
    }
    let mut out = header(
        "every golden fixture, checked against its type.",
        &format!("{SCHEMA_DIR} and fixtures/manifest.json"),
    );
    out.push_str(&imports(&types));
    out.push_str(&body);
    Ok((out, source.fixtures.len()))
}

/// `test/broken.ts`: one line per case, each broken copy right after its
/// `// @ts-expect-error` directive.
fn broken_file(registry: &Registry, source: &Source) -> Result<(String, usize, usize), EmitError> {
    let mut types = BTreeSet::new();
    let mut body = String::new();
    for (section, cases, prefix) in [
        (
            "Broken copies: tsc must reject each (an unused directive fails with TS2578).",
            BROKEN,
            "broken",
        ),
        ("Valid variants: tsc must accept each.", VALID, "valid"),
    ] {
        body.push_str(&format!("\n// {section}\n"));
        for (i, case) in cases.iter().enumerate() {
            let Some(fixture) = source.fixtures.iter().find(|f| f.id == case.fixture) else {
                return fail(case.fixture, "no such fixture for an edited copy");
            };
            let mut value: Value = serde_json::from_str(&fixture.json)
                .or_else(|e| fail(&fixture.id, format!("does not parse: {e}")))?;
            apply(&mut value, case.edit).or_else(|e| fail(case.fixture, e.to_string()))?;
            check_keys(&value, case.fixture)?;
            if !registry.contains(&fixture.type_name) {
                return fail(&fixture.id, format!("no type {}", fixture.type_name));
            }
            types.insert(fixture.type_name.as_str());
            let directive = if prefix == "broken" {
                "// @ts-expect-error "
            } else {
                "// "
            };
            body.push_str(&format!(
                "{directive}{}: {}\nexport const {prefix}{:02} = {} satisfies {};\n",
                case.fixture,
                case.why,
                i + 1,
                serde_json::to_string(&value).or_else(|e| fail(case.fixture, e.to_string()))?,
                fixture.type_name
            ));
        }
    }
    let mut out = header(
        "edited copies of golden fixtures, one per line.",
        &format!("{SCHEMA_DIR} and fixtures/manifest.json"),
    );
    out.push_str(&imports(&types));
    out.push_str(&body);
    Ok((out, BROKEN.len(), VALID.len()))
}

fn invalid_data(e: impl std::fmt::Display) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, e.to_string())
}

/// Every `*.ts` file under `dir` (outside `node_modules`), relative, with
/// `/` separators.
fn ts_files(dir: &Path, prefix: &str, out: &mut Vec<String>) -> io::Result<()> {
    let entries = match fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(e),
    };
    for entry in entries {
        let entry = entry?;
        let Some(name) = entry.file_name().to_str().map(str::to_owned) else {
            continue;
        };
        let kind = entry.file_type()?;
        if kind.is_dir() && name != "node_modules" && !name.starts_with('.') {
            ts_files(&entry.path(), &format!("{prefix}{name}/"), out)?;
        } else if kind.is_file() && name.ends_with(".ts") {
            out.push(format!("{prefix}{name}"));
        }
    }
    Ok(())
}

/// The `version` of a JSON manifest, if it has one.
fn version_of(text: &str) -> Option<String> {
    let value: Value = serde_json::from_str(text).ok()?;
    value.get("version")?.as_str().map(str::to_owned)
}

/// The root package's versions in the lockfile (top level and
/// `packages[""]`).
fn lock_versions(text: &str) -> Option<(String, String)> {
    let value: Value = serde_json::from_str(text).ok()?;
    let top = value.get("version")?.as_str()?.to_owned();
    let root = value
        .pointer("/packages/")?
        .get("version")?
        .as_str()?
        .to_owned();
    Some((top, root))
}

/// Rewrites the first line that starts with `prefix` (after the first line
/// equal to `after`, if given) to carry `version`, keeping npm's layout.
fn set_version_line(
    text: &str,
    after: Option<&str>,
    prefix: &str,
    version: &str,
) -> Option<String> {
    let mut armed = after.is_none();
    let mut done = false;
    let mut out = String::with_capacity(text.len());
    for line in text.split_inclusive('\n') {
        if !armed && Some(line.trim_end()) == after {
            armed = true;
        } else if armed && !done && line.starts_with(prefix) {
            let rest = &line[prefix.len()..];
            let end = rest.find('"')?;
            out.push_str(prefix);
            out.push_str(version);
            out.push_str(&rest[end..]);
            done = true;
            continue;
        }
        out.push_str(line);
    }
    done.then_some(out)
}

/// `package.json` or the lockfile, as found and as it should be.
struct Manifest {
    name: &'static str,
    /// The text on disk; `None` when the file is missing.
    on_disk: Option<String>,
    /// The text with its version set to [`VERSION`]; `None` when it already
    /// has that version (or is missing).
    synced: Option<String>,
}

/// The package manifest and lockfile with their version set to [`VERSION`].
fn synced_manifests(dir: &Path) -> io::Result<Vec<Manifest>> {
    let mut out = Vec::new();
    for name in [PACKAGE_JSON, PACKAGE_LOCK] {
        let text = match fs::read_to_string(dir.join(name)) {
            Ok(text) => text,
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                out.push(Manifest {
                    name,
                    on_disk: None,
                    synced: None,
                });
                continue;
            }
            Err(e) => return Err(e),
        };
        let up_to_date = if name == PACKAGE_JSON {
            version_of(&text).as_deref() == Some(VERSION)
        } else {
            lock_versions(&text).is_some_and(|(a, b)| a == VERSION && b == VERSION)
        };
        let synced = if up_to_date {
            None
        } else if name == PACKAGE_JSON {
            set_version_line(&text, None, "  \"version\": \"", VERSION)
        } else {
            set_version_line(&text, None, "  \"version\": \"", VERSION).and_then(|t| {
                set_version_line(&t, Some("    \"\": {"), "      \"version\": \"", VERSION)
            })
        };
        if !up_to_date && synced.is_none() {
            return Err(invalid_data(format!(
                "{TYPESCRIPT_DIR}/{name}: cannot find its version to set it to {VERSION}"
            )));
        }
        out.push(Manifest {
            name,
            on_disk: Some(text),
            synced,
        });
    }
    Ok(out)
}

/// Compares `dir` with `expected` without writing anything: generated files
/// that are missing or differ, `*.ts` files that are not generated, and a
/// package manifest or lockfile whose version is not [`VERSION`].
pub fn check_against(dir: &Path, expected: &Output) -> io::Result<Vec<Difference>> {
    let mut differences = Vec::new();
    for (name, text) in &expected.files {
        match fs::read_to_string(dir.join(name)) {
            Ok(on_disk) if on_disk == *text => {}
            Ok(_) => differences.push(Difference::Changed(name.clone())),
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                differences.push(Difference::Missing(name.clone()));
            }
            Err(e) => return Err(e),
        }
    }
    let mut found = Vec::new();
    ts_files(dir, "", &mut found)?;
    for name in found {
        if !expected.files.contains_key(&name) {
            differences.push(Difference::Stale(name));
        }
    }
    for manifest in synced_manifests(dir)? {
        let name = manifest.name.to_owned();
        match (manifest.on_disk, manifest.synced) {
            (None, _) => differences.push(Difference::Missing(name)),
            (Some(_), Some(_)) => differences.push(Difference::Changed(name)),
            (Some(_), None) => {}
        }
    }
    differences.sort();
    Ok(differences)
}

/// Compares `dir` with the package generated from [`Source::current`].
pub fn check(dir: &Path) -> io::Result<Vec<Difference>> {
    let source = Source::current().map_err(invalid_data)?;
    check_against(dir, &generate(&source).map_err(invalid_data)?)
}

/// Brings `dir` up to date: writes missing and changed generated files,
/// removes stale `*.ts` files and sets the manifests' version. Returns what
/// it did. A missing `package.json` or lockfile is an error (they are not
/// generated; restore them from version control or `npm install`).
pub fn write(dir: &Path) -> io::Result<Vec<Difference>> {
    let source = Source::current().map_err(invalid_data)?;
    let expected = generate(&source).map_err(invalid_data)?;
    let differences = check_against(dir, &expected)?;
    let manifests = synced_manifests(dir)?;
    if let Some(missing) = manifests.iter().find(|m| m.on_disk.is_none()) {
        return Err(invalid_data(format!(
            "{TYPESCRIPT_DIR}/{} is missing; it is not generated (restore it from version control)",
            missing.name
        )));
    }
    for difference in &differences {
        match difference {
            Difference::Missing(name) | Difference::Changed(name) => {
                if let Some(text) = expected.files.get(name) {
                    let path = dir.join(name);
                    if let Some(parent) = path.parent() {
                        fs::create_dir_all(parent)?;
                    }
                    fs::write(path, text)?;
                } else if let Some(synced) = manifests
                    .iter()
                    .find(|m| m.name == name)
                    .and_then(|m| m.synced.as_ref())
                {
                    fs::write(dir.join(name), synced)?;
                } else {
                    unreachable!("check_against reports only generated files and manifests");
                }
            }
            Difference::Stale(name) => fs::remove_file(dir.join(name))?,
        }
    }
    Ok(differences)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identifiers() {
        assert_eq!(
            identifier("rpc.device-connect.request.v1"),
            "rpcDeviceConnectRequestV1"
        );
        assert_eq!(identifier("1.x"), "_1X");
    }

    #[test]
    fn version_lines() {
        let pkg = "{\n  \"name\": \"x\",\n  \"version\": \"0.0.1\",\n  \"devDependencies\": {\n    \"version\": \"1\"\n  }\n}\n";
        let out = set_version_line(pkg, None, "  \"version\": \"", "2.0.0").unwrap_or_default();
        assert_eq!(version_of(&out).as_deref(), Some("2.0.0"));
        assert!(out.contains("    \"version\": \"1\""));
        let lock = "{\n  \"name\": \"x\",\n  \"version\": \"0.0.1\",\n  \"packages\": {\n    \"\": {\n      \"name\": \"x\",\n      \"version\": \"0.0.1\"\n    },\n    \"node_modules/y\": {\n      \"version\": \"9.0.0\"\n    }\n  }\n}\n";
        let out = set_version_line(lock, None, "  \"version\": \"", "2.0.0")
            .and_then(|t| {
                set_version_line(&t, Some("    \"\": {"), "      \"version\": \"", "2.0.0")
            })
            .unwrap_or_default();
        assert_eq!(lock_versions(&out), Some(("2.0.0".into(), "2.0.0".into())));
        assert!(out.contains("\"9.0.0\""));
    }

    #[test]
    fn current_source_generates() {
        let source = Source::current().unwrap_or_else(|e| panic!("{e}"));
        let out = generate(&source).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(out.methods, METHODS.len());
        assert_eq!(out.fixtures, source.fixtures.len());
        assert!(out.types >= DOCUMENTS.len());
        let index = &out.files[TYPES_FILE];
        for doc in DOCUMENTS {
            assert!(
                index.contains(&format!("\nexport type {} =", doc.name)),
                "{}",
                doc.name
            );
        }
        for method in METHODS {
            assert!(
                index.contains(&format!("  \"{}\": {{\n", method.name)),
                "{}",
                method.name
            );
        }
        assert!(!index.contains(": any"), "no `any` in the declarations");
        assert_eq!(generate(&source), Ok(out), "deterministic");
    }
}
