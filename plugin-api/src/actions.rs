//! The native action vocabulary drivers share: the argument types of
//! `tap`, `longPress`, `swipe`, `scroll`, `inputText`, `inputSecret`,
//! `pressKey`, `launchApp`, `openUrl`/`navigate` and argument-less
//! Actions; their input schemas, built from the same limits the checks
//! use; one URL check; and the one way to declare `inputSecret`, which is
//! always protected.
//!
//! Platforms differ in limits (text length, gesture durations, URL rules,
//! coordinate ranges), so the schema builders and checks take them as
//! parameters; the names, shapes and checks are written once, here.
//!
//! ```
//! use devicerail_host_plugin_api::actions::{self, Points, UrlRules};
//!
//! const URLS: UrlRules = UrlRules::new(4096);
//! let defs = vec![
//!     actions::tap("Tap a point in screenshot pixels.", Points::within(720, 1280)),
//!     actions::input_text("Type text into the focused field.", 4096),
//!     actions::input_secret("Type a secret into the focused field.", 4096),
//!     actions::open_url("Open a URL.", &URLS),
//! ];
//! assert!(defs[2].is_protected());
//! assert!(actions::check_protection(&defs).is_ok());
//! ```
//!
//! Argument structs keep the Rust names drivers always used (`TapArgs`,
//! `TextArgs`, ...): serde quotes them in `invalid_arguments` reasons.

use std::fmt;

use devicerail_host_protocol::{ActionCall, ActionDefinition, ActionProtection};
use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

use crate::driver::{DriverError, DriverResult};

/// `tap`: one touch (or click) at a point.
pub const TAP: &str = "tap";
/// `longPress`: press and hold a point.
pub const LONG_PRESS: &str = "longPress";
/// `swipe`: a straight gesture between two points.
pub const SWIPE: &str = "swipe";
/// `scroll`: scroll the content by a delta.
pub const SCROLL: &str = "scroll";
/// `inputText`: type text into the focused field.
pub const INPUT_TEXT: &str = "inputText";
/// `inputSecret`: type a secret; always protected.
pub const INPUT_SECRET: &str = "inputSecret";
/// `pressKey`: press one key by name.
pub const PRESS_KEY: &str = "pressKey";
/// `launchApp`: start an installed app.
pub const LAUNCH_APP: &str = "launchApp";
/// `openUrl`: hand a URL to the platform.
pub const OPEN_URL: &str = "openUrl";
/// `navigate`: load a URL in a page (browsers).
pub const NAVIGATE: &str = "navigate";

/// Parses Action arguments (a missing `null` counts as `{}`), mapping
/// defects to `invalid_arguments`.
pub fn parse_arguments<T: DeserializeOwned>(call: &ActionCall) -> DriverResult<T> {
    let args = if call.arguments.is_null() {
        json!({})
    } else {
        call.arguments.clone()
    };
    serde_json::from_value(args).map_err(|e| DriverError::invalid_arguments(&call.name, e))
}

/// `tap` arguments, in screenshot pixels (`C`: `u32`, or `f64` where
/// fractions are allowed).
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct TapArgs<C = u32> {
    /// Pixels from the left.
    pub x: C,
    /// Pixels from the top.
    pub y: C,
}

/// `longPress` arguments, in screenshot pixels.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct LongPressArgs {
    /// Pixels from the left.
    pub x: u32,
    /// Pixels from the top.
    pub y: u32,
    /// How long to hold; see [`GestureDuration::resolve`].
    #[serde(default)]
    pub duration_ms: Option<u32>,
}

/// `swipe` arguments, in screenshot pixels.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct SwipeArgs {
    /// Start, pixels from the left.
    pub from_x: u32,
    /// Start, pixels from the top.
    pub from_y: u32,
    /// End, pixels from the left.
    pub to_x: u32,
    /// End, pixels from the top.
    pub to_y: u32,
    /// How long the gesture takes; see [`GestureDuration::resolve`].
    #[serde(default)]
    pub duration_ms: Option<u32>,
}

/// `scroll` arguments: a delta in screenshot pixels (`D`: the integer
/// type the platform scrolls by).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ScrollArgs<D = i64> {
    /// Horizontal delta; positive scrolls right.
    pub delta_x: D,
    /// Vertical delta; positive scrolls down.
    pub delta_y: D,
}

