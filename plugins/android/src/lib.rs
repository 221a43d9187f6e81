//! # devicerail-host-plugin-android
//!
//! The Android driver plugin of DeviceRail Host: every device an adb
//! server lists (USB, `adb connect`, emulators) becomes a DeviceRail
//! device, in every state; `offline` and `unauthorized` ones are listed
//! (not connected) and refuse to connect with `device_unavailable` naming
//! the state.
//!
//! * Observe: `screencap` screenshots (raw framebuffer encoded here, or
//!   `screencap -p`, each the other's fallback), `wm size`/`wm density`
//!   viewports, and `uiautomator dump` UI trees normalized for the
//!   semantic Actions.
//! * Act: `input` taps, long presses, swipes, text and keys, `monkey` and
//!   `am start` for apps and URLs, and the five semantic Actions by
//!   coordinates at the resolved element.
//!
//! It talks to the adb server only (`adb_client` for device streams, the
//! host services directly), never to devices' adbd, and it never writes
//! to stdout. It must never put the text of `inputSecret` on a command
//! line, in a log record or in an error message: the secret travels on an
//! `exec:` stream's stdin.

pub mod actions;
pub mod adb;
pub mod config;
mod device_state;
pub mod driver;
mod keys;
pub mod observe;
pub mod screen;
mod text;
mod touch;
pub mod uitree;

pub use config::{Config, ScreenshotMode, ScreenshotPreference};
pub use driver::AndroidDriver;

devicerail_host_plugin_api::export_plugin! {
    id: "android",
    description: "Android devices through an adb server: screenshots, UI trees, input and semantic element Actions",
    driver: AndroidDriver::new,
}
