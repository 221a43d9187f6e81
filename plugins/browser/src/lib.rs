//! # devicerail-host-plugin-browser
//!
//! The browser driver of DeviceRail Host: it starts headless Chromium (or
//! attaches to a running Chrome/Chromium) and drives one page per device
//! over the Chrome DevTools Protocol — raw CDP on a WebSocket, with typed
//! wrappers of our own for the few domains used ([`cdp`]).
//!
//! * Devices are `platform: web`, one per configured browser
//!   ([`config`]); `connect` launches ([`launch`]) or attaches
//!   (`endpoint`), `disconnect` closes only what it started.
//! * Observations: a PNG screenshot whose size is the viewport in device
//!   pixels, and a UI tree walked in each frame by the driver's in-page
//!   library (`world`, `walker`), or read from the accessibility tree
//!   joined with layout bounds where script cannot run ([`ui_tree`]),
//!   fitted to the protocol's bounds by priority, in a `web` context whose
//!   document epoch moves on every new document (`epoch`).
//! * Actions: navigation, pointer, keyboard and scrolling ([`actions`]),
//!   the five semantic Actions with css selectors and actionability
//!   checks, resolved against the live page rather than a bounded
//!   snapshot, and `queryElements`, a search of the live page
//!   (`web_semantic`).
//!
//! What it must never do: write to stdout (the host's protocol channel;
//! the browser's stdout goes to /dev/null, its stderr to `tracing`), log
//! Action arguments or typed text (`inputSecret` is protected), leave a
//! browser it started running after disconnect or process exit, or touch
//! tabs of a browser it attached to other than its own.

pub mod actions;
pub mod binary;
mod blocking;
pub mod cdp;
pub mod config;
mod connection;
mod driver;
mod endpoint;
mod epoch;
mod errors;
mod frame_reader;
mod frames;
mod keys;
pub mod launch;
mod network;
mod screencast;
mod scripts;
pub mod ui_tree;
mod walker;
mod web_semantic;
mod world;

pub use driver::BrowserDriver;

devicerail_host_plugin_api::export_plugin! {
    id: "browser",
    description: "Chromium/Chrome over the Chrome DevTools Protocol (headless by default)",
    driver: BrowserDriver::new,
}
