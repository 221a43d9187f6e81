//! What the compiler cannot see about the shape of the workspace, read from
//! `cargo metadata` (the manifests as cargo resolves them, not source text).
//!
//! Cargo already refuses a dependency cycle between crates, and a crate
//! can only use what it declares. What it cannot refuse is a declaration
//! that points the wrong way: the store depending on the plugin engine, the
//! daemon core on the MCP server, a driver on the host, `clap` compiled
//! into a library, a runtime in the sans-I/O agent crate. Those rules are
//! here.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

/// The host's crates, lowest layer first. A crate may depend only on crates
/// of a lower layer (and on the protocol and the SDK, layer 0).
const HOST_LAYERS: &[(&str, u8)] = &[
    ("devicerail-host-protocol", 0),
    ("devicerail-host-plugin-api", 0),
    ("devicerail-host-sys", 1),
    // Sans-I/O reading of UI trees for agents: the MCP server, the report
    // and replay use it.
    ("devicerail-host-agent", 1),
    ("devicerail-host-store", 2),
    ("devicerail-host-config", 2),
    ("devicerail-host-engine", 3),
    ("devicerail-host-report", 3),
    ("devicerail-host-core", 4),
    // The one way to reach a host as a client: the shared socket or an
    // in-process host (core), the attach preamble, the official client.
    ("devicerail-host-link", 5),
    // Clients of the host over its protocol, through the link.
    ("devicerail-host-kube", 6),
    // Replay: the link, the report's loader for recordings.
    ("devicerail-host-replay", 6),
    // The MCP server: the link, and replay for agents.
    ("devicerail-host-mcp", 7),
    // The lab console: the link, the report and replay for its buttons.
    ("devicerail-host-console", 7),
    ("devicerail-host", 8),
];

/// Third-party crates that only the named workspace crates may depend on
/// (normal dependencies; tests may use anything).
const CONFINED: &[(&str, &[&str])] = &[
    // Argument parsing belongs to the command line.
    ("clap", &["devicerail-host"]),
    // The MCP SDK serves `devicerail mcp`.
    ("rmcp", &["devicerail-host-mcp"]),
    // The official client: the link is the host's one way to a host (it
    // is also the workspace's test support, and the Rust example is a
    // user's program written with it).
    (
        "devicerail-client",
        &[
            "devicerail-host-link",
            "devicerail-host-testing",
            "devicerail-host-example-rust-client",
        ],
    ),
    // gRPC (the kubelet's device-plugin API) serves `devicerail kube`.
    ("tonic", &["devicerail-host-kube"]),
    ("tonic-prost", &["devicerail-host-kube"]),
    ("prost", &["devicerail-host-kube"]),
    // The console's HTTP server and its embedded page.
    ("axum", &["devicerail-host-console"]),
    ("include_dir", &["devicerail-host-console"]),
    // Bundles are tar archives.
    ("tar", &["devicerail-host-report"]),
];

/// Crates that must stay sans-I/O, with every normal dependency they may
/// have: no runtime, no store, no MCP SDK.
const PURE: &[(&str, &[&str])] = &[(
    "devicerail-host-agent",
    &[
        "devicerail-host-protocol",
        "serde",
        "serde_json",
        "thiserror",
        "sha2",
        "image",
        "unicode-normalization",
    ],
)];

/// One workspace package as the rules see it.
#[derive(Debug, Clone)]
struct Package {
    name: String,
    manifest: PathBuf,
    publish: bool,
    /// Normal (non-dev, non-build) dependencies by name.
    deps: Vec<String>,
    /// Every dependency, dev and build included.
    all_deps: Vec<String>,
}

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .ancestors()
        .nth(2)
        .expect("host/cli/ is two levels below the workspace root")
        .to_path_buf()
}

