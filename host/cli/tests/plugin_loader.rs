//! Loader-level refusals: `devicerail_host_plugin_api::loader::load` on each
//! deliberately broken library (`plugins/testing/*`, garbage bytes) must
//! return its own `LoadError` variant, and a good plugin loaded in the same
//! process afterwards must still work.

use std::path::{Path, PathBuf};

use devicerail_host_plugin_api::conformance::Suite;
use devicerail_host_plugin_api::ffi::ABI_MAJOR;
use devicerail_host_plugin_api::loader::{self, LoadError, LoadedPlugin};
use devicerail_host_plugin_api::{CallContext, Driver};
use devicerail_host_testing::build_workspace_plugin;

fn load(path: &Path) -> Result<LoadedPlugin, LoadError> {
    loader::load(path, &serde_json::Map::new())
}

fn refusal(path: &Path) -> LoadError {
    match load(path) {
        Ok(plugin) => panic!("{} was loaded as {plugin:?}", path.display()),
        Err(e) => {
            println!("{}: refused: {e}", path.display());
            e
        }
    }
}

/// Bytes that are no shared library of any kind (xorshift, seeded by the
/// clock; the seed is printed so a failure can be replayed).
fn garbage_library(dir: &Path) -> PathBuf {
    let mut state = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0x9e37_79b9_7f4a_7c15, |d| d.as_nanos() as u64)
        | 1;
    println!("garbage seed: {state:#x}");
    let bytes: Vec<u8> = (0..4096)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state >> 24) as u8
        })
        .collect();
    let path = dir.join("x.so");
    std::fs::write(&path, bytes).expect("write garbage");
    path
}

#[test]
fn garbage_bytes_are_not_a_library() {
    let dir = tempfile::tempdir().expect("tempdir");
    let e = refusal(&garbage_library(dir.path()));
    assert!(matches!(e, LoadError::NotALibrary(_)), "{e:?}");
    assert!(
        e.to_string().starts_with("not a loadable shared library: "),
        "{e}"
    );
}

#[test]
fn a_missing_file_is_not_a_library() {
    let dir = tempfile::tempdir().expect("tempdir");
    let e = refusal(&dir.path().join("missing.so"));
    assert!(matches!(e, LoadError::NotALibrary(_)), "{e:?}");
}

#[test]
fn an_ordinary_shared_library_is_not_a_plugin() {
    let path = build_workspace_plugin(
        "devicerail-host-test-plugin-not-a-plugin",
        "test-not-a-plugin",
    );
    let e = refusal(&path);
    assert_eq!(e, LoadError::NotAPlugin);
    assert_eq!(
        e.to_string(),
        "not a DeviceRail plugin: the library exports no plugin root module"
    );
}

#[test]
fn a_foreign_root_module_layout_is_incompatible() {
    let path = build_workspace_plugin("devicerail-host-test-plugin-bad-layout", "test-bad-layout");
    let e = refusal(&path);
    let LoadError::IncompatibleLayout(detail) = &e else {
        panic!("expected IncompatibleLayout, got {e:?}");
    };
    assert!(!detail.is_empty());
    assert!(
        e.to_string().starts_with("incompatible plugin layout: "),
        "{e}"
    );
}

#[test]
fn a_wrong_abi_major_is_refused_before_init() {
    let path = build_workspace_plugin("devicerail-host-test-plugin-bad-abi", "test-bad-abi");
    let e = refusal(&path);
    assert_eq!(
        e,
        LoadError::AbiMismatch {
            plugin: 99,
            host: ABI_MAJOR
        }
    );
    assert_eq!(
        e.to_string(),
        format!("plugin ABI major 99 does not match the host's ABI major {ABI_MAJOR}")
    );
}

#[test]
fn a_panicking_constructor_fails_init() {
    let path = build_workspace_plugin("devicerail-host-test-plugin-init-panic", "test-init-panic");
    let e = refusal(&path);
    let LoadError::InitFailed(detail) = &e else {
        panic!("expected InitFailed, got {e:?}");
    };
    assert_eq!(
        detail,
        "the driver panicked during init: test-init-panic: the constructor always panics"
    );
}

#[test]
fn every_refusal_has_its_own_reason_and_the_mock_still_loads_afterwards() {
    let dir = tempfile::tempdir().expect("tempdir");
    let broken = [
        garbage_library(dir.path()),
        build_workspace_plugin(
            "devicerail-host-test-plugin-not-a-plugin",
            "test-not-a-plugin",
        ),
        build_workspace_plugin("devicerail-host-test-plugin-bad-layout", "test-bad-layout"),
        build_workspace_plugin("devicerail-host-test-plugin-bad-abi", "test-bad-abi"),
        build_workspace_plugin("devicerail-host-test-plugin-init-panic", "test-init-panic"),
    ];
    let mut variants: Vec<std::mem::Discriminant<LoadError>> = Vec::new();
    for path in &broken {
        let e = refusal(path);
        let d = std::mem::discriminant(&e);
        assert!(!variants.contains(&d), "{e:?} repeats a variant");
        variants.push(d);
    }
    let mock = build_workspace_plugin("devicerail-host-plugin-mock", "mock");
    let plugin = load(&mock).expect("the mock loads after the refusals");
    assert_eq!(plugin.id(), "mock");
    Suite::loaded(&plugin)
        .device("mock-1")
        .run()
        .assert_passed();
}

/// The loader does not deduplicate: two copies of one plugin both load
/// (each `dlopen`ed on its own). Refusing the second is the directory
/// scan's job (see `plugins_cli.rs`).
#[test]
fn two_copies_of_the_mock_load_independently() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mock = build_workspace_plugin("devicerail-host-plugin-mock", "mock");
    let a = dir.path().join("a.so");
    let b = dir.path().join("b.so");
    std::fs::copy(&mock, &a).expect("copy");
    std::fs::copy(&mock, &b).expect("copy");
    let first = load(&a).expect("first copy");
    let second = load(&b).expect("second copy");
    assert_eq!(first.id(), second.id());
    let ctx = CallContext::unbounded();
    let device = devicerail_host_plugin_api::protocol::DeviceId::new("mock-1");
    first.connect(&ctx, &device).expect("connect first");
    let listed = second.list_devices(&ctx).expect("list second");
    assert!(
        !listed[0].connected,
        "the copies share state: {listed:?} (they must be separate library instances)"
    );
}

/// Loader bug (`first_lines` in plugin-api's loader): the reason keeps the
/// first six lines of abi_stable's report, which are the header of the
/// compared layout (`Compared <this>: --- Type Layout --- type:PrefixRef<'a,
/// PluginMod> ...`) and never say what differs. The difference is at the
/// end of the report (`Error:mismatched package Expected:
/// devicerail-host-plugin-api Found: devicerail-host-test-plugin-bad-layout`).
#[test]
fn a_layout_refusal_says_what_differs() {
    let path = build_workspace_plugin("devicerail-host-test-plugin-bad-layout", "test-bad-layout");
    let e = refusal(&path);
    let LoadError::IncompatibleLayout(detail) = &e else {
        panic!("expected IncompatibleLayout, got {e:?}");
    };
    assert!(
        detail.contains("mismatched package")
            && detail.contains("devicerail-host-plugin-api")
            && detail.contains("devicerail-host-test-plugin-bad-layout"),
        "the reason does not say what differs: {detail}"
    );
    assert!(!detail.contains("--- Type Layout ---"), "{detail}");
}