impl<D: Copy + Into<i64>> ScrollArgs<D> {
    /// Refuses deltas beyond `±max` (`invalid_arguments`).
    pub fn check_limit(&self, call: &ActionCall, max: u32) -> DriverResult<()> {
        let within = |d: D| d.into().unsigned_abs() <= u64::from(max);
        if within(self.delta_x) && within(self.delta_y) {
            Ok(())
        } else {
            Err(DriverError::invalid_arguments(
                &call.name,
                ArgumentError::Delta { max },
            ))
        }
    }
}

/// `inputText` / `inputSecret` arguments. The `Debug` form shows the
/// length only, never the text.
#[derive(Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TextArgs {
    /// The text to type.
    pub text: String,
}

impl fmt::Debug for TextArgs {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "TextArgs {{ {} chars }}", self.chars())
    }
}

/// The reason given for unusable `inputSecret` arguments: parser messages
/// can quote input, so they are not passed on.
const SECRET_ARGUMENTS: &str = "expected an object with one string field `text`";

impl TextArgs {
    /// Parses the arguments of `call`. For `inputSecret` the reason of a
    /// refusal never quotes the arguments.
    pub fn parse(call: &ActionCall) -> DriverResult<Self> {
        if call.name == INPUT_SECRET {
            parse_arguments(call)
                .map_err(|_| DriverError::invalid_arguments(&call.name, SECRET_ARGUMENTS))
        } else {
            parse_arguments(call)
        }
    }

    /// The length of the text, in characters.
    pub fn chars(&self) -> usize {
        self.text.chars().count()
    }

    /// Refuses text longer than `max_chars` characters (`invalid_arguments`).
    pub fn check_length(&self, call: &ActionCall, max_chars: usize) -> DriverResult<()> {
        if self.chars() > max_chars {
            Err(DriverError::invalid_arguments(
                &call.name,
                ArgumentError::TextTooLong { max: max_chars },
            ))
        } else {
            Ok(())
        }
    }
}

/// `pressKey` arguments (`K`: a key name, or the platform's own key type).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct KeyArgs<K = String> {
    /// The key to press, by name (or deserialized into the platform's key
    /// type, which then refuses names it does not know).
    pub key: K,
}

/// `launchApp` arguments naming the app by `appId` (such as an Android
/// package name).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct LaunchArgs {
    /// The app's id.
    pub app_id: String,
}

impl LaunchArgs {
    /// The argument's name.
    pub const FIELD: &'static str = "appId";
}

/// `launchApp` arguments naming the app by `bundleId` (Apple platforms).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(
    expecting = "struct LaunchArgs",
    deny_unknown_fields,
    rename_all = "camelCase"
)]
pub struct BundleLaunchArgs {
    /// The app's bundle identifier.
    pub bundle_id: String,
}

impl BundleLaunchArgs {
    /// The argument's name.
    pub const FIELD: &'static str = "bundleId";
}

/// `openUrl` / `navigate` arguments.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct UrlArgs {
    /// The URL to open, as the caller sent it: check it with
    /// [`UrlRules::check`] before use.
    pub url: String,
}

/// Arguments of Actions that take none (`{}` or `null`).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NoArgs {}

impl NoArgs {
    /// The input schema: an object without members.
    pub fn schema() -> Value {
        json!({ "type": "object", "additionalProperties": false })
    }

    /// The same schema with an explicit, empty `properties`.
    pub fn schema_with_properties() -> Value {
        json!({ "type": "object", "properties": {}, "additionalProperties": false })
    }
}

/// A refused argument value; drivers report it as `invalid_arguments`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ArgumentError {
    /// The text is longer than the limit.
    #[error("text is longer than {max} characters")]
    TextTooLong {
        /// The limit, in characters.
        max: usize,
    },
    /// The gesture duration is outside the allowed range.
    #[error("durationMs must be {0}")]
    Duration(MillisRange),
    /// A scroll delta is beyond the limit.
    #[error("deltas are limited to ±{max}")]
    Delta {
        /// The limit, in pixels.
        max: u32,
    },
    /// The URL is refused.
    #[error(transparent)]
    Url(#[from] UrlError),
}

/// An inclusive range of milliseconds, as an error message states it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MillisRange {
    /// Smallest allowed value.
    pub min: u32,
    /// Largest allowed value.
    pub max: u32,
}

