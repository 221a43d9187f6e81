//! The action space: definitions with their JSON Schemas, argument types,
//! and the device commands each Action becomes.

use devicerail_host_plugin_api::actions::{
    self, AppIds, GestureDuration, KeyNames, LaunchArgs, NoArgs, Points, UrlRules,
};
use devicerail_host_plugin_api::protocol::ActionDefinition;
use devicerail_host_plugin_api::semantic;

use crate::text::sh_quote;

/// Longest text `inputText`/`inputSecret` accept, in characters.
pub(crate) const MAX_TEXT: usize = 4096;
/// The URLs `openUrl` accepts: up to 4096 characters with a scheme, no
/// whitespace (they go onto an `am start` command line).
pub(crate) const URLS: UrlRules = UrlRules::new(4096)
    .allowing_empty_rest()
    .with_schema_pattern();
/// Longest gesture, in milliseconds.
pub(crate) const MAX_GESTURE_MS: u32 = 60_000;
/// Duration of `longPress` (default 1000 ms).
pub(crate) const LONG_PRESS: GestureDuration = GestureDuration::new(1, MAX_GESTURE_MS, 1000);
/// Duration of `swipe` (default 300 ms).
pub(crate) const SWIPE: GestureDuration = GestureDuration::new(1, MAX_GESTURE_MS, 300);
/// Coordinates of `tap`, `longPress` and `swipe`.
const POINTS: Points = Points::whole(100_000, 100_000).described();

/// Whether `id` is a Java package name (`com.example.app`).
pub(crate) fn valid_package(id: &str) -> bool {
    let mut segments = 0;
    let ok = id.len() <= 255
        && id.split('.').all(|seg| {
            segments += 1;
            let mut chars = seg.chars();
            chars
                .next()
                .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
                && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
        });
    ok && segments >= 2
}

/// `input tap`.
pub(crate) fn tap_command(x: u32, y: u32) -> String {
    format!("input tap {x} {y}")
}

/// `input swipe`.
pub(crate) fn swipe_command(x1: u32, y1: u32, x2: u32, y2: u32, ms: u32) -> String {
    format!("input swipe {x1} {y1} {x2} {y2} {ms}")
}

/// `input keyevent` with one or more codes.
pub(crate) fn key_command(codes: &[u32]) -> String {
    let codes: Vec<String> = codes.iter().map(u32::to_string).collect();
    format!("input keyevent {}", codes.join(" "))
}

/// Starts the launcher activity of a package.
pub(crate) fn launch_command(package: &str) -> String {
    format!("monkey -p {package} -c android.intent.category.LAUNCHER 1")
}

/// Opens a URL with the VIEW intent.
pub(crate) fn open_url_command(url: &str) -> String {
    format!(
        "am start -a android.intent.action.VIEW -d {}",
        sh_quote(url)
    )
}

/// Every Action of an Android device.
pub fn definitions() -> Vec<ActionDefinition> {
    let key_names: Vec<&str> = crate::keys::names().collect();
    let mut defs = vec![
        actions::tap("Tap a point given in screenshot pixels.", POINTS),
        actions::long_press(
            "Press and hold a point given in screenshot pixels.",
            POINTS,
            &LONG_PRESS,
        ),
        actions::swipe(
            "Swipe from one point to another (screenshot pixels).",
            POINTS,
            &SWIPE,
        ),
        actions::input_text(
            "Type text into the focused field. Printable ASCII, newline (Enter) and tab only; other characters are refused with invalid_arguments.",
            MAX_TEXT,
        ),
        actions::input_secret(
            "Type a secret into the focused field. The text travels on the shell's stdin, never on a command line, and is never logged. Same character rules as inputText.",
            MAX_TEXT,
        ),
        actions::press_key(
            &format!(
                "Press a key by name: {}, a letter or a digit (KEYCODE_ names also work).",
                key_names.join(", ")
            ),
            KeyNames::Any { max_len: 64 },
        ),
        actions::definition(
            "back",
            "Press the Back key.",
            NoArgs::schema_with_properties(),
        ),
        actions::definition(
            "home",
            "Press the Home key.",
            NoArgs::schema_with_properties(),
        ),
        actions::launch_app(
            "Start an installed app's launcher activity by package name.",
            &AppIds {
                field: LaunchArgs::FIELD,
                min_len: 3,
                max_len: 255,
                pattern: "^[A-Za-z_][A-Za-z0-9_]*(\\.[A-Za-z_][A-Za-z0-9_]*)+$",
            },
        ),
        actions::open_url(
            "Open a URL with the VIEW intent (the default browser or the app that handles it).",
            &URLS,
        ),
    ];
    defs.extend(semantic::definitions());
    defs
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn packages_and_urls() {
        assert!(valid_package("com.example.login"));
        assert!(valid_package("a_b.c1"));
        assert!(!valid_package("example"));
        assert!(!valid_package("com..x"));
        assert!(!valid_package("com.ex ample"));
        assert!(!valid_package("com.1x"));
        assert!(!valid_package("com.x; reboot"));
        assert!(URLS.check("https://example.com/?q=a&b=c").is_ok());
        assert!(URLS.check("myapp://deep/link").is_ok());
        assert!(URLS.check("example.com").is_err());
        assert!(URLS.check("https://a b").is_err());
        assert!(URLS.check("").is_err());
    }

    #[test]
    fn commands() {
        assert_eq!(tap_command(1, 2), "input tap 1 2");
        assert_eq!(key_command(&[123, 67, 67]), "input keyevent 123 67 67");
        assert_eq!(
            open_url_command("https://x/?a=1&b='2'"),
            "am start -a android.intent.action.VIEW -d 'https://x/?a=1&b='\\''2'\\'''"
        );
        let names: Vec<String> = definitions().into_iter().map(|d| d.name).collect();
        assert!(names.contains(&"inputSecret".to_owned()));
        assert!(names.contains(&"waitForElement".to_owned()));
    }
}
