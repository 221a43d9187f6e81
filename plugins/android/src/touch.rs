//! Taps, long presses and swipes as touch events: the device's
//! touchscreen is found with `getevent -lp` (the device with
//! `ABS_MT_POSITION_X`/`_Y` and `INPUT_PROP_DIRECT`), screenshot pixels
//! are scaled to its axis ranges, and a gesture is one command line of
//! `printf` writes of `input_event` records (multi-touch protocol B) to
//! its device node, run on the device's persistent shell
//! (`adb::ShellSession`): a few milliseconds, where `input tap` starts a
//! Java VM (~250 ms).
//!
//! Pure: building and parsing text; no I/O here.

use std::fmt::Write as _;

const EV_SYN: u16 = 0x00;
const EV_KEY: u16 = 0x01;
const EV_ABS: u16 = 0x03;
const SYN_REPORT: u16 = 0x00;
const BTN_TOUCH: u16 = 0x14a;
const BTN_TOOL_FINGER: u16 = 0x145;
const ABS_MT_SLOT: u16 = 0x2f;
const ABS_MT_POSITION_X: u16 = 0x35;
const ABS_MT_POSITION_Y: u16 = 0x36;
const ABS_MT_TRACKING_ID: u16 = 0x39;
/// The tracking id every gesture uses (one finger at a time).
const TRACKING_ID: i32 = 0x4d52;
/// Time between two moves of a swipe.
const MOVE_EVERY_MS: u64 = 16;
/// Moves of a swipe at most.
const MAX_MOVES: u64 = 40;

/// A touchscreen the shell may write to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Touchscreen {
    /// Its device node (`/dev/input/event2`).
    pub(crate) path: String,
    /// `ABS_MT_POSITION_X`'s range.
    pub(crate) x: (i64, i64),
    /// `ABS_MT_POSITION_Y`'s range.
    pub(crate) y: (i64, i64),
    /// Bytes of one `input_event` (24 on 64-bit userlands, 16 on 32-bit).
    pub(crate) event_size: usize,
}

/// The command that finds the touchscreen and the event size.
pub(crate) const PROBE: &str = "getevent -lp; echo __abi; getprop ro.product.cpu.abi";

/// The touchscreen in `getevent -lp` output (`PROBE`'s), if one is
/// listed.
pub(crate) fn parse_probe(text: &str) -> Option<Touchscreen> {
    let abi = text
        .split_once("__abi")
        .map(|(_, rest)| rest.trim())
        .unwrap_or("");
    let event_size = if abi.contains("64") { 24 } else { 16 };
    let listing = text.split_once("__abi").map_or(text, |(l, _)| l);
    let mut devices = listing.split("add device ").skip(1);
    devices.find_map(|block| {
        let path = block.lines().next()?.split_once(": ")?.1.trim().to_owned();
        if !block.contains("INPUT_PROP_DIRECT") {
            return None;
        }
        let range = |axis: &str| -> Option<(i64, i64)> {
            let line = block.lines().find(|l| l.contains(axis))?;
            let field = |name: &str| -> Option<i64> {
                let at = line.find(name)? + name.len();
                line[at..]
                    .trim_start()
                    .split(|c: char| c == ',' || c.is_whitespace())
                    .next()?
                    .parse()
                    .ok()
            };
            let (min, max) = (field("min ")?, field("max ")?);
            (max > min).then_some((min, max))
        };
        Some(Touchscreen {
            path,
            x: range("ABS_MT_POSITION_X")?,
            y: range("ABS_MT_POSITION_Y")?,
            event_size,
        })
    })
}

/// A gesture in screenshot pixels.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Gesture {
    /// Down and up at one point.
    Tap { x: u32, y: u32 },
    /// Down, held `ms`, up.
    Press { x: u32, y: u32, ms: u64 },
    /// Down at the start, moved to the end over `ms`, up.
    Swipe {
        from: (u32, u32),
        to: (u32, u32),
        ms: u64,
    },
}

impl Touchscreen {
    /// Screenshot pixel `(x, y)` of a `w`×`h` screen (natural
    /// orientation) in axis units.
    fn axis(&self, (x, y): (u32, u32), (w, h): (u32, u32)) -> (i32, i32) {
        let scale = |v: u32, size: u32, (min, max): (i64, i64)| -> i32 {
            let size = i64::from(size.max(1));
            let v = i64::from(v).min(size - 1);
            // The pixel's centre, on the axis.
            let a = min + ((2 * v + 1) * (max - min + 1)) / (2 * size);
            a.clamp(min, max) as i32
        };
        (scale(x, w, self.x), scale(y, h, self.y))
    }

    /// One `input_event` record.
    fn event(&self, out: &mut Vec<u8>, kind: u16, code: u16, value: i32) {
        // The time is filled by the kernel for injected events.
        out.extend(std::iter::repeat_n(0u8, self.event_size - 8));
        out.extend_from_slice(&kind.to_le_bytes());
        out.extend_from_slice(&code.to_le_bytes());
        out.extend_from_slice(&value.to_le_bytes());
    }

    fn down(&self, (x, y): (i32, i32)) -> Vec<u8> {
        let mut b = Vec::new();
        self.event(&mut b, EV_ABS, ABS_MT_SLOT, 0);
        self.event(&mut b, EV_ABS, ABS_MT_TRACKING_ID, TRACKING_ID);
        self.event(&mut b, EV_ABS, ABS_MT_POSITION_X, x);
        self.event(&mut b, EV_ABS, ABS_MT_POSITION_Y, y);
        self.event(&mut b, EV_KEY, BTN_TOUCH, 1);
        self.event(&mut b, EV_KEY, BTN_TOOL_FINGER, 1);
        self.event(&mut b, EV_SYN, SYN_REPORT, 0);
        b
    }