impl fmt::Display for MillisRange {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.min == 0 {
            write!(f, "at most {}", self.max)
        } else {
            write!(f, "{}..={}", self.min, self.max)
        }
    }
}

/// How one coordinate of a point is bounded in an input schema.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Axis {
    /// Whole pixels from 0 to `max`, inclusive.
    Whole {
        /// The largest coordinate.
        max: u32,
    },
    /// Pixels with fractions, from 0 up to (not including) `end`.
    Fractional {
        /// The first coordinate past the edge.
        end: u32,
    },
}

/// The coordinates an Action's points take, in screenshot pixels.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Points {
    /// Bounds of `x`.
    pub x: Axis,
    /// Bounds of `y`.
    pub y: Axis,
    /// Whether each coordinate carries a `description` in the schema.
    pub described: bool,
}

impl Points {
    /// Whole pixels up to `max_x` and `max_y`, inclusive.
    pub const fn whole(max_x: u32, max_y: u32) -> Self {
        Self {
            x: Axis::Whole { max: max_x },
            y: Axis::Whole { max: max_y },
            described: false,
        }
    }

    /// Whole pixels inside a `width` x `height` screen.
    pub const fn within(width: u32, height: u32) -> Self {
        Self::whole(width.saturating_sub(1), height.saturating_sub(1))
    }

    /// Fractional pixels inside a `width` x `height` viewport.
    pub const fn fractional(width: u32, height: u32) -> Self {
        Self {
            x: Axis::Fractional { end: width },
            y: Axis::Fractional { end: height },
            described: false,
        }
    }

    /// The same bounds, with each coordinate described in the schema.
    pub const fn described(self) -> Self {
        Self {
            described: true,
            ..self
        }
    }

    /// The schema of one coordinate; `role` prefixes its description
    /// (`start`, `end`).
    fn coordinate(&self, horizontal: bool, role: Option<&str>) -> Value {
        let mut schema = match if horizontal { self.x } else { self.y } {
            Axis::Whole { max } => json!({ "type": "integer", "minimum": 0, "maximum": max }),
            Axis::Fractional { end } => {
                json!({ "type": "number", "minimum": 0, "exclusiveMaximum": end })
            }
        };
        if self.described {
            let side = if horizontal {
                "pixels from the left"
            } else {
                "pixels from the top"
            };
            let text = match role {
                Some(role) => format!("{role}, {side}"),
                None => side.to_owned(),
            };
            schema["description"] = json!(text);
        }
        schema
    }
}

/// The duration of a gesture, in milliseconds: its range, and the value
/// used when the call gives none.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GestureDuration {
    /// The `durationMs` values the Action accepts (inclusive).
    pub range: MillisRange,
    /// Used when `durationMs` is absent.
    pub default_ms: u32,
    /// Whether the schema states the default.
    pub advertise_default: bool,
}

impl GestureDuration {
    /// `min..=max` ms, `default_ms` when absent (stated in the schema).
    pub const fn new(min: u32, max: u32, default_ms: u32) -> Self {
        Self {
            range: MillisRange { min, max },
            default_ms,
            advertise_default: true,
        }
    }

    /// The same, with the default left out of the schema.
    pub const fn unadvertised(self) -> Self {
        Self {
            advertise_default: false,
            ..self
        }
    }

    /// The duration to use for `given`, or `invalid_arguments`.
    pub fn resolve(&self, call: &ActionCall, given: Option<u32>) -> DriverResult<u32> {
        let ms = given.unwrap_or(self.default_ms);
        if (self.range.min..=self.range.max).contains(&ms) {
            Ok(ms)
        } else {
            Err(DriverError::invalid_arguments(
                &call.name,
                ArgumentError::Duration(self.range),
            ))
        }
    }

    /// The `durationMs` schema.
    fn schema(&self) -> Value {
        let mut schema = json!({
            "type": "integer", "minimum": self.range.min, "maximum": self.range.max
        });
        if self.advertise_default {
            schema["default"] = json!(self.default_ms);
        }
        schema
    }
}

/// Why a URL is refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum UrlError {
    /// Empty, or longer than the limit.
    #[error("the URL must have 1 to {max} characters")]
    Length {
        /// The limit, in characters.
        max: usize,
    },
    /// Whitespace or control characters where they are not allowed.
    #[error("the URL contains whitespace or control characters")]
    Whitespace,
    /// No `scheme:` (letters, digits, `+`, `-`, `.`; a letter first).
    #[error("the URL has no scheme (such as https:)")]
    NoScheme,
    /// Nothing after `scheme:` where something is required.
    #[error("the URL has nothing after its scheme")]
    NothingAfterScheme,
}

