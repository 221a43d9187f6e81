//! The action space: definitions with their input schemas (built from
//! `devicerail_host_plugin_api::actions`), the keys `pressKey` knows, and the
//! validators for values that end up on an `xcrun` command line.

use devicerail_host_plugin_api::actions::{
    self, AppIds, BundleLaunchArgs, GestureDuration, KeyNames, NoArgs, Points, UrlRules,
};
use devicerail_host_plugin_api::protocol::ActionDefinition;
use devicerail_host_plugin_api::semantic;
use serde::Deserialize;

/// Longest text `inputText`/`inputSecret` accept, in characters.
pub(crate) const MAX_TEXT_CHARS: usize = 4096;
/// Duration of `swipe`: at most 10 s, 300 ms when `durationMs` is absent.
pub(crate) const SWIPE: GestureDuration = GestureDuration::new(0, 10_000, 300).unadvertised();
/// The URLs `openUrl` accepts: up to 4096 characters, a scheme and
/// something after it, no whitespace (they go onto an `xcrun` command line).
pub(crate) const URLS: UrlRules = UrlRules::new(4096).with_schema_pattern();
/// Coordinates of `tap` and `swipe`.
const POINTS: Points = Points::whole(100_000, 100_000);

/// A key `pressKey` can press.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) enum Key {
    /// `return`: a newline typed into the focused field.
    Return,
    /// `delete`: backspace.
    Delete,
    /// `tab`.
    Tab,
    /// `space`.
    Space,
    /// `home`: the hardware home button.
    Home,
    /// `volumeUp`: the hardware button.
    VolumeUp,
    /// `volumeDown`: the hardware button.
    VolumeDown,
}

/// How WebDriverAgent presses a [`Key`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum KeyPress {
    /// Typed through `/wda/keys` (the keyboard's special characters).
    Typed(&'static str),
    /// A hardware button through `/wda/pressButton`.
    Button(&'static str),
}

impl Key {
    /// Every key's wire name, for the action's input schema.
    pub(crate) const ALL: [&'static str; 7] = [
        "return",
        "delete",
        "tab",
        "space",
        "home",
        "volumeUp",
        "volumeDown",
    ];

    /// How WDA produces this key.
    pub(crate) fn press(self) -> KeyPress {
        match self {
            Self::Return => KeyPress::Typed("\n"),
            // XCUIKeyboardKeyDelete is the backspace character.
            Self::Delete => KeyPress::Typed("\u{8}"),
            Self::Tab => KeyPress::Typed("\t"),
            Self::Space => KeyPress::Typed(" "),
            Self::Home => KeyPress::Button("home"),
            Self::VolumeUp => KeyPress::Button("volumeUp"),
            Self::VolumeDown => KeyPress::Button("volumeDown"),
        }
    }
}

/// Whether `id` is a plausible bundle identifier: 1–255 of
/// `[A-Za-z0-9.-]`, starting with a letter or digit (never an option).
pub(crate) fn valid_bundle_id(id: &str) -> bool {
    (1..=255).contains(&id.len())
        && id.bytes().next().is_some_and(|b| b.is_ascii_alphanumeric())
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'.' || b == b'-' || b == b'_')
}

/// Every Action an iOS Simulator offers, the five semantic ones last.
pub fn definitions() -> Vec<ActionDefinition> {
    let mut defs = vec![
        actions::tap("Tap a point given in screenshot pixels.", POINTS),
        actions::swipe(
            "Swipe from one point to another (screenshot pixels) over durationMs (default 300).",
            POINTS,
            &SWIPE,
        ),
        actions::input_text(
            "Type text into the focused element through the simulator keyboard.",
            MAX_TEXT_CHARS,
        ),
        actions::input_secret(
            "Type a secret into the focused element; the text is never recorded or logged.",
            MAX_TEXT_CHARS,
        ),
        actions::press_key(
            "Press a keyboard key (return, delete, tab, space) or a hardware button (home, volumeUp, volumeDown).",
            KeyNames::OneOf(&Key::ALL),
        ),
        actions::definition(
            "home",
            "Go to the home screen.",
            NoArgs::schema_with_properties(),
        ),
        actions::launch_app(
            "Launch an installed app by bundle id (xcrun simctl launch).",
            &AppIds {
                field: BundleLaunchArgs::FIELD,
                min_len: 1,
                max_len: 255,
                pattern: "^[A-Za-z0-9][A-Za-z0-9._-]*$",
            },
        ),
        actions::open_url(
            "Open a URL on the simulator (xcrun simctl openurl): web pages in Safari, custom schemes in their app.",
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
    fn bundle_ids() {
        assert!(valid_bundle_id("com.apple.Preferences"));
        assert!(valid_bundle_id("com.example.my-app_2"));
        assert!(!valid_bundle_id(""));
        assert!(!valid_bundle_id("-h"));
        assert!(!valid_bundle_id("com.example app"));
        assert!(!valid_bundle_id(&"a".repeat(256)));
    }

    #[test]
    fn urls() {
        assert!(URLS.check("https://example.com/a?b=c").is_ok());
        assert!(URLS.check("myapp://open/item/1").is_ok());
        assert!(URLS.check("").is_err());
        assert!(URLS.check("no-scheme").is_err());
        assert!(URLS.check("-x:y").is_err());
        assert!(URLS.check("https://exa mple.com").is_err());
        assert!(URLS.check("https:").is_err());
    }

    #[test]
    fn the_secret_action_is_protected_and_names_are_unique() {
        let defs = definitions();
        let mut names: Vec<_> = defs.iter().map(|d| d.name.as_str()).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), defs.len());
        assert!(
            defs.iter()
                .find(|d| d.name == "inputSecret")
                .is_some_and(|d| d.is_protected())
        );
    }
}
