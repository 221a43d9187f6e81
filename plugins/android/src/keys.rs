//! Key names for `pressKey`, mapped to Android `KeyEvent` key codes.
//!
//! Names are matched without case, `KEYCODE_` prefix, `_`, `-` or spaces,
//! so `enter`, `Enter`, `KEYCODE_ENTER` and `volume_up`/`volumeUp` all
//! work. Single letters and digits map to their keys.

/// `(canonical name, key code)`, canonical names in lower camel case.
pub(crate) const KEYS: &[(&str, u32)] = &[
    ("home", 3),
    ("back", 4),
    ("call", 5),
    ("endCall", 6),
    ("star", 17),
    ("pound", 18),
    ("dpadUp", 19),
    ("dpadDown", 20),
    ("dpadLeft", 21),
    ("dpadRight", 22),
    ("dpadCenter", 23),
    ("volumeUp", 24),
    ("volumeDown", 25),
    ("power", 26),
    ("camera", 27),
    ("clear", 28),
    ("comma", 55),
    ("period", 56),
    ("tab", 61),
    ("space", 62),
    ("explorer", 64),
    ("envelope", 65),
    ("enter", 66),
    ("del", 67),
    ("backspace", 67),
    ("grave", 68),
    ("minus", 69),
    ("equals", 70),
    ("leftBracket", 71),
    ("rightBracket", 72),
    ("backslash", 73),
    ("semicolon", 74),
    ("apostrophe", 75),
    ("slash", 76),
    ("at", 77),
    ("menu", 82),
    ("notification", 83),
    ("search", 84),
    ("mediaPlayPause", 85),
    ("mediaStop", 86),
    ("mediaNext", 87),
    ("mediaPrevious", 88),
    ("mediaRewind", 89),
    ("mediaFastForward", 90),
    ("mute", 91),
    ("pageUp", 92),
    ("pageDown", 93),
    ("escape", 111),
    ("forwardDel", 112),
    ("delete", 112),
    ("ctrlLeft", 113),
    ("ctrlRight", 114),
    ("capsLock", 115),
    ("moveHome", 122),
    ("moveEnd", 123),
    ("insert", 124),
    ("mediaPlay", 126),
    ("mediaPause", 127),
    ("volumeMute", 164),
    ("appSwitch", 187),
    ("recentApps", 187),
    ("assist", 219),
    ("brightnessDown", 220),
    ("brightnessUp", 221),
    ("sleep", 223),
    ("wakeup", 224),
    ("allApps", 284),
];

fn normalize(name: &str) -> String {
    let upper: String = name
        .chars()
        .filter(|c| !matches!(c, '_' | '-' | ' '))
        .collect::<String>()
        .to_ascii_uppercase();
    upper
        .strip_prefix("KEYCODE")
        .map(str::to_owned)
        .unwrap_or(upper)
}

/// The key code of `name`, if known.
pub(crate) fn keycode(name: &str) -> Option<u32> {
    let n = normalize(name);
    if n.is_empty() {
        return None;
    }
    let mut chars = n.chars();
    if let (Some(c), None) = (chars.next(), chars.next()) {
        if c.is_ascii_digit() {
            // KEYCODE_0 = 7
            return Some(7 + (u32::from(c) - u32::from('0')));
        }
        if c.is_ascii_uppercase() {
            // KEYCODE_A = 29
            return Some(29 + (u32::from(c) - u32::from('A')));
        }
    }
    KEYS.iter()
        .find(|(k, _)| normalize(k) == n)
        .map(|(_, code)| *code)
}

/// The canonical names, for descriptions and errors.
pub(crate) fn names() -> impl Iterator<Item = &'static str> {
    KEYS.iter().map(|(k, _)| *k)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_in_many_spellings() {
        for n in ["enter", "Enter", "KEYCODE_ENTER", "keycode_enter"] {
            assert_eq!(keycode(n), Some(66), "{n}");
        }
        assert_eq!(keycode("volume_up"), Some(24));
        assert_eq!(keycode("volumeUp"), Some(24));
        assert_eq!(keycode("a"), Some(29));
        assert_eq!(keycode("Z"), Some(54));
        assert_eq!(keycode("7"), Some(14));
        assert_eq!(keycode("KEYCODE_9"), Some(16));
        assert_eq!(keycode("nope"), None);
        assert_eq!(keycode(""), None);
        assert_eq!(keycode("KEYCODE_"), None);
    }
}