/// The schema pattern of a URL's scheme (`https:`), anchored at the start.
const SCHEME_PATTERN: &str = "^[A-Za-z][A-Za-z0-9+.-]*:";
/// The schema pattern of a URL with a scheme and no whitespace after it.
#[cfg(test)]
const URL_PATTERN: &str = "^[A-Za-z][A-Za-z0-9+.-]*:\\S+$";
/// The URL a schema with a stated pattern gives as its example: every rule
/// set accepts it, and opening it changes nothing anywhere.
pub const URL_EXAMPLE: &str = "about:blank";

/// What a platform accepts as a URL. Lengths count characters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UrlRules {
    /// Longest URL, in characters.
    pub max_chars: usize,
    /// Whether whitespace and control characters are allowed (browsers
    /// encode them; command lines and intents must not see them).
    pub allow_whitespace: bool,
    /// Whether `scheme:` alone is a URL (`about:` and the like).
    pub allow_empty_rest: bool,
    /// Whether the schema states the URL pattern (`scheme:` and no
    /// whitespace after it).
    pub schema_pattern: bool,
}

impl UrlRules {
    /// At most `max_chars` characters, a scheme and something after it,
    /// no whitespace or control characters.
    pub const fn new(max_chars: usize) -> Self {
        Self {
            max_chars,
            allow_whitespace: false,
            allow_empty_rest: false,
            schema_pattern: false,
        }
    }

    /// The same, with whitespace and control characters allowed.
    pub const fn allowing_whitespace(self) -> Self {
        Self {
            allow_whitespace: true,
            ..self
        }
    }

    /// The same, with nothing required after the scheme.
    pub const fn allowing_empty_rest(self) -> Self {
        Self {
            allow_empty_rest: true,
            ..self
        }
    }

    /// The same, with the scheme pattern stated in the schema.
    pub const fn with_schema_pattern(self) -> Self {
        Self {
            schema_pattern: true,
            ..self
        }
    }

    /// Checks `url` against the rules.
    pub fn check(&self, url: &str) -> Result<(), UrlError> {
        if url.is_empty() || url.chars().count() > self.max_chars {
            return Err(UrlError::Length {
                max: self.max_chars,
            });
        }
        if !self.allow_whitespace && url.chars().any(|c| c.is_control() || c.is_whitespace()) {
            return Err(UrlError::Whitespace);
        }
        let Some((scheme, rest)) = url.split_once(':') else {
            return Err(UrlError::NoScheme);
        };
        let mut chars = scheme.chars();
        let scheme_ok = chars.next().is_some_and(|c| c.is_ascii_alphabetic())
            && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'));
        if !scheme_ok {
            return Err(UrlError::NoScheme);
        }
        if rest.is_empty() && !self.allow_empty_rest {
            return Err(UrlError::NothingAfterScheme);
        }
        Ok(())
    }

    /// The schema pattern these rules imply: a scheme, then what may
    /// follow it (whitespace or not, something or nothing).
    pub fn pattern(&self) -> String {
        let rest = match (self.allow_whitespace, self.allow_empty_rest) {
            (false, false) => "\\S+$",
            (false, true) => "\\S*$",
            (true, false) => "[\\s\\S]",
            (true, true) => "",
        };
        format!("{SCHEME_PATTERN}{rest}")
    }

    /// The input schema of an Action taking [`UrlArgs`]; with
    /// [`UrlRules::with_schema_pattern`] it states [`UrlRules::pattern`]
    /// and gives [`URL_EXAMPLE`] as its example.
    pub fn schema(&self) -> Value {
        let mut url = json!({ "type": "string", "minLength": 1, "maxLength": self.max_chars });
        if self.schema_pattern {
            url["pattern"] = json!(self.pattern());
        }
        let mut schema = object(json!({ "url": url }), &["url"]);
        if self.schema_pattern && self.check(URL_EXAMPLE).is_ok() {
            schema["examples"] = json!([{ "url": URL_EXAMPLE }]);
        }
        schema
    }
}

