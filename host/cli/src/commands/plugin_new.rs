//! `devicerail plugins new NAME`: writes a driver crate from the plugin
//! template, the crate `examples/plugin-template` that the build script
//! embeds (one source of truth: what the workspace builds and tests is
//! what authors get). The template's names (`hello`, `HelloDriver`,
//! `devicerail_plugin_hello` …) become the new plugin's, its workspace
//! references become the SDK by version, and `--sdk-path` adds a
//! `[patch.crates-io]` section for a local checkout of the SDK.
//!
//! It never overwrites anything: the crate's directory must not exist, and
//! a failure part-way removes what it created.

use std::fs;
use std::path::{Path, PathBuf};

use devicerail_host_config::paths;
use devicerail_host_plugin_api::{SDK_RUST_VERSION, SDK_VERSION, valid_plugin_id};

use crate::args::PlatformArg;

include!(concat!(env!("OUT_DIR"), "/plugin_template.rs"));

/// The package name of a driver crate: this prefix, then the plugin id.
const PACKAGE_PREFIX: &str = "devicerail-plugin-";
/// The longest plugin id `plugins new` takes: the package name must fit
/// the 64 characters crates.io allows.
const MAX_ID: usize = 64 - PACKAGE_PREFIX.len();
/// The template's plugin id, in every form the template spells it.
const TEMPLATE_ID: &str = "hello";
/// How the template's `platform()` names its platform.
const TEMPLATE_PLATFORM: &str = "    Platform::Other {\n        value: \"hello\".into(),\n    }";

/// Why `plugins new` wrote nothing.
#[derive(Debug, thiserror::Error)]
pub(crate) enum NewError {
    /// The name is not a plugin id (or would not make a crate name).
    #[error("{name:?} cannot name a plugin: {reason}")]
    BadName {
        /// The name given.
        name: String,
        /// Why, with a suggestion where there is one.
        reason: NameProblem,
    },
    /// The crate's directory already exists.
    #[error("{0} already exists; plugins new never overwrites (name a new directory with --dir)")]
    Exists(PathBuf),
    /// `--sdk-path` is not a DeviceRail Host checkout.
    #[error(
        "--sdk-path {path} is not a DeviceRail Host checkout: {missing} is missing or is not that crate"
    )]
    NotACheckout {
        /// The path given.
        path: PathBuf,
        /// The manifest that was looked for.
        missing: PathBuf,
    },
    /// The embedded template no longer has what the rewrite expects (a
    /// build of devicerail whose template changed; its tests catch this).
    #[error("the plugin template embedded in this devicerail no longer has {0}")]
    Template(&'static str),
    /// Writing the crate failed (what was written is removed).
    #[error("cannot write {path}: {source}")]
    Write {
        /// The file or directory.
        path: PathBuf,
        /// What the operating system said.
        source: std::io::Error,
    },
    /// The directory could not be made absolute.
    #[error(transparent)]
    Path(#[from] paths::PathError),
}

/// The names of a new plugin, in every form the template needs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Names {
    /// The plugin id (`acme-tv`).
    pub(crate) id: String,
    /// The package (`devicerail-plugin-acme-tv`).
    pub(crate) package: String,
    /// The library (`devicerail_plugin_acme_tv`).
    pub(crate) lib: String,
    /// The driver type's prefix (`AcmeTv`).
    pub(crate) camel: String,
    /// The environment variables' infix (`ACME_TV`).
    pub(crate) screaming: String,
}

impl Names {
    /// The names of plugin `id`, or why `id` cannot be one.
    pub(crate) fn new(id: &str) -> Result<Self, NewError> {
        check_name(id).map_err(|reason| NewError::BadName {
            name: id.to_owned(),
            reason,
        })?;
        let mut camel: String = id
            .split('-')
            .filter(|w| !w.is_empty())
            .map(|w| {
                let mut chars = w.chars();
                chars.next().map_or_else(String::new, |first| {
                    first.to_ascii_uppercase().to_string() + chars.as_str()
                })
            })
            .collect();
        // A type name cannot start with a digit.
        if camel.starts_with(|c: char| c.is_ascii_digit()) {
            camel.insert_str(0, "Plugin");
        }
        Ok(Self {
            id: id.to_owned(),
            package: format!("{PACKAGE_PREFIX}{id}"),
            lib: devicerail_host_plugin_api::library_stem(id),
            camel,
            screaming: id.replace('-', "_").to_ascii_uppercase(),
        })
    }
}

