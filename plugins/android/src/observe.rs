//! Taking screenshots and UI dumps on one device.

use crate::adb::{Adb, AdbError, excerpt};
use crate::config::ScreenshotMode;
use crate::screen::{self, Display};
use crate::uitree::{self, Parsed, UiParseError};
use devicerail_plugin_api::CallContext;

/// Where `uiautomator dump` writes (one file per device, guarded by the
/// device's snapshot lock).
pub const UI_DUMP_PATH: &str = "/data/local/tmp/devicerail-ui.xml";
/// Separates the focus lines from the XML in the snapshot's output.
pub const XML_SECTION: &str = "__devicerail_xml__";

/// A screenshot, PNG-encoded.
#[derive(Debug, Clone)]
pub struct Screenshot {
    pub png: Vec<u8>,
    pub width: u32,
    pub height: u32,
    /// How it was taken.
    pub mode: ScreenshotMode,
    /// How long it took, fallback included.
    pub elapsed: std::time::Duration,
}

/// Why a screenshot or dump failed.
#[derive(Debug, thiserror::Error)]
pub enum ObserveError {
    #[error(transparent)]
    Adb(#[from] AdbError),
    #[error("screencap output is unusable: {0}")]
    Screenshot(String),
    #[error("uiautomator dump failed: {0}")]
    Dump(String),
    #[error(transparent)]
    Parse(#[from] UiParseError),
}

impl ObserveError {
    /// Whether the other screenshot method may still work.
    fn is_format(&self) -> bool {
        matches!(
            self,
            Self::Screenshot(_) | Self::Adb(AdbError::Failed { .. })
        )
    }
}

/// `screencap` (raw) decoded and PNG-encoded here.
pub fn screenshot_raw(
    adb: &Adb,
    ctx: &CallContext,
    serial: &str,
    shell_v2: bool,
) -> Result<Screenshot, ObserveError> {
    let started = std::time::Instant::now();
    let out = adb
        .shell_binary(ctx, serial, "screencap", shell_v2)?
        .success("screencap")?;
    let frame =
        screen::decode_raw(&out.stdout).map_err(|e| ObserveError::Screenshot(e.to_string()))?;
    ctx.check().map_err(|e| {
        if e.is_cancellation() {
            AdbError::Cancelled
        } else {
            AdbError::Deadline
        }
    })?;
    let png = screen::encode_png(&frame).map_err(|e| ObserveError::Screenshot(e.to_string()))?;
    Ok(Screenshot {
        png,
        width: frame.width,
        height: frame.height,
        mode: ScreenshotMode::Raw,
        elapsed: started.elapsed(),
    })
}

/// `screencap -p`: PNG from the device.
pub fn screenshot_png(
    adb: &Adb,
    ctx: &CallContext,
    serial: &str,
    shell_v2: bool,
) -> Result<Screenshot, ObserveError> {
    let started = std::time::Instant::now();
    let out = adb
        .shell_binary(ctx, serial, "screencap -p", shell_v2)?
        .success("screencap -p")?;
    let (width, height) = screen::png_size(&out.stdout).ok_or_else(|| {
        ObserveError::Screenshot(format!(
            "not a PNG ({} bytes: {})",
            out.stdout.len(),
            excerpt(&out.stdout[..out.stdout.len().min(64)])
        ))
    })?;
    Ok(Screenshot {
        png: out.stdout,
        width,
        height,
        mode: ScreenshotMode::Png,
        elapsed: started.elapsed(),
    })
}

type Shooter = fn(&Adb, &CallContext, &str, bool) -> Result<Screenshot, ObserveError>;

/// A screenshot the preferred way, falling back to the other way when the
/// first one's output is unusable.
pub fn screenshot(
    adb: &Adb,
    ctx: &CallContext,
    serial: &str,
    prefer: ScreenshotMode,
    shell_v2: bool,
) -> Result<Screenshot, ObserveError> {
    let (first, second): (Shooter, Shooter) = match prefer {
        ScreenshotMode::Raw => (screenshot_raw, screenshot_png),
        ScreenshotMode::Png => (screenshot_png, screenshot_raw),
    };
    let started = std::time::Instant::now();
    match first(adb, ctx, serial, shell_v2) {
        Err(e) if e.is_format() => {
            tracing::warn!(serial, error = %e, "screenshot failed; trying the other method");
            let mut shot = second(adb, ctx, serial, shell_v2)?;
            shot.elapsed = started.elapsed();
            Ok(shot)
        }
        other => other,
    }
}

/// The raw material of a UI snapshot.
#[derive(Debug, Clone)]
pub struct Dump {
    pub xml: String,
    /// `(component, package)` of the focused window.
    pub focus: Option<(String, String)>,
}

/// The snapshot command: the focused window, then the XML.
pub fn dump_command() -> String {
    format!(
        "dumpsys window windows | grep mCurrentFocus; echo {XML_SECTION}; uiautomator dump {UI_DUMP_PATH} >&2 && cat {UI_DUMP_PATH}"
    )
}

/// Runs `uiautomator dump` and reads the focused window in one round trip.
pub fn dump(adb: &Adb, ctx: &CallContext, serial: &str) -> Result<Dump, ObserveError> {
    let out = adb.shell(ctx, serial, &dump_command())?;
    if out.status != 0 {
        return Err(ObserveError::Dump(format!(
            "status {}: {}",
            out.status,
            excerpt(if out.stderr.is_empty() {
                &out.stdout
            } else {
                &out.stderr
            })
        )));
    }
    let text = out.text();
    let (head, rest) = text
        .split_once(XML_SECTION)
        .ok_or_else(|| ObserveError::Dump("the output lacks the XML section".into()))?;
    // Without shell v2, uiautomator's own message (stderr) precedes the
    // XML in the same stream.
    let xml = rest
        .find("<?xml")
        .or_else(|| rest.find("<hierarchy"))
        .map(|i| &rest[i..])
        .ok_or_else(|| {
            ObserveError::Dump(format!(
                "no XML in the output: {}",
                excerpt(rest.as_bytes())
            ))
        })?;
    Ok(Dump {
        xml: xml.trim_end().to_owned(),
        focus: uitree::parse_focus(head),
    })
}

/// Reads `wm size` and `wm density`.
pub fn display(adb: &Adb, ctx: &CallContext, serial: &str) -> Result<Option<Display>, AdbError> {
    let out = adb.shell(ctx, serial, "wm size; wm density")?;
    Ok(parse_display(&out.text()))
}

/// The display from `wm size` + `wm density` output.
pub fn parse_display(text: &str) -> Option<Display> {
    let (width, height) = screen::parse_wm_size(text)?;
    let density = screen::parse_wm_density(text).unwrap_or(160);
    Some(Display {
        width,
        height,
        density,
    })
}

/// Parses a dump (re-exported for benches).
pub fn parse(dump: &Dump) -> Result<Parsed, UiParseError> {
    uitree::parse(&dump.xml)
}