impl UrlArgs {
    /// Refuses a URL `rules` do not accept (`invalid_arguments`).
    pub fn check(&self, call: &ActionCall, rules: &UrlRules) -> DriverResult<()> {
        rules
            .check(&self.url)
            .map_err(|e| DriverError::invalid_arguments(&call.name, e))
    }
}

/// The key names `pressKey` takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeyNames<'a> {
    /// Any name of 1 to `max_len` characters, checked by the driver.
    Any {
        /// Longest name.
        max_len: usize,
    },
    /// Exactly these names.
    OneOf(&'a [&'a str]),
}

/// How `launchApp` names the app.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AppIds<'a> {
    /// The argument ([`LaunchArgs::FIELD`] or [`BundleLaunchArgs::FIELD`]).
    pub field: &'a str,
    /// Shortest id the schema accepts (`minLength`, in characters).
    pub min_len: usize,
    /// Longest id the schema accepts (`maxLength`, in characters).
    pub max_len: usize,
    /// The id's pattern.
    pub pattern: &'a str,
}

/// An object schema with `properties`, `required` and no other members.
fn object(properties: Value, required: &[&str]) -> Value {
    json!({
        "type": "object",
        "properties": properties,
        "required": required,
        "additionalProperties": false
    })
}

/// An Action definition. `inputSecret` is always protected, whoever
/// builds it; everything else is standard.
pub fn definition(name: &str, description: &str, input_schema: Value) -> ActionDefinition {
    ActionDefinition {
        name: name.into(),
        description: description.into(),
        input_schema,
        protection: (name == INPUT_SECRET).then_some(ActionProtection::Protected),
    }
}

/// `tap` at a point.
pub fn tap(description: &str, points: Points) -> ActionDefinition {
    let properties = json!({
        "x": points.coordinate(true, None),
        "y": points.coordinate(false, None),
    });
    definition(TAP, description, object(properties, &["x", "y"]))
}

/// `longPress` at a point for a [`GestureDuration`].
pub fn long_press(
    description: &str,
    points: Points,
    duration: &GestureDuration,
) -> ActionDefinition {
    let properties = json!({
        "x": points.coordinate(true, None),
        "y": points.coordinate(false, None),
        "durationMs": duration.schema(),
    });
    definition(LONG_PRESS, description, object(properties, &["x", "y"]))
}

/// `swipe` between two points over a [`GestureDuration`].
pub fn swipe(description: &str, points: Points, duration: &GestureDuration) -> ActionDefinition {
    let properties = json!({
        "fromX": points.coordinate(true, Some("start")),
        "fromY": points.coordinate(false, Some("start")),
        "toX": points.coordinate(true, Some("end")),
        "toY": points.coordinate(false, Some("end")),
        "durationMs": duration.schema(),
    });
    definition(
        SWIPE,
        description,
        object(properties, &["fromX", "fromY", "toX", "toY"]),
    )
}

/// `scroll` by a delta of at most `±max_delta` pixels per axis.
pub fn scroll(description: &str, max_delta: u32) -> ActionDefinition {
    let delta =
        json!({ "type": "integer", "minimum": -i64::from(max_delta), "maximum": max_delta });
    let properties = json!({ "deltaX": delta, "deltaY": delta });
    definition(
        SCROLL,
        description,
        object(properties, &["deltaX", "deltaY"]),
    )
}

/// The input schema of [`TextArgs`] with at most `max_chars` characters.
fn text_schema(max_chars: usize) -> Value {
    object(
        json!({ "text": { "type": "string", "maxLength": max_chars } }),
        &["text"],
    )
}

/// `inputText` of at most `max_chars` characters.
pub fn input_text(description: &str, max_chars: usize) -> ActionDefinition {
    definition(INPUT_TEXT, description, text_schema(max_chars))
}

/// `inputSecret` of at most `max_chars` characters: always protected (its
/// arguments are redacted and its screenshots omitted).
pub fn input_secret(description: &str, max_chars: usize) -> ActionDefinition {
    ActionDefinition {
        protection: Some(ActionProtection::Protected),
        ..definition(INPUT_SECRET, description, text_schema(max_chars))
    }
}

/// `pressKey` with one of the [`KeyNames`].
pub fn press_key(description: &str, keys: KeyNames<'_>) -> ActionDefinition {
    let key = match keys {
        KeyNames::Any { max_len } => {
            json!({ "type": "string", "minLength": 1, "maxLength": max_len })
        }
        KeyNames::OneOf(names) => json!({ "type": "string", "enum": names }),
    };
    definition(
        PRESS_KEY,
        description,
        object(json!({ "key": key }), &["key"]),
    )
}