/// Why a name is not a plugin id `plugins new` takes; `hint` is a
/// suggestion (`: try "acme-tv"`) or empty.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum NameProblem {
    #[error("it is empty")]
    Empty,
    #[error("give the plugin id ({id:?}); the package is named {PACKAGE_PREFIX}<id>")]
    PackageName { id: String },
    #[error("a plugin id is lowercase{hint}")]
    Uppercase { hint: String },
    #[error("words of a plugin id are joined with -, not _{hint}")]
    Underscore { hint: String },
    #[error("{c:?} is not allowed: a plugin id is a-z, 0-9 and -{hint}")]
    Character { c: char, hint: String },
    #[error("a plugin id cannot start or end with -{hint}")]
    Dash { hint: String },
    #[error(
        "it has {len} characters, at most {MAX_ID}: the package name {PACKAGE_PREFIX}<id> must fit the 64 characters crates.io allows"
    )]
    TooLong { len: usize },
    #[error("it is not a plugin id (1-64 of a-z, 0-9 and -)")]
    NotAnId,
}

/// Why `name` is not a plugin id `plugins new` takes.
fn check_name(name: &str) -> Result<(), NameProblem> {
    let hint = || {
        let s = name.to_ascii_lowercase().replace(['_', ' ', '.'], "-");
        let s = s.trim_matches('-');
        if !s.is_empty() && valid_plugin_id(s) && s.len() <= MAX_ID {
            format!(": try {s:?}")
        } else {
            String::new()
        }
    };
    if name.is_empty() {
        return Err(NameProblem::Empty);
    }
    if let Some(id) = name.strip_prefix(PACKAGE_PREFIX) {
        return Err(NameProblem::PackageName { id: id.to_owned() });
    }
    if name.chars().any(|c| c.is_ascii_uppercase()) {
        return Err(NameProblem::Uppercase { hint: hint() });
    }
    if name.contains('_') {
        return Err(NameProblem::Underscore { hint: hint() });
    }
    if let Some(c) = name
        .chars()
        .find(|c| !(c.is_ascii_lowercase() || c.is_ascii_digit() || *c == '-'))
    {
        return Err(NameProblem::Character { c, hint: hint() });
    }
    if name.starts_with('-') || name.ends_with('-') {
        return Err(NameProblem::Dash { hint: hint() });
    }
    if name.len() > MAX_ID {
        return Err(NameProblem::TooLong { len: name.len() });
    }
    if !valid_plugin_id(name) {
        return Err(NameProblem::NotAnId);
    }
    Ok(())
}

/// `text` with exactly one `from` replaced by `to`, or the template error
/// naming `what`.
fn replace_once(text: &str, from: &str, to: &str, what: &'static str) -> Result<String, NewError> {
    if text.matches(from).count() == 1 {
        Ok(text.replacen(from, to, 1))
    } else {
        Err(NewError::Template(what))
    }
}

/// The lint tables a driver crate gets for the template's `[lints]
/// workspace = true` (the workspace's lints that are not defaults).
const LINTS: &str =
    "[lints.rust]\nunsafe_op_in_unsafe_fn = \"deny\"\n\n[lints.clippy]\nunwrap_used = \"warn\"\n";

/// The template's `Cargo.toml` for an author's crate: the SDK by version,
/// the SDK's rust-version, the lints spelled out, and `patch` appended.
fn manifest(text: &str, patch: Option<&str>) -> Result<String, NewError> {
    let text = replace_once(
        text,
        "rust-version.workspace = true\n",
        &format!("rust-version = \"{SDK_RUST_VERSION}\"\n"),
        "`rust-version.workspace = true` in Cargo.toml",
    )?;
    let text = replace_once(
        &text,
        "devicerail-host-plugin-api.workspace = true\n",
        &format!("devicerail-host-plugin-api = \"{SDK_VERSION}\"\n"),
        "the SDK dependency `devicerail-host-plugin-api.workspace = true` in Cargo.toml",
    )?;
    let text = replace_once(
        &text,
        "devicerail-host-plugin-api = { workspace = true, features = [\"conformance\"] }\n",
        &format!(
            "devicerail-host-plugin-api = {{ version = \"{SDK_VERSION}\", features = [\"conformance\"] }}\n"
        ),
        "the SDK dev-dependency with feature conformance in Cargo.toml",
    )?;
    let mut text = replace_once(
        &text,
        "[lints]\nworkspace = true\n",
        LINTS,
        "`[lints] workspace = true` in Cargo.toml",
    )?;
    if text.contains("workspace") || text.contains("path =") {
        return Err(NewError::Template(
            "a Cargo.toml without other workspace or path references",
        ));
    }
    if let Some(patch) = patch {
        text.push_str(patch);
    }
    Ok(text)
}

