//! The action space: definitions with their JSON Schemas, argument types,
//! and the device commands each Action becomes.

use devicerail_plugin_api::protocol::{ActionDefinition, ActionProtection};
use devicerail_plugin_api::semantic;
use serde::Deserialize;
use serde_json::{Value, json};

use crate::text::sh_quote;

/// Longest text `inputText`/`inputSecret` accept.
pub const MAX_TEXT: usize = 4096;
/// Longest URL `openUrl` accepts.
pub const MAX_URL: usize = 4096;
/// Default press of `longPress`.
pub const DEFAULT_LONG_PRESS_MS: u32 = 1000;
/// Default duration of `swipe`.
pub const DEFAULT_SWIPE_MS: u32 = 300;
/// Longest gesture.
pub const MAX_GESTURE_MS: u32 = 60_000;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TapArgs {
    pub x: u32,
    pub y: u32,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct LongPressArgs {
    pub x: u32,
    pub y: u32,
    #[serde(default)]
    pub duration_ms: Option<u32>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct SwipeArgs {
    pub from_x: u32,
    pub from_y: u32,
    pub to_x: u32,
    pub to_y: u32,
    #[serde(default)]
    pub duration_ms: Option<u32>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TextArgs {
    pub text: String,
}

// Never print a secret: the Debug form hides the text.
impl std::fmt::Debug for TextArgs {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "TextArgs {{ {} chars }}", self.text.chars().count())
    }
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct KeyArgs {
    pub key: String,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct LaunchArgs {
    pub app_id: String,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct UrlArgs {
    pub url: String,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NoArgs {}

/// Whether `id` is a Java package name (`com.example.app`).
pub fn valid_package(id: &str) -> bool {
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

/// Why a URL is refused, if it is.
pub fn check_url(url: &str) -> Result<(), &'static str> {
    if url.is_empty() || url.chars().count() > MAX_URL {
        return Err("the URL must have 1 to 4096 characters");
    }
    if url.chars().any(|c| c.is_control() || c.is_whitespace()) {
        return Err("the URL contains whitespace or control characters");
    }
    let scheme = url.split_once(':').map(|(s, _)| s).unwrap_or("");
    let mut chars = scheme.chars();
    let scheme_ok = chars.next().is_some_and(|c| c.is_ascii_alphabetic())
        && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'));
    if !scheme_ok {
        return Err("the URL has no scheme (such as https:)");
    }
    Ok(())
}

/// `input tap`.
pub fn tap_command(x: u32, y: u32) -> String {
    format!("input tap {x} {y}")
}

/// `input swipe`.
pub fn swipe_command(x1: u32, y1: u32, x2: u32, y2: u32, ms: u32) -> String {
    format!("input swipe {x1} {y1} {x2} {y2} {ms}")
}

/// `input keyevent` with one or more codes.
pub fn key_command(codes: &[u32]) -> String {
    let codes: Vec<String> = codes.iter().map(u32::to_string).collect();
    format!("input keyevent {}", codes.join(" "))
}

/// Starts the launcher activity of a package.
pub fn launch_command(package: &str) -> String {
    format!("monkey -p {package} -c android.intent.category.LAUNCHER 1")
}

/// Opens a URL with the VIEW intent.
pub fn open_url_command(url: &str) -> String {
    format!(
        "am start -a android.intent.action.VIEW -d {}",
        sh_quote(url)
    )
}

fn def(name: &str, description: &str, schema: Value) -> ActionDefinition {
    ActionDefinition {
        name: name.into(),
        description: description.into(),
        input_schema: schema,
        protection: None,
    }
}

fn point(desc: &str) -> Value {
    json!({ "type": "integer", "minimum": 0, "maximum": 100000, "description": desc })
}

fn duration(default: u32) -> Value {
    json!({ "type": "integer", "minimum": 1, "maximum": MAX_GESTURE_MS, "default": default })
}

/// Every Action of an Android device.
pub fn definitions() -> Vec<ActionDefinition> {
    let text = json!({
        "type": "object",
        "properties": { "text": { "type": "string", "maxLength": MAX_TEXT } },
        "required": ["text"],
        "additionalProperties": false
    });
    let none = json!({ "type": "object", "properties": {}, "additionalProperties": false });
    let key_names: Vec<&str> = crate::keys::names().collect();
    let mut defs = vec![
        def(
            "tap",
            "Tap a point given in screenshot pixels.",
            json!({
                "type": "object",
                "properties": { "x": point("pixels from the left"), "y": point("pixels from the top") },
                "required": ["x", "y"],
                "additionalProperties": false
            }),
        ),
        def(
            "longPress",
            "Press and hold a point given in screenshot pixels.",
            json!({
                "type": "object",
                "properties": {
                    "x": point("pixels from the left"),
                    "y": point("pixels from the top"),
                    "durationMs": duration(DEFAULT_LONG_PRESS_MS)
                },
                "required": ["x", "y"],
                "additionalProperties": false
            }),
        ),
        def(
            "swipe",
            "Swipe from one point to another (screenshot pixels).",
            json!({
                "type": "object",
                "properties": {
                    "fromX": point("start, pixels from the left"),
                    "fromY": point("start, pixels from the top"),
                    "toX": point("end, pixels from the left"),
                    "toY": point("end, pixels from the top"),
                    "durationMs": duration(DEFAULT_SWIPE_MS)
                },
                "required": ["fromX", "fromY", "toX", "toY"],
                "additionalProperties": false
            }),
        ),
        def(
            "inputText",
            "Type text into the focused field. Printable ASCII, newline (Enter) and tab only; other characters are refused with invalid_arguments.",
            text.clone(),
        ),
        ActionDefinition {
            protection: Some(ActionProtection::Protected),
            ..def(
                "inputSecret",
                "Type a secret into the focused field. The text travels on the shell's stdin, never on a command line, and is never logged. Same character rules as inputText.",
                text,
            )
        },
        def(
            "pressKey",
            &format!(
                "Press a key by name: {}, a letter or a digit (KEYCODE_ names also work).",
                key_names.join(", ")
            ),
            json!({
                "type": "object",
                "properties": { "key": { "type": "string", "minLength": 1, "maxLength": 64 } },
                "required": ["key"],
                "additionalProperties": false
            }),
        ),
        def("back", "Press the Back key.", none.clone()),
        def("home", "Press the Home key.", none),
        def(
            "launchApp",
            "Start an installed app's launcher activity by package name.",
            json!({
                "type": "object",
                "properties": { "appId": {
                    "type": "string", "minLength": 3, "maxLength": 255,
                    "pattern": "^[A-Za-z_][A-Za-z0-9_]*(\\.[A-Za-z_][A-Za-z0-9_]*)+$"
                } },
                "required": ["appId"],
                "additionalProperties": false
            }),
        ),
        def(
            "openUrl",
            "Open a URL with the VIEW intent (the default browser or the app that handles it).",
            json!({
                "type": "object",
                "properties": { "url": {
                    "type": "string", "minLength": 1, "maxLength": MAX_URL,
                    "pattern": "^[A-Za-z][A-Za-z0-9+.-]*:\\S+$"
                } },
                "required": ["url"],
                "additionalProperties": false
            }),
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
        assert!(check_url("https://example.com/?q=a&b=c").is_ok());
        assert!(check_url("myapp://deep/link").is_ok());
        assert!(check_url("example.com").is_err());
        assert!(check_url("https://a b").is_err());
        assert!(check_url("").is_err());
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

    #[test]
    fn secret_args_do_not_print() {
        let a: TextArgs = serde_json::from_value(json!({ "text": "hunter2" })).expect("parses");
        assert!(!format!("{a:?}").contains("hunter2"));
    }
}