/// `launchApp` by an id of the form [`AppIds`] states.
pub fn launch_app(description: &str, ids: &AppIds<'_>) -> ActionDefinition {
    let id = json!({
        "type": "string", "minLength": ids.min_len, "maxLength": ids.max_len, "pattern": ids.pattern
    });
    let mut properties = serde_json::Map::new();
    properties.insert(ids.field.to_owned(), id);
    definition(
        LAUNCH_APP,
        description,
        object(Value::Object(properties), &[ids.field]),
    )
}

/// `openUrl` with a URL `rules` accept.
pub fn open_url(description: &str, rules: &UrlRules) -> ActionDefinition {
    definition(OPEN_URL, description, rules.schema())
}

/// `navigate` (a page loads a URL) with a URL `rules` accept.
pub fn navigate(description: &str, rules: &UrlRules) -> ActionDefinition {
    definition(NAVIGATE, description, rules.schema())
}

/// An `inputSecret` definition without protection.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "the driver declares {action} without `protection: protected`; build it with actions::input_secret"
)]
pub struct UnprotectedSecret {
    /// The Action's name.
    pub action: String,
}

/// Refuses an action space whose `inputSecret` is not protected.
pub fn check_protection(actions: &[ActionDefinition]) -> Result<(), UnprotectedSecret> {
    match actions
        .iter()
        .find(|a| a.name == INPUT_SECRET && !a.is_protected())
    {
        None => Ok(()),
        Some(a) => Err(UnprotectedSecret {
            action: a.name.clone(),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use devicerail_host_protocol::{CallId, ErrorCode};

    fn call(name: &str, arguments: Value) -> ActionCall {
        ActionCall::new(CallId::new_v4(), name, arguments)
    }

    #[test]
    fn urls() {
        let strict = UrlRules::new(4096);
        assert!(strict.check("https://example.com/?q=a&b=c").is_ok());
        assert!(strict.check("myapp://deep/link").is_ok());
        assert_eq!(strict.check("example.com"), Err(UrlError::NoScheme));
        assert_eq!(strict.check("-x:y"), Err(UrlError::NoScheme));
        assert_eq!(strict.check("1http://x"), Err(UrlError::NoScheme));
        assert_eq!(strict.check("https://a b"), Err(UrlError::Whitespace));
        assert_eq!(strict.check(""), Err(UrlError::Length { max: 4096 }));
        assert_eq!(strict.check("https:"), Err(UrlError::NothingAfterScheme));
        assert!(strict.allowing_empty_rest().check("https:").is_ok());
        // Characters, not bytes.
        let wide = format!("https://{}", "é".repeat(4000));
        assert!(strict.check(&wide).is_ok());
        assert!(strict.check(&format!("{wide}{}", "x".repeat(89))).is_err());
        let browser = UrlRules::new(8192)
            .allowing_whitespace()
            .allowing_empty_rest();
        for ok in ["about:blank", "data:text/html,<p>a b</p>", "about:"] {
            assert!(browser.check(ok).is_ok(), "{ok}");
        }
    }

    #[test]
    fn secret_text_never_prints_and_its_errors_never_quote_it() {
        let a = TextArgs::parse(&call(INPUT_SECRET, json!({ "text": "hunter2" }))).expect("parses");
        assert!(!format!("{a:?}").contains("hunter2"));
        assert_eq!(format!("{a:?}"), "TextArgs { 7 chars }");
        let e = TextArgs::parse(&call(INPUT_SECRET, json!({ "text": 3, "x": "hunter2" })))
            .expect_err("refused");
        assert_eq!(e.code, ErrorCode::InvalidArguments);
        assert!(!e.to_string().contains("hunter2"));
        let e = TextArgs::parse(&call(INPUT_TEXT, json!({ "text": 3 }))).expect_err("refused");
        assert!(e.message.contains("expected a string"), "{e}");
    }

    #[test]
    fn input_secret_is_always_protected() {
        assert!(input_secret("s", 10).is_protected());
        assert!(definition(INPUT_SECRET, "s", json!({})).is_protected());
        assert!(!input_text("t", 10).is_protected());
        let mut defs = vec![input_text("t", 10), input_secret("s", 10)];
        assert!(check_protection(&defs).is_ok());
        defs[1].protection = None;
        assert_eq!(
            check_protection(&defs),
            Err(UnprotectedSecret {
                action: INPUT_SECRET.into()
            })
        );
    }

    #[test]
    fn durations_and_limits() {
        let swipe = call(SWIPE, json!({}));
        let android = GestureDuration::new(1, 60_000, 300);
        assert_eq!(android.resolve(&swipe, None), Ok(300));
        let e = android.resolve(&swipe, Some(0)).expect_err("refused");
        assert!(e.message.ends_with("durationMs must be 1..=60000"), "{e}");
        let ios = GestureDuration::new(0, 10_000, 300).unadvertised();
        let e = ios.resolve(&swipe, Some(10_001)).expect_err("refused");
        assert!(
            e.message.ends_with("durationMs must be at most 10000"),
            "{e}"
        );
        assert_eq!(ios.schema().get("default"), None);
        let scroll = ScrollArgs::<i64> {
            delta_x: i64::MIN,
            delta_y: 0,
        };
        assert!(scroll.check_limit(&call(SCROLL, json!({})), 10).is_err());
        let text = TextArgs { text: "abc".into() };
        assert!(text.check_length(&call(INPUT_TEXT, json!({})), 3).is_ok());
        assert!(text.check_length(&call(INPUT_TEXT, json!({})), 2).is_err());
    }

    #[test]
    fn arguments_keep_their_names_in_reasons() {
        let e =
            parse_arguments::<TapArgs>(&call(TAP, json!("not an object"))).expect_err("refused");
        assert!(e.message.contains("struct TapArgs"), "{e}");
        let e = parse_arguments::<BundleLaunchArgs>(&call(LAUNCH_APP, json!({ "appId": "x" })))
            .expect_err("refused");
        assert!(e.message.contains("`bundleId`"), "{e}");
        let e =
            parse_arguments::<BundleLaunchArgs>(&call(LAUNCH_APP, json!(1))).expect_err("refused");
        assert!(e.message.contains("struct LaunchArgs"), "{e}");
        assert_eq!(
            parse_arguments::<NoArgs>(&call("home", Value::Null)),
            Ok(NoArgs {})
        );
    }

    #[test]
    fn schemas() {
        let d = tap("t", Points::whole(100_000, 100_000).described());
        assert_eq!(
            d.input_schema["properties"]["x"]["description"],
            "pixels from the left"
        );
        let d = swipe(
            "s",
            Points::whole(9, 9).described(),
            &GestureDuration::new(1, 60_000, 300),
        );
        assert_eq!(
            d.input_schema["properties"]["toY"]["description"],
            "end, pixels from the top"
        );
        assert_eq!(d.input_schema["properties"]["durationMs"]["default"], 300);
        let d = tap("t", Points::fractional(1280, 720));
        assert_eq!(d.input_schema["properties"]["y"]["exclusiveMaximum"], 720);
        let d = open_url("o", &UrlRules::new(10).with_schema_pattern());
        assert_eq!(d.input_schema["properties"]["url"]["pattern"], URL_PATTERN);
        assert_eq!(d.input_schema["required"], json!(["url"]));
        assert!(d.input_schema.get("examples").is_none(), "too long for 10");
        let d = open_url("o", &UrlRules::new(100).with_schema_pattern());
        assert_eq!(d.input_schema["examples"], json!([{ "url": URL_EXAMPLE }]));
    }

    /// The stated pattern accepts exactly what the rules accept, as a JSON
    /// Schema validator evaluates it.
    #[cfg(feature = "conformance")]
    #[test]
    fn url_patterns_say_what_the_rules_accept() {
        let rules = UrlRules::new(100).with_schema_pattern();
        for rules in [
            rules,
            rules.allowing_whitespace(),
            rules.allowing_empty_rest(),
            rules.allowing_whitespace().allowing_empty_rest(),
        ] {
            let validator = jsonschema::validator_for(&rules.schema()).expect("schema compiles");
            for url in [
                "https://a b",
                "about:",
                "about:blank",
                "x",
                "https://x",
                "-x:y",
            ] {
                assert_eq!(
                    validator.is_valid(&json!({ "url": url })),
                    rules.check(url).is_ok(),
                    "{url:?} with {rules:?} and {}",
                    rules.pattern()
                );
            }
        }
    }
}