/// `text` with whole-word `word` replaced by `with`, leaving
/// `system.hello` (a protocol method) alone.
fn replace_word(text: &str, word: &str, with: &str) -> String {
    let is_word = |c: char| c.is_ascii_alphanumeric() || c == '_';
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find(word) {
        let (before, after) = (&rest[..at], &rest[at + word.len()..]);
        let bounded = !before.ends_with(is_word) && !after.starts_with(is_word);
        let protocol = before.ends_with("system.");
        out.push_str(before);
        out.push_str(if bounded && !protocol { with } else { word });
        rest = after;
    }
    out.push_str(rest);
    out
}

/// The template's spellings of its names replaced by `names`.
fn substitute(text: &str, names: &Names) -> String {
    let text = text
        .replace("devicerail-plugin-hello", &names.package)
        .replace("devicerail_plugin_hello", &names.lib)
        .replace(
            "DEVICERAIL_HELLO_",
            &format!("DEVICERAIL_{}_", names.screaming),
        )
        .replace("HelloDriver", &format!("{}Driver", names.camel));
    replace_word(&text, TEMPLATE_ID, &names.id)
}

/// The `[patch.crates-io]` section pointing the SDK crates at the checkout
/// `path`.
fn sdk_patch(path: &Path) -> Result<String, NewError> {
    let root = paths::absolute(path)?;
    let mut lines = Vec::new();
    for (package, dir) in [
        ("devicerail-host-protocol", "protocol"),
        ("devicerail-host-plugin-api", "plugin-api"),
    ] {
        let manifest = root.join(dir).join("Cargo.toml");
        let is_it = fs::read_to_string(&manifest)
            .is_ok_and(|text| text.contains(&format!("name = \"{package}\"")));
        if !is_it {
            return Err(NewError::NotACheckout {
                path: path.to_path_buf(),
                missing: manifest,
            });
        }
        lines.push(format!(
            "{package} = {{ path = {} }}",
            toml_string(&root.join(dir).display().to_string())
        ));
    }
    Ok(format!(
        "\n# Build against the DeviceRail SDK of a local checkout instead of the\n\
         # published crates (written by `devicerail plugins new --sdk-path`);\n\
         # remove this section to build against the published SDK.\n\
         [patch.crates-io]\n{}\n",
        lines.join("\n")
    ))
}

