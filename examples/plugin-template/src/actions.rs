//! The hello device's action space: the definitions the host advertises
//! and the parsing that turns a call into a validated [`Action`]. Every
//! action checks its arguments; anything else is `invalid_arguments`.

use devicerail_host_plugin_api::actions::{self, Points, TapArgs, parse_arguments};
use devicerail_host_plugin_api::protocol::{ActionCall, ActionDefinition};
use devicerail_host_plugin_api::{DriverError, DriverResult};
use serde::Deserialize;
use serde_json::{Value, json};

/// Longest name `greet` accepts, in characters.
pub const MAX_NAME_CHARS: usize = 64;

/// One validated action.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Action {
    /// Tap a point, in screenshot pixels.
    Tap {
        /// Pixels from the left.
        x: u32,
        /// Pixels from the top.
        y: u32,
    },
    /// Paint the background.
    SetColor {
        /// Red, green and blue.
        rgb: [u8; 3],
    },
    /// Return a greeting; changes nothing on screen.
    Greet {
        /// Who is greeted.
        name: String,
    },
}

/// The action space of a `width` × `height` screen. `tap` is one of the
/// shared native Actions (`devicerail_host_plugin_api::actions`); the other two
/// are this device's own.
pub fn definitions(width: u32, height: u32) -> Vec<ActionDefinition> {
    vec![
        actions::tap(
            "Tap a point in screenshot pixels; a marker appears there.",
            Points::within(width, height),
        ),
        actions::definition(
            "setColor",
            "Paint the background with a #rrggbb colour.",
            with_examples(
                one_field(
                    "color",
                    json!({ "type": "string", "pattern": "^#[0-9a-fA-F]{6}$" }),
                ),
                // A pattern says what is valid but not how to make a valid
                // value: the example shows callers (and the conformance
                // suite) one.
                json!([{ "color": "#3366cc" }]),
            ),
        ),
        actions::definition(
            "greet",
            "Return a greeting for a name.",
            one_field(
                "name",
                json!({ "type": "string", "minLength": 1, "maxLength": MAX_NAME_CHARS }),
            ),
        ),
    ]
}

/// The input schema of an object with one required field.
fn one_field(name: &str, schema: Value) -> Value {
    json!({
        "type": "object",
        "properties": { name: schema },
        "required": [name],
        "additionalProperties": false
    })
}

/// `schema` with `examples`: arguments the action accepts.
fn with_examples(mut schema: Value, examples: Value) -> Value {
    schema["examples"] = examples;
    schema
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SetColorArgs {
    color: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct GreetArgs {
    name: String,
}

/// Parses `#rrggbb`.
pub fn parse_color(text: &str) -> Option<[u8; 3]> {
    let hex = text.strip_prefix('#')?;
    if hex.len() != 6 || !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    let channel = |i: usize| u8::from_str_radix(&hex[i..i + 2], 16).ok();
    Some([channel(0)?, channel(2)?, channel(4)?])
}

/// The colour as `#rrggbb`.
pub fn format_color(rgb: [u8; 3]) -> String {
    format!("#{:02x}{:02x}{:02x}", rgb[0], rgb[1], rgb[2])
}

/// Validates `call` against the action space of a `width` × `height`
/// screen.
pub fn parse(call: &ActionCall, width: u32, height: u32) -> DriverResult<Action> {
    let invalid = |reason: &str| DriverError::invalid_arguments(&call.name, reason);
    match call.name.as_str() {
        "tap" => {
            let a: TapArgs = parse_arguments(call)?;
            if a.x >= width || a.y >= height {
                return Err(invalid("the point is outside the screen"));
            }
            Ok(Action::Tap { x: a.x, y: a.y })
        }
        "setColor" => {
            let a: SetColorArgs = parse_arguments(call)?;
            let rgb = parse_color(&a.color).ok_or_else(|| invalid("color must be #rrggbb"))?;
            Ok(Action::SetColor { rgb })
        }
        "greet" => {
            let a: GreetArgs = parse_arguments(call)?;
            let chars = a.name.chars().count();
            if a.name.trim().is_empty() || chars > MAX_NAME_CHARS {
                return Err(invalid("name must be 1 to 64 characters"));
            }
            Ok(Action::Greet { name: a.name })
        }
        other => Err(DriverError::unknown_action(other)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use devicerail_host_plugin_api::protocol::{CallId, ErrorCode};

    /// Parses a call on a 10 × 20 screen.
    fn parse_on_small_screen(name: &str, arguments: Value) -> DriverResult<Action> {
        parse(&ActionCall::new(CallId::new_v4(), name, arguments), 10, 20)
    }

    fn code(r: DriverResult<Action>) -> String {
        r.map_or_else(|e| e.code.into(), |a| format!("ok {a:?}"))
    }

    #[test]
    fn valid_calls_parse() {
        assert_eq!(
            parse_on_small_screen("tap", json!({ "x": 9, "y": 19 })),
            Ok(Action::Tap { x: 9, y: 19 })
        );
        assert_eq!(
            parse_on_small_screen("setColor", json!({ "color": "#FF8000" })),
            Ok(Action::SetColor { rgb: [255, 128, 0] })
        );
        assert_eq!(
            parse_on_small_screen("greet", json!({ "name": "Ada" })),
            Ok(Action::Greet { name: "Ada".into() })
        );
    }

    #[test]
    fn bad_arguments_are_invalid_arguments() {
        let invalid = ErrorCode::InvalidArguments.as_str();
        for (name, args) in [
            ("tap", json!({ "x": 10, "y": 0 })),
            ("tap", json!({ "x": -1, "y": 0 })),
            ("tap", json!({ "x": 1 })),
            ("tap", json!({ "x": 1, "y": 1, "z": 1 })),
            ("setColor", json!({ "color": "red" })),
            ("setColor", json!({ "color": "#12345g" })),
            ("greet", json!({ "name": "  " })),
            ("greet", json!({ "name": "x".repeat(65) })),
            ("greet", json!("not an object")),
        ] {
            let r = parse_on_small_screen(name, args.clone());
            assert_eq!(code(r), invalid, "{name} {args}");
        }
        assert_eq!(
            code(parse_on_small_screen("fly", json!({}))),
            ErrorCode::UnknownAction.as_str()
        );
    }

    #[test]
    fn colours_round_trip() {
        assert_eq!(parse_color("#0a0B0c"), Some([10, 11, 12]));
        assert_eq!(format_color([10, 11, 12]), "#0a0b0c");
        assert_eq!(parse_color("#ééé"), None);
    }
}
