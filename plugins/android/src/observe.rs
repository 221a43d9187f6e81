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
    /// A hash of the bytes the device sent (the raw frame, or its PNG):
    /// equal hashes, the same screen.
    pub frame: u64,
}

/// The last frame a device sent, with its PNG, so an unchanged screen is
/// not encoded again.
#[derive(Debug, Clone)]
pub struct LastFrame {
    /// [`Screenshot::frame`] of the raw frame.
    pub frame: u64,
    /// Its PNG.
    pub png: std::sync::Arc<Vec<u8>>,
    /// Its size.
    pub size: (u32, u32),
}

/// A fast hash of a whole frame (a few milliseconds for a phone's 18 MB),
/// to tell an unchanged screen.
pub fn frame_hash(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0x9e37_79b9_7f4a_7c15 ^ bytes.len() as u64;
    let mut words = bytes.chunks_exact(8);
    for w in words.by_ref() {
        let mut b = [0u8; 8];
        b.copy_from_slice(w);
        h = (h ^ u64::from_le_bytes(b))
            .wrapping_mul(0x0000_0100_0000_01b3)
            .rotate_left(29);
    }
    for &b in words.remainder() {
        h = (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
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
    screenshot_raw_after(adb, ctx, serial, shell_v2, None)
}

/// [`screenshot_raw`], reusing `last`'s PNG when the device sent the same
/// frame again (no decoding, no encoding).
pub fn screenshot_raw_after(
    adb: &Adb,
    ctx: &CallContext,
    serial: &str,
    shell_v2: bool,
    last: Option<&LastFrame>,
) -> Result<Screenshot, ObserveError> {
    let started = std::time::Instant::now();
    let out = adb
        .shell_binary(ctx, serial, "screencap", shell_v2)?
        .success("screencap")?;
    let hash = frame_hash(&out.stdout);
    if let Some(last) = last.filter(|l| l.frame == hash) {
        return Ok(Screenshot {
            png: last.png.as_ref().clone(),
            width: last.size.0,
            height: last.size.1,
            mode: ScreenshotMode::Raw,
            elapsed: started.elapsed(),
            frame: hash,
        });
    }
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
        frame: hash,
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
    let frame = frame_hash(&out.stdout);
    Ok(Screenshot {
        png: out.stdout,
        width,
        height,
        mode: ScreenshotMode::Png,
        elapsed: started.elapsed(),
        frame,
    })
}

type Shooter =
    fn(&Adb, &CallContext, &str, bool, Option<&LastFrame>) -> Result<Screenshot, ObserveError>;

fn png_after(
    adb: &Adb,
    ctx: &CallContext,
    serial: &str,
    shell_v2: bool,
    _last: Option<&LastFrame>,
) -> Result<Screenshot, ObserveError> {
    screenshot_png(adb, ctx, serial, shell_v2)
}

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
    last: Option<&LastFrame>,
) -> ShotAttempt {
    let (first, second): (Shooter, Shooter) = match prefer {
        ScreenshotMode::Raw => (screenshot_raw_after, png_after),
        ScreenshotMode::Png => (png_after, screenshot_raw_after),
    };
    let started = std::time::Instant::now();
    match first(adb, ctx, serial, shell_v2, last) {
        Err(e) if e.is_format() => {
            tracing::warn!(serial, error = %e, "screenshot failed; trying the other method");
            let result = second(adb, ctx, serial, shell_v2, last).map(|mut shot| {
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

/// The focused window alone (`dumpsys window`, no UI dump): what tells,
/// with the frame, whether the screen is still the one last dumped.
pub fn focus(
    adb: &Adb,
    ctx: &CallContext,
    serial: &str,
) -> Result<Option<(String, String)>, AdbError> {
    let out = adb.shell(ctx, serial, "dumpsys window windows | grep mCurrentFocus")?;
    Ok(uitree::parse_focus(&out.text()))
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

/// Frames compared at most while waiting for a still screen.
const STILL_FRAMES: u32 = 8;

/// How [`dump_settled`] reads frames to tell a still screen: the device's
/// stream kind and its working screenshot method.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Still {
    pub(crate) shell_v2: bool,
    pub(crate) mode: ScreenshotMode,
}

/// Waits until two frames in a row are the same (at most
/// [`STILL_FRAMES`] frames), so a dump that failed on an animating screen
/// is tried again only once it stopped; a pause when frames cannot be
/// read.
fn wait_still(adb: &Adb, ctx: &CallContext, serial: &str, still: Still) -> Result<(), AdbError> {
    let command = match still.mode {
        ScreenshotMode::Raw => "screencap",
        ScreenshotMode::Png => "screencap -p",
    };
    let mut last = None;
    for _ in 0..STILL_FRAMES {
        let out = match adb.shell_binary(ctx, serial, command, still.shell_v2) {
            Ok(o) if o.status == 0 => o,
            Ok(_) | Err(AdbError::Failed { .. }) => break,
            Err(e) => return Err(e),
        };
        let h = frame_hash(&out.stdout);
        if last == Some(h) {
            return Ok(());
        }
        last = Some(h);
    }
    ctx.sleep(DUMP_RETRY_PAUSE).map_err(|_| {
        if ctx.is_cancelled() {
            AdbError::Cancelled
        } else {
            AdbError::Deadline
        }
    })
}

/// [`dump`], tried again (up to [`DUMP_ATTEMPTS`] times, while the call's
/// deadline leaves room for another attempt as long as the last one) when
/// uiautomator reports a screen that would not settle, each time only once
/// the screen stopped changing (two equal frames in a row). Answers the
/// dump and the number of attempts made; the last `NotIdle` error when
/// every attempt failed.
pub(crate) fn dump_settled(
    adb: &Adb,
    ctx: &CallContext,
    serial: &str,
    still: Still,
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
                tracing::debug!(
                    serial,
                    attempt,
                    "uiautomator: {message}; trying again once the screen is still"
                );
                if let Err(e) = wait_still(adb, ctx, serial, still) {
                    return Err((ObserveError::Adb(e), attempt));
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
