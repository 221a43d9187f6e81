//! Taking screenshots and UI dumps on one device.

use crate::adb::{Adb, AdbError, excerpt};
use crate::config::ScreenshotMode;
use crate::screen::{self, Display};
use crate::uitree::{self, Parsed, UiParseError};
use devicerail_host_plugin_api::CallContext;

/// Where `uiautomator dump` writes (one file per device, guarded by the
/// device's snapshot lock).
pub(crate) const UI_DUMP_PATH: &str = "/data/local/tmp/devicerail-ui.xml";
/// Separates the focus lines from the XML in the snapshot's output.
pub(crate) const XML_SECTION: &str = "__devicerail_xml__";

/// A screenshot, PNG-encoded.
#[derive(Debug, Clone)]
pub struct Screenshot {
    /// The PNG file's bytes.
    pub png: Vec<u8>,
    /// Width of the captured image, in pixels.
    pub width: u32,
    /// Height of the captured image, in pixels.
    pub height: u32,
    /// How it was taken.
    pub mode: ScreenshotMode,
    /// How long it took, fallback included.
    pub elapsed: std::time::Duration,
}

/// Why a screenshot or dump failed.
#[derive(Debug, thiserror::Error)]
pub enum ObserveError {
    /// Running the command failed (see [`AdbError`]).
    #[error(transparent)]
    Adb(#[from] AdbError),
    /// `screencap` ran but its output could not be decoded or encoded; the
    /// other screenshot method may still work.
    #[error("screencap output is unusable: {0}")]
    Screenshot(String),
    /// `uiautomator dump` produced no XML; the text says what it printed
    /// instead.
    #[error("uiautomator dump failed: {0}")]
    Dump(String),
    /// `uiautomator dump` gave up waiting for the screen to stop changing
    /// ("could not get idle state"; "null root node" while a window is
    /// swapped). Usually transient; a screen that animates forever keeps
    /// failing.
    #[error("uiautomator could not dump the screen: {0}")]
    NotIdle(String),
    /// The dump arrived but is not a UI tree this plugin can read.
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

/// One screenshot attempt: its result, and the method whose output was
/// unusable on the way, if any (whether or not the other one worked), so
/// the caller can stop using it.
#[derive(Debug)]
pub(crate) struct ShotAttempt {
    pub(crate) result: Result<Screenshot, ObserveError>,
    pub(crate) broken: Option<ScreenshotMode>,
}

/// A screenshot the preferred way, falling back to the other way when the
/// first one's output is unusable.
pub(crate) fn screenshot(
    adb: &Adb,
    ctx: &CallContext,
    serial: &str,
    prefer: ScreenshotMode,
    shell_v2: bool,
) -> ShotAttempt {
    let (first, second): (Shooter, Shooter) = match prefer {
        ScreenshotMode::Raw => (screenshot_raw, screenshot_png),
        ScreenshotMode::Png => (screenshot_png, screenshot_raw),
    };
    let started = std::time::Instant::now();
    match first(adb, ctx, serial, shell_v2) {
        Err(e) if e.is_format() => {
            tracing::warn!(serial, error = %e, "screenshot failed; trying the other method");
            let result = second(adb, ctx, serial, shell_v2).map(|mut shot| {
                shot.elapsed = started.elapsed();
                shot
            });
            ShotAttempt {
                result,
                broken: Some(prefer),
            }
        }
        result => ShotAttempt {
            result,
            broken: None,
        },
    }
}

/// The raw material of a UI snapshot.
#[derive(Debug, Clone)]
pub struct Dump {
    /// The `uiautomator dump` XML document, as the device wrote it.
    pub xml: String,
    /// `(component, package)` of the focused window.
    pub focus: Option<(String, String)>,
}

/// The snapshot command: the focused window, then the XML. The previous
/// dump file is removed first: `uiautomator dump` exits with status 0
/// when it gives up ("could not get idle state") without writing one, and
/// an old file must never pass for the current screen.
pub(crate) fn dump_command() -> String {
    format!(
        "dumpsys window windows | grep mCurrentFocus; echo {XML_SECTION}; rm -f {UI_DUMP_PATH}; uiautomator dump {UI_DUMP_PATH} >&2 && cat {UI_DUMP_PATH}"
    )
}

/// What `uiautomator dump` prints when the screen would not settle, or
/// when no window was there to dump (during a window swap).
const NOT_IDLE_MESSAGES: [&str; 2] = ["could not get idle state", "null root node"];

/// The transient failure `output` reports, if it reports one.
fn not_idle(output: &str) -> Option<String> {
    output
        .lines()
        .map(str::trim)
        .find(|l| {
            let lower = l.to_ascii_lowercase();
            NOT_IDLE_MESSAGES.iter().any(|m| lower.contains(m))
        })
        .map(|l| l.trim_start_matches("ERROR:").trim().to_owned())
}

/// Runs `uiautomator dump` and reads the focused window in one round trip.
pub fn dump(adb: &Adb, ctx: &CallContext, serial: &str) -> Result<Dump, ObserveError> {
    let out = adb.shell(ctx, serial, &dump_command())?;
    let text = out.text();
    let sections = text.split_once(XML_SECTION);
    // Without shell v2, uiautomator's own message (stderr) precedes the
    // XML in the same stream.
    let xml = sections.and_then(|(_, rest)| {
        rest.find("<?xml")
            .or_else(|| rest.find("<hierarchy"))
            .map(|i| &rest[i..])
    });
    let (Some((head, _)), Some(xml), 0) = (sections, xml, out.status) else {
        // No dump: say why. Without shell v2 stderr arrives in stdout.
        let reported = format!("{}\n{text}", String::from_utf8_lossy(&out.stderr));
        if let Some(message) = not_idle(&reported) {
            return Err(ObserveError::NotIdle(message));
        }
        return Err(ObserveError::Dump(match (sections, out.status) {
            (_, status) if status != 0 => format!(
                "status {status}: {}",
                excerpt(if out.stderr.is_empty() {
                    &out.stdout
                } else {
                    &out.stderr
                })
            ),
            (None, _) => "the output lacks the XML section".into(),
            (Some((_, rest)), _) => format!("no XML in the output: {}", excerpt(rest.as_bytes())),
        }));
    };
    Ok(Dump {
        xml: xml.trim_end().to_owned(),
        focus: uitree::parse_focus(head),
    })
}

/// How often [`dump_settled`] runs `uiautomator dump` at most.
pub(crate) const DUMP_ATTEMPTS: u32 = 3;
/// Pause between two such attempts.
pub(crate) const DUMP_RETRY_PAUSE: std::time::Duration = std::time::Duration::from_millis(250);

/// [`dump`], tried again (up to [`DUMP_ATTEMPTS`] times, while the call's
/// deadline leaves room for another attempt as long as the last one) when
/// uiautomator reports a screen that would not settle. Answers the dump
/// and the number of attempts made; the last `NotIdle` error when every
/// attempt failed.
pub(crate) fn dump_settled(
    adb: &Adb,
    ctx: &CallContext,
    serial: &str,
) -> Result<(Dump, u32), (ObserveError, u32)> {
    let mut attempt = 0;
    loop {
        attempt += 1;
        let started = std::time::Instant::now();
        match dump(adb, ctx, serial) {
            Ok(d) => return Ok((d, attempt)),
            Err(ObserveError::NotIdle(message)) => {
                let room = ctx
                    .remaining()
                    .is_none_or(|left| left > started.elapsed() + DUMP_RETRY_PAUSE);
                if attempt >= DUMP_ATTEMPTS || !room {
                    return Err((ObserveError::NotIdle(message), attempt));
                }
                tracing::debug!(serial, attempt, "uiautomator: {message}; trying again");
                if ctx.sleep(DUMP_RETRY_PAUSE).is_err() {
                    return Err((
                        ObserveError::Adb(if ctx.is_cancelled() {
                            AdbError::Cancelled
                        } else {
                            AdbError::Deadline
                        }),
                        attempt,
                    ));
                }
            }
            Err(e) => return Err((e, attempt)),
        }
    }
}

/// Reads `wm size` and `wm density`.
pub(crate) fn display(
    adb: &Adb,
    ctx: &CallContext,
    serial: &str,
) -> Result<Option<Display>, AdbError> {
    let out = adb.shell(ctx, serial, "wm size; wm density")?;
    Ok(parse_display(&out.text()))
}

/// The display from `wm size` + `wm density` output.
pub(crate) fn parse_display(text: &str) -> Option<Display> {
    let (width, height) = screen::parse_wm_size(text)?;
    let density = screen::parse_wm_density(text).unwrap_or(160);
    Some(Display {
        width,
        height,
        density,
    })
}

/// Parses a dump (re-exported for benches).
pub(crate) fn parse(dump: &Dump) -> Result<Parsed, UiParseError> {
    uitree::parse(&dump.xml)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn idle_failures_are_recognized_in_any_stream() {
        assert_eq!(
            not_idle("ERROR: could not get idle state.\ncat: /x: No such file or directory\n")
                .as_deref(),
            Some("could not get idle state.")
        );
        assert_eq!(
            not_idle("ERROR: null root node returned by UiTestAutomationBridge.").as_deref(),
            Some("null root node returned by UiTestAutomationBridge.")
        );
        assert_eq!(not_idle("UI hierchary dumped to: /x\n<?xml"), None);
    }

    #[test]
    fn the_dump_never_reads_an_old_file() {
        let cmd = dump_command();
        let rm = cmd.find(&format!("rm -f {UI_DUMP_PATH}")).expect("removes");
        let dump = cmd.find("uiautomator dump").expect("dumps");
        assert!(rm < dump, "{cmd}");
    }
}
