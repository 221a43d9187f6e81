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
    // Clients of the host over its protocol (the core only for the attach
    // preamble and, for MCP, the in-process host).
    ("devicerail-host-mcp", 5),
    ("devicerail-host-kube", 5),
    // Replay: the official client, the report's loader for recordings.
    ("devicerail-host-replay", 5),
    ("devicerail-host", 6),
];

/// Third-party crates that only the named workspace crates may depend on
/// (normal dependencies; tests may use anything).
const CONFINED: &[(&str, &[&str])] = &[
    // Argument parsing belongs to the command line.
    ("clap", &["devicerail-host"]),
    // The MCP SDK and the official client serve `devicerail mcp`, and the
    // client drives replay too (it is also the workspace's test support,
    // and the Rust example is a user's program written with it).
    ("rmcp", &["devicerail-host-mcp"]),
    (
        "devicerail-client",
        &[
            "devicerail-host-mcp",
            "devicerail-host-replay",
            "devicerail-host-testing",
            "devicerail-host-example-rust-client",
            "devicerail-host-kube",
        ],
    ),
    // gRPC (the kubelet's device-plugin API) serves `devicerail kube`.
    ("tonic", &["devicerail-host-kube"]),
    ("tonic-prost", &["devicerail-host-kube"]),
    ("prost", &["devicerail-host-kube"]),
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
            &["devicerail-host-mcp", "tonic"],
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
    ]
    .into_iter()
    .map(|p| (p.name.clone(), p))
    .collect();
    assert_eq!(
        layer_breaches(&packages),
        [
            "devicerail-host-core (layer 4) depends on devicerail-host-mcp (layer 5)",
            "devicerail-host-kube (layer 5) depends on devicerail-host-mcp (layer 5)",
            "devicerail-host-store (layer 2) depends on devicerail-host-engine (layer 3)",
        ]
    );
    assert_eq!(
        confinement_breaches(&packages),
        [
            "devicerail-host-core depends on clap",
            "devicerail-host-report depends on prost",
        ]
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