/// `s` as a TOML basic string.
fn toml_string(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if c.is_control() => out.push_str(&format!("\\u{:04X}", u32::from(c))),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// Every file of the new crate: its path and contents.
pub(crate) fn render(
    names: &Names,
    platform: PlatformArg,
    patch: Option<&str>,
) -> Result<Vec<(String, Vec<u8>)>, NewError> {
    let mut out = Vec::new();
    for (path, bytes) in TEMPLATE_FILES {
        let Ok(text) = std::str::from_utf8(bytes) else {
            out.push(((*path).to_owned(), bytes.to_vec()));
            continue;
        };
        let mut text = text.to_owned();
        if *path == "Cargo.toml" {
            text = manifest(&text, patch)?;
        }
        if *path == "src/lib.rs" {
            let platform = match platform {
                PlatformArg::Android => Some("    Platform::Android"),
                PlatformArg::Ios => Some("    Platform::Ios"),
                PlatformArg::Web => Some("    Platform::Web"),
                PlatformArg::Other => None,
            };
            if let Some(platform) = platform {
                text = replace_once(
                    &text,
                    TEMPLATE_PLATFORM,
                    platform,
                    "`Platform::Other { value: \"hello\" }` in src/lib.rs",
                )?;
            }
        }
        out.push(((*path).to_owned(), substitute(&text, names).into_bytes()));
    }
    Ok(out)
}

/// `plugins new`: writes the crate of plugin `name` into `dir` (default
/// `./devicerail-plugin-<name>`), which must not exist, and returns the
/// directory and the crate's names.
pub(crate) fn create(
    name: &str,
    dir: Option<&Path>,
    platform: PlatformArg,
    sdk_path: Option<&Path>,
) -> Result<(PathBuf, Names), NewError> {
    let names = Names::new(name)?;
    let dir = match dir {
        Some(d) => d.to_path_buf(),
        None => PathBuf::from(&names.package),
    };
    let dir = paths::absolute(&dir)?;
    let patch = sdk_path.map(sdk_patch).transpose()?;
    let files = render(&names, platform, patch.as_deref())?;
    if fs::symlink_metadata(&dir).is_ok() {
        return Err(NewError::Exists(dir));
    }
    let write_err = |path: &Path| {
        let path = path.to_path_buf();
        move |source| NewError::Write { path, source }
    };
    if let Some(parent) = dir.parent() {
        fs::create_dir_all(parent).map_err(write_err(parent))?;
    }
    fs::create_dir(&dir).map_err(|e| match e.kind() {
        std::io::ErrorKind::AlreadyExists => NewError::Exists(dir.clone()),
        _ => NewError::Write {
            path: dir.clone(),
            source: e,
        },
    })?;
    let written = files.iter().try_for_each(|(path, bytes)| {
        let file = dir.join(path);
        if let Some(parent) = file.parent() {
            fs::create_dir_all(parent).map_err(write_err(parent))?;
        }
        fs::write(&file, bytes).map_err(write_err(&file))
    });
    if let Err(e) = written {
        let _ = fs::remove_dir_all(&dir);
        return Err(e);
    }
    Ok((dir, names))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text_of<'f>(files: &'f [(String, Vec<u8>)], path: &str) -> &'f str {
        let (_, bytes) = files
            .iter()
            .find(|(p, _)| p == path)
            .unwrap_or_else(|| panic!("{path} is not written"));
        std::str::from_utf8(bytes).expect("UTF-8")
    }

    #[test]
    fn names_come_in_every_form() {
        let n = Names::new("acme-tv").expect("valid");
        assert_eq!(n.package, "devicerail-plugin-acme-tv");
        assert_eq!(n.lib, "devicerail_plugin_acme_tv");
        assert_eq!(n.camel, "AcmeTv");
        assert_eq!(n.screaming, "ACME_TV");
        assert_eq!(
            Names::new("3d-printer").expect("valid").camel,
            "Plugin3dPrinter"
        );
        assert!(Names::new(&"a".repeat(MAX_ID)).is_ok());
    }

    #[test]
    fn bad_names_are_refused_with_the_reason() {
        let reason = |name: &str| match Names::new(name) {
            Err(NewError::BadName { reason, .. }) => reason.to_string(),
            other => panic!("{name:?} was not refused: {other:?}"),
        };
        assert_eq!(reason(""), "it is empty");
        assert_eq!(reason("AcmeTV"), "a plugin id is lowercase: try \"acmetv\"");
        assert_eq!(
            reason("acme_tv"),
            "words of a plugin id are joined with -, not _: try \"acme-tv\""
        );
        assert_eq!(
            reason("acme tv"),
            "' ' is not allowed: a plugin id is a-z, 0-9 and -: try \"acme-tv\""
        );
        assert_eq!(
            reason("-tv"),
            "a plugin id cannot start or end with -: try \"tv\""
        );
        assert!(reason("../x").starts_with("'.' is not allowed"));
        assert!(reason("émoji").starts_with("'é' is not allowed"));
        assert_eq!(
            reason("devicerail-plugin-acme"),
            "give the plugin id (\"acme\"); the package is named devicerail-plugin-<id>"
        );
        assert!(reason(&"a".repeat(MAX_ID + 1)).starts_with("it has 47 characters, at most 46"));
    }

    #[test]
    fn the_crate_has_the_new_names_and_none_of_the_template() {
        let names = Names::new("acme-tv").expect("valid");
        let files = render(&names, PlatformArg::Other, None).expect("renders");
        let paths: Vec<&str> = files.iter().map(|(p, _)| p.as_str()).collect();
        for expected in [
            "Cargo.toml",
            "README.md",
            ".gitignore",
            ".github/workflows/ci.yml",
            "src/lib.rs",
            "tests/conformance.rs",
        ] {
            assert!(paths.contains(&expected), "{expected} missing: {paths:?}");
        }
        for (path, bytes) in &files {
            let text = String::from_utf8_lossy(bytes).replace("system.hello", "");
            assert!(
                !text.to_ascii_lowercase().contains("hello"),
                "{path} still says hello:\n{text}"
            );
        }
        let lib = text_of(&files, "src/lib.rs");
        assert!(lib.contains("pub struct AcmeTvDriver"), "{lib}");
        assert!(lib.contains("id: \"acme-tv\","), "{lib}");
        assert!(lib.contains("DEVICE_ID: &str = \"acme-tv-1\""), "{lib}");
        assert!(lib.contains("value: \"acme-tv\".into()"), "{lib}");
        assert!(text_of(&files, "src/config.rs").contains("\"DEVICERAIL_ACME_TV_SIZE\""));
        assert!(text_of(&files, "README.md").contains("\"method\":\"system.hello\""));
    }

    #[test]
    fn the_manifest_names_the_sdk_by_version_without_paths() {
        let names = Names::new("acme-tv").expect("valid");
        let files = render(&names, PlatformArg::Other, None).expect("renders");
        let manifest = text_of(&files, "Cargo.toml");
        let doc: toml::Table = manifest.parse().expect("TOML");
        assert_eq!(
            doc["package"]["name"].as_str(),
            Some("devicerail-plugin-acme-tv")
        );
        assert_eq!(
            doc["package"]["rust-version"].as_str(),
            Some(SDK_RUST_VERSION)
        );
        assert_eq!(
            doc["package"]["rust-version"].as_str(),
            Some(env!("CARGO_PKG_RUST_VERSION"))
        );
        assert_eq!(
            doc["lib"]["name"].as_str(),
            Some("devicerail_plugin_acme_tv")
        );
        assert_eq!(
            doc["dependencies"]["devicerail-host-plugin-api"].as_str(),
            Some(SDK_VERSION)
        );
        let dev = &doc["dev-dependencies"]["devicerail-host-plugin-api"];
        assert_eq!(dev["version"].as_str(), Some(SDK_VERSION));
        assert_eq!(dev["features"][0].as_str(), Some("conformance"));
        assert_eq!(doc["lints"]["clippy"]["unwrap_used"].as_str(), Some("warn"));
        assert!(
            !manifest.contains("workspace") && !manifest.contains("path"),
            "{manifest}"
        );
        assert!(!manifest.contains("[patch"), "{manifest}");
    }

    #[test]
    fn platforms_and_the_sdk_patch_are_written() {
        let names = Names::new("acme-tv").expect("valid");
        let files = render(&names, PlatformArg::Android, None).expect("renders");
        let lib = text_of(&files, "src/lib.rs");
        assert!(
            lib.contains("fn platform() -> Platform {\n    Platform::Android\n}"),
            "{lib}"
        );

        let checkout = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
        let patch = sdk_patch(&checkout).expect("this workspace is a checkout");
        let files = render(&names, PlatformArg::Web, Some(&patch)).expect("renders");
        let doc: toml::Table = text_of(&files, "Cargo.toml").parse().expect("TOML");
        let patched = &doc["patch"]["crates-io"];
        let api = patched["devicerail-host-plugin-api"]["path"]
            .as_str()
            .expect("path");
        assert!(
            Path::new(api).join("src/conformance/mod.rs").is_file(),
            "{api}"
        );
        let protocol = patched["devicerail-host-protocol"]["path"]
            .as_str()
            .expect("path");
        assert!(
            Path::new(protocol).join("Cargo.toml").is_file(),
            "{protocol}"
        );

        let elsewhere = tempfile::tempdir().expect("tempdir");
        assert!(matches!(
            sdk_patch(elsewhere.path()),
            Err(NewError::NotACheckout { .. })
        ));
    }

    #[test]
    fn toml_strings_are_escaped() {
        let text = format!("p = {}", toml_string("a\"b\\c\n"));
        let doc: toml::Table = text.parse().expect("TOML");
        assert_eq!(doc["p"].as_str(), Some("a\"b\\c\n"));
    }

    #[test]
    fn words_are_replaced_whole_and_the_protocol_method_is_kept() {
        assert_eq!(
            replace_word(
                "hello hello-1 [plugins.hello] helloes _hello system.hello",
                "hello",
                "tv"
            ),
            "tv tv-1 [plugins.tv] helloes _hello system.hello"
        );
    }

    #[test]
    fn an_existing_directory_is_never_written() {
        let root = tempfile::tempdir().expect("tempdir");
        let r = create("acme-tv", Some(root.path()), PlatformArg::Other, None);
        assert!(matches!(r, Err(NewError::Exists(_))), "{r:?}");
        assert_eq!(fs::read_dir(root.path()).expect("read").count(), 0);
        let dir = root.path().join("x");
        let (made, names) = create("acme-tv", Some(&dir), PlatformArg::Other, None).expect("new");
        assert_eq!(
            (made.as_path(), names.id.as_str()),
            (dir.as_path(), "acme-tv")
        );
        assert!(dir.join("tests/conformance.rs").is_file());
        let again = create("acme-tv", Some(&dir), PlatformArg::Other, None);
        assert!(matches!(again, Err(NewError::Exists(_))), "{again:?}");
    }
}
