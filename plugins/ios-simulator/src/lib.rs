//! # devicerail-host-plugin-ios-simulator
//!
//! The DeviceRail driver plugin for iOS Simulators (plugin id
//! `ios-simulator`). Discovery, boot, app launch, URL opening and
//! `simctl io` screenshots go through `xcrun simctl`; the UI tree, input
//! and WDA screenshots go through a WebDriverAgent server running on the
//! simulator. Configuration is in the README (settings keys and
//! `DEVICERAIL_*` variables).
//!
//! Modules, by what they hold:
//! * [`config`] — settings and environment variables;
//! * `process` (private) — running `xcrun` with a deadline and
//!   cancellation;
//! * `simctl` (private) — `xcrun simctl` commands and the device listing
//!   format;
//! * [`wda`] — the WebDriverAgent HTTP client;
//! * [`normalize`] — WDA's JSON tree to normalized UI nodes, epochs;
//! * [`pixels`] — points to the screenshot's pixels;
//! * [`actions`] — the action space and argument types;
//! * [`device`] — per-simulator connection state;
//! * [`driver`] — the [`Driver`](devicerail_host_plugin_api::Driver) itself.
//!
//! This crate must never print to stdout (the host's protocol channel),
//! never run a shell, never put typed text on a command line, and never
//! log request bodies or the text of protected Actions (`inputSecret`).

pub mod actions;
pub mod config;
pub mod device;
pub mod driver;
mod errors;
pub mod normalize;
pub mod pixels;
mod png;
mod process;
mod semantic_backend;
mod simctl;
pub mod wda;

pub use config::{Config, ScreenshotSource};
pub use driver::IosSimulatorDriver;

devicerail_host_plugin_api::export_plugin! {
    id: "ios-simulator",
    description: "iOS Simulators through xcrun simctl and WebDriverAgent",
    driver: IosSimulatorDriver::new,
}