fn metadata() -> Value {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let out = Command::new(cargo)
        .args([
            "metadata",
            "--format-version",
            "1",
            "--no-deps",
            "--offline",
        ])
        .current_dir(workspace())
        .output()
        .expect("cargo metadata runs");
    assert!(
        out.status.success(),
        "cargo metadata failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("cargo metadata prints JSON")
}

fn packages_of(meta: &Value) -> BTreeMap<String, Package> {
    let mut out = BTreeMap::new();
    for p in meta["packages"].as_array().expect("packages") {
        let name = p["name"].as_str().expect("name").to_owned();
        let deps = p["dependencies"].as_array().expect("dependencies");
        let named = |normal_only: bool| -> Vec<String> {
            deps.iter()
                .filter(|d| !normal_only || d["kind"].is_null())
                .map(|d| d["name"].as_str().expect("dependency name").to_owned())
                .collect()
        };
        out.insert(
            name.clone(),
            Package {
                name,
                manifest: PathBuf::from(p["manifest_path"].as_str().expect("manifest_path")),
                // `publish = false` is an empty registry list.
                publish: !p["publish"].as_array().is_some_and(|r| r.is_empty()),
                deps: named(true),
                all_deps: named(false),
            },
        );
    }
    out
}

/// Every breach of the layer order among `packages`.
fn layer_breaches(packages: &BTreeMap<String, Package>) -> Vec<String> {
    let layer: BTreeMap<&str, u8> = HOST_LAYERS.iter().copied().collect();
    let mut out = Vec::new();
    for p in packages.values() {
        let Some(&mine) = layer.get(p.name.as_str()) else {
            continue;
        };
        for d in &p.deps {
            if let Some(&theirs) = layer.get(d.as_str())
                && theirs >= mine
                && !(mine == 0 && theirs == 0 && p.name == "devicerail-host-plugin-api")
            {
                out.push(format!(
                    "{} (layer {mine}) depends on {d} (layer {theirs})",
                    p.name
                ));
            }
        }
    }
    out
}

/// Every confined crate found outside its users.
fn confinement_breaches(packages: &BTreeMap<String, Package>) -> Vec<String> {
    let mut out = Vec::new();
    for p in packages.values() {
        for (krate, users) in CONFINED {
            if p.deps.iter().any(|d| d == krate) && !users.contains(&p.name.as_str()) {
                out.push(format!("{} depends on {krate}", p.name));
            }
        }
    }
    out
}

/// Every dependency of a pure crate outside its allowance.
fn purity_breaches(packages: &BTreeMap<String, Package>) -> Vec<String> {
    let mut out = Vec::new();
    for (name, allowed) in PURE {
        let Some(p) = packages.get(*name) else {
            out.push(format!("{name} is not a workspace member"));
            continue;
        };
        for d in &p.deps {
            if !allowed.contains(&d.as_str()) {
                out.push(format!("{name} depends on {d}"));
            }
        }
    }
    out
}

/// Every driver or SDK crate (the plugin template, which `plugins new`
/// writes, among the drivers) that depends on a host crate.
fn driver_breaches(packages: &BTreeMap<String, Package>) -> Vec<String> {
    let host: Vec<&str> = HOST_LAYERS
        .iter()
        .filter(|(_, l)| *l > 0)
        .map(|(n, _)| *n)
        .collect();
    let root = workspace();
    let mut out = Vec::new();
    for p in packages.values() {
        let under = |dir: &str| p.manifest.starts_with(root.join(dir));
        let driver = under("plugins") || under("examples/plugin-template");
        if !(driver || under("plugin-api") || under("protocol")) {
            continue;
        }
        for d in &p.all_deps {
            if host.contains(&d.as_str()) {
                out.push(format!("{} depends on the host crate {d}", p.name));
            }
        }
    }
    out
}

#[test]
fn host_crates_depend_only_downwards() {
    let packages = packages_of(&metadata());
    for (name, _) in HOST_LAYERS {
        assert!(packages.contains_key(*name), "{name} is a workspace member");
    }
    let breaches = layer_breaches(&packages);
    assert!(
        breaches.is_empty(),
        "layer order broken:\n{}",
        breaches.join("\n")
    );
}

#[test]
fn heavy_dependencies_stay_with_the_crates_that_use_them() {
    let breaches = confinement_breaches(&packages_of(&metadata()));
    assert!(breaches.is_empty(), "{}", breaches.join("\n"));
}

#[test]
fn the_agent_crate_stays_sans_io() {
    let breaches = purity_breaches(&packages_of(&metadata()));
    assert!(breaches.is_empty(), "{}", breaches.join("\n"));
}

#[test]
fn drivers_and_the_sdk_never_depend_on_the_host() {
    let breaches = driver_breaches(&packages_of(&metadata()));
    assert!(breaches.is_empty(), "{}", breaches.join("\n"));
}

/// Crates that may use `unsafe`: the host's one layer of OS calls, the SDK
/// (its export macro declares the plugin's exported symbol), drivers
/// (which expand that macro and may call C), and the test plugins that
/// misbehave on purpose.
fn may_use_unsafe(p: &Package) -> bool {
    let root = workspace();
    p.name == "devicerail-host-sys"
        || p.name == "devicerail-host-plugin-api"
        || p.manifest.starts_with(root.join("plugins"))
        || p.manifest
            .starts_with(root.join("examples/plugin-template"))
}

/// Every crate that may not use `unsafe` but whose root files do not say
/// `#![forbid(unsafe_code)]`.
fn unsafe_breaches(packages: &BTreeMap<String, Package>) -> Vec<String> {
    let mut out = Vec::new();
    for p in packages.values().filter(|p| !may_use_unsafe(p)) {
        let dir = p.manifest.parent().unwrap_or(Path::new("."));
        for root in ["src/lib.rs", "src/main.rs"] {
            let Ok(text) = std::fs::read_to_string(dir.join(root)) else {
                continue;
            };
            if !text.lines().any(|l| l.trim() == "#![forbid(unsafe_code)]") {
                out.push(format!("{} ({root})", p.name));
            }
        }
    }
    out
}

#[test]
fn only_the_os_layer_sdk_and_drivers_may_use_unsafe() {
    let breaches = unsafe_breaches(&packages_of(&metadata()));
    assert!(
        breaches.is_empty(),
        "without `#![forbid(unsafe_code)]`: {breaches:?}"
    );
}

#[test]
fn every_crate_inherits_the_workspace_lints() {
    let packages = packages_of(&metadata());
    let mut missing = Vec::new();
    for p in packages.values() {
        let text = std::fs::read_to_string(&p.manifest).expect("manifest readable");
        let manifest: toml::Table = text.parse().expect("manifest is TOML");
        let inherits = manifest
            .get("lints")
            .and_then(|l| l.get("workspace"))
            .and_then(toml::Value::as_bool)
            == Some(true);
        if !inherits {
            missing.push(p.name.clone());
        }
    }
    assert!(
        missing.is_empty(),
        "without `[lints] workspace = true`: {missing:?}"
    );
}

#[test]
fn test_support_fakes_and_examples_are_never_published() {
    let packages = packages_of(&metadata());
    let root = workspace();
    for p in packages.values() {
        let never = p.manifest.starts_with(root.join("plugins/testing"))
            || p.manifest.starts_with(root.join("examples"))
            || p.name.contains("fake")
            || p.name.ends_with("-testing");
        if never {
            assert!(!p.publish, "{} must say publish = false", p.name);
        }
    }
    for sdk in ["devicerail-host-protocol", "devicerail-host-plugin-api"] {
        assert!(packages[sdk].publish, "{sdk} is published");
    }
}

#[test]
fn the_rules_catch_what_they_are_for() {
    let pkg = |name: &str, manifest: &str, deps: &[&str]| Package {
        name: name.to_owned(),
        manifest: workspace().join(manifest),
        publish: true,
        deps: deps.iter().map(|d| (*d).to_owned()).collect(),
        all_deps: deps.iter().map(|d| (*d).to_owned()).collect(),
    };
    let packages: BTreeMap<String, Package> = [
        pkg(
            "devicerail-host-store",
            "host/store/Cargo.toml",
            &["devicerail-host-engine"],
        ),
        pkg(
            "devicerail-host-core",
            "host/core/Cargo.toml",
            &["devicerail-host-mcp", "clap"],
        ),
        pkg(
            "devicerail-host-plugin-mock",
            "plugins/mock/Cargo.toml",
            &["devicerail-host-core"],
        ),
        pkg(
            "devicerail-host-engine",
            "host/engine/Cargo.toml",
            &["devicerail-host-store"],
        ),
        pkg(
            "devicerail-host-kube",
            "host/kube/Cargo.toml",
            &["devicerail-host-replay", "tonic"],
        ),
        pkg(
            "devicerail-host-report",
            "host/report/Cargo.toml",
            &["prost"],
        ),
        pkg(
            "devicerail-host-agent",
            "host/agent/Cargo.toml",
            &["devicerail-host-protocol", "tokio"],
        ),
        pkg(
            "devicerail-host-replay",
            "host/replay/Cargo.toml",
            &["devicerail-client"],
        ),
    ]
    .into_iter()
    .map(|p| (p.name.clone(), p))
    .collect();
    assert_eq!(
        layer_breaches(&packages),
        [
            "devicerail-host-core (layer 4) depends on devicerail-host-mcp (layer 7)",
            "devicerail-host-kube (layer 6) depends on devicerail-host-replay (layer 6)",
            "devicerail-host-store (layer 2) depends on devicerail-host-engine (layer 3)",
        ]
    );
    assert_eq!(
        confinement_breaches(&packages),
        [
            "devicerail-host-core depends on clap",
            "devicerail-host-replay depends on devicerail-client",
            "devicerail-host-report depends on prost",
        ]
    );
    // A host crate without the attribute is caught; sys and drivers are not.
    let dir = tempfile::tempdir().expect("tempdir");
    let with = |name: &str, text: &str| {
        let d = dir.path().join(name);
        std::fs::create_dir_all(d.join("src")).expect("mkdir");
        std::fs::write(d.join("src/lib.rs"), text).expect("write");
        Package {
            name: name.to_owned(),
            manifest: d.join("Cargo.toml"),
            publish: true,
            deps: Vec::new(),
            all_deps: Vec::new(),
        }
    };
    let crates: BTreeMap<String, Package> = [
        with("devicerail-host-store", "//! a store\n"),
        with("devicerail-host-sys", "//! the OS layer\n"),
        with(
            "devicerail-host-core",
            "//! the core\n#![forbid(unsafe_code)]\n",
        ),
    ]
    .into_iter()
    .map(|p| (p.name.clone(), p))
    .collect();
    assert_eq!(
        unsafe_breaches(&crates),
        ["devicerail-host-store (src/lib.rs)"]
    );
    assert_eq!(
        purity_breaches(&packages),
        ["devicerail-host-agent depends on tokio"]
    );
    assert_eq!(
        driver_breaches(&packages),
        ["devicerail-host-plugin-mock depends on the host crate devicerail-host-core"]
    );
}