    fn moved(&self, (x, y): (i32, i32)) -> Vec<u8> {
        let mut b = Vec::new();
        self.event(&mut b, EV_ABS, ABS_MT_POSITION_X, x);
        self.event(&mut b, EV_ABS, ABS_MT_POSITION_Y, y);
        self.event(&mut b, EV_SYN, SYN_REPORT, 0);
        b
    }

    fn up(&self) -> Vec<u8> {
        let mut b = Vec::new();
        self.event(&mut b, EV_ABS, ABS_MT_TRACKING_ID, -1);
        self.event(&mut b, EV_KEY, BTN_TOUCH, 0);
        self.event(&mut b, EV_KEY, BTN_TOOL_FINGER, 0);
        self.event(&mut b, EV_SYN, SYN_REPORT, 0);
        b
    }

    /// A `printf` of `bytes` into the device node.
    fn write(&self, bytes: &[u8]) -> String {
        let mut s = String::with_capacity(bytes.len() * 4 + 32);
        s.push_str("printf '");
        for b in bytes {
            let _ = write!(s, "\\{b:03o}");
        }
        let _ = write!(s, "' > {}", self.path);
        s
    }

    /// The command line that performs `g` on a `screen`-sized display;
    /// it fails (non-zero status) at the first write that fails.
    pub(crate) fn command(&self, g: Gesture, screen: (u32, u32)) -> String {
        let sleep = |ms: u64| format!("sleep {}.{:03}", ms / 1000, ms % 1000);
        let mut parts = Vec::new();
        match g {
            Gesture::Tap { x, y } => {
                parts.push(self.write(&self.down(self.axis((x, y), screen))));
                parts.push(self.write(&self.up()));
            }
            Gesture::Press { x, y, ms } => {
                parts.push(self.write(&self.down(self.axis((x, y), screen))));
                parts.push(sleep(ms));
                parts.push(self.write(&self.up()));
            }
            Gesture::Swipe { from, to, ms } => {
                let moves = (ms / MOVE_EVERY_MS).clamp(1, MAX_MOVES);
                let step = ms / moves;
                parts.push(self.write(&self.down(self.axis(from, screen))));
                for i in 1..=moves {
                    let lerp = |a: u32, b: u32| {
                        (i64::from(a) + (i64::from(b) - i64::from(a)) * i as i64 / moves as i64)
                            as u32
                    };
                    if step > 0 {
                        parts.push(sleep(step));
                    }
                    let p = (lerp(from.0, to.0), lerp(from.1, to.1));
                    parts.push(self.write(&self.moved(self.axis(p, screen))));
                }
                parts.push(self.write(&self.up()));
            }
        }
        parts.join(" && ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const GETEVENT: &str = "add device 1: /dev/input/event0\n  name:     \"gpio-keys\"\n  events:\n    KEY (0001): KEY_VOLUMEDOWN\n  input props:\n    <none>\nadd device 2: /dev/input/event2\n  name:     \"fts_ts\"\n  events:\n    KEY (0001): BTN_TOUCH\n    ABS (0003): ABS_MT_SLOT           : value 0, min 0, max 9, fuzz 0, flat 0, resolution 0\n                ABS_MT_POSITION_X     : value 0, min 0, max 4095, fuzz 0, flat 0, resolution 0\n                ABS_MT_POSITION_Y     : value 0, min 0, max 4095, fuzz 0, flat 0, resolution 0\n  input props:\n    INPUT_PROP_DIRECT\n__abi\narm64-v8a\n";

    #[test]
    fn the_touchscreen_is_found_with_its_axes() {
        let t = parse_probe(GETEVENT).expect("a touchscreen");
        assert_eq!(t.path, "/dev/input/event2");
        assert_eq!((t.x, t.y, t.event_size), ((0, 4095), (0, 4095), 24));
        let keys_only = GETEVENT.split("add device 2").next().unwrap_or("");
        assert_eq!(parse_probe(keys_only), None);
        let t32 = parse_probe(&GETEVENT.replace("arm64-v8a", "armeabi-v7a")).expect("32-bit");
        assert_eq!(t32.event_size, 16);
    }

    #[test]
    fn pixels_scale_to_the_axes_and_gestures_write_whole_events() {
        let t = parse_probe(GETEVENT).expect("a touchscreen");
        assert_eq!(t.axis((0, 0), (720, 1280)), (2, 1));
        assert_eq!(t.axis((719, 1279), (720, 1280)), (4093, 4094));
        assert_eq!(t.axis((360, 640), (720, 1280)), (2050, 2049));
        let line = t.command(Gesture::Tap { x: 10, y: 20 }, (720, 1280));
        assert_eq!(line.matches("printf '").count(), 2);
        assert!(line.ends_with("> /dev/input/event2"), "{line}");
        // Down: 7 events of 24 bytes, as octal escapes.
        let first = line.split(" && ").next().unwrap_or("");
        assert_eq!(first.matches('\\').count(), 7 * 24);
        let swipe = t.command(
            Gesture::Swipe {
                from: (10, 10),
                to: (10, 500),
                ms: 160,
            },
            (720, 1280),
        );
        assert_eq!(swipe.matches("printf '").count(), 12);
        assert_eq!(swipe.matches("sleep 0.016").count(), 10);
    }
}
