//! `inputText` aimed at an element: with an optional `target` (a selector
//! or a node reference, as the semantic Actions take it) the text goes
//! into that element, resolved and checked the way the semantic Actions
//! resolve theirs, in one Action — instead of a `tapElement` to focus it
//! and then the text, two Actions, two after observations.
//!
//! A driver that can put text into a node ([`UiBackend::type_into_node`])
//! advertises the targeted form ([`definition`]) and hands calls to
//! [`execute`]; a call without `target` is left to its usual path (the
//! focused field). Drivers that do not advertise it keep refusing
//! `target` (their `inputText` arguments deny unknown fields), so text is
//! never typed into whatever has focus when an element was named.
//!
//! `inputSecret` never takes a target: a protected Action's arguments are
//! redacted in its record, so a target there would be lost to replay and
//! export, which would then type the secret wherever focus happens to be.
//! Secrets are typed after a `tapElement`.
//!
//! The text never appears in an error or a `Debug` form.

use std::fmt;

use devicerail_host_protocol::{ActionCall, ActionDefinition, ElementTarget, UiNodeRef};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::actions::{self, INPUT_TEXT, TextArgs};
use crate::context::CallContext;
use crate::driver::{ActionOutput, DriverError, DriverResult};
use crate::semantic::{self, UiBackend};

/// Targeted `inputText` / `inputSecret` arguments. `Debug` shows the
/// length only.
#[derive(Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TypeIntoArgs {
    /// The text to type.
    pub text: String,
    /// The element to type into; `None`: the focused one.
    #[serde(default)]
    pub target: Option<ElementTarget>,
}

impl fmt::Debug for TypeIntoArgs {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "TypeIntoArgs {{ {} chars, target: {:?} }}",
            self.text.chars().count(),
            self.target
        )
    }
}

impl TypeIntoArgs {
    /// Parses the arguments of `call`.
    pub fn parse(call: &ActionCall) -> DriverResult<Self> {
        actions::parse_arguments(call)
    }
}

/// What a targeted input answers: the count of characters (never the
/// text) and the element they went into.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct Typed {
    accepted: bool,
    typed_chars: usize,
    element: UiNodeRef,
}

/// `inputText` that takes an optional `target`, with text of at most
/// `max_chars` characters.
pub fn definition(max_chars: usize) -> ActionDefinition {
    let mut def = actions::input_text(
        "Type text into the focused editable element, or into `target` (focused first, the caret after its content).",
        max_chars,
    );
    if let Some(props) = def
        .input_schema
        .get_mut("properties")
        .and_then(Value::as_object_mut)
    {
        props.insert("target".into(), target_schema());
    }
    if let (Some(defs), Some(obj)) = (target_defs(), def.input_schema.as_object_mut()) {
        obj.insert("$defs".into(), defs);
    }
    def
}

/// The schema of `target`: the semantic Actions' own, described for
/// typing.
fn target_schema() -> Value {
    let mut target = semantic::tap_element_schema()
        .get("properties")
        .and_then(|p| p.get("target"))
        .cloned()
        .unwrap_or(Value::Bool(true));
    if let Some(o) = target.as_object_mut() {
        o.insert(
            "description".into(),
            Value::from("The element to type into (focused first); leave it out to type into the focused element."),
        );
    }
    target
}

fn target_defs() -> Option<Value> {
    semantic::tap_element_schema().get("$defs").cloned()
}

/// Whether `def` (an `inputText` a device advertises) takes a `target`.
pub fn takes_target(def: &ActionDefinition) -> bool {
    def.name == INPUT_TEXT
        && def
            .input_schema
            .get("properties")
            .and_then(|p| p.get("target"))
            .is_some()
}

/// Runs a targeted `inputText`: `None` when `call` is not one or names
/// no target (the driver's own path types into the focused element).
/// Text longer than `max_chars` is refused.
pub fn execute(
    backend: &dyn UiBackend,
    ctx: &CallContext,
    call: &ActionCall,
    max_chars: usize,
) -> Option<DriverResult<ActionOutput>> {
    if call.name != INPUT_TEXT {
        return None;
    }
    if !call
        .arguments
        .as_object()
        .is_some_and(|o| o.contains_key("target"))
    {
        return None;
    }
    Some(run(backend, ctx, call, max_chars))
}

fn run(
    backend: &dyn UiBackend,
    ctx: &CallContext,
    call: &ActionCall,
    max_chars: usize,
) -> DriverResult<ActionOutput> {
    let args = TypeIntoArgs::parse(call)?;
    let text = TextArgs { text: args.text };
    text.check_length(call, max_chars)?;
    let Some(target) = args.target else {
        return Err(DriverError::invalid_arguments(
            &call.name,
            "`target` is null; leave it out to type into the focused element",
        ));
    };
    let (element, exec, obs) = semantic::act(backend, ctx, &target, |node| {
        backend.type_into_node(ctx, node, &text.text)
    })?;
    let typed = Typed {
        accepted: true,
        typed_chars: text.chars(),
        element,
    };
    semantic::output(&typed, Some(exec), obs)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn call(name: &str, arguments: Value) -> ActionCall {
        serde_json::from_value(json!({
            "id": "0192f0c0-0000-7000-8000-000000000001",
            "name": name,
            "arguments": arguments
        }))
        .expect("a call")
    }

    #[test]
    fn the_targeted_form_takes_a_target_and_secrets_never_do() {
        let def = definition(100);
        assert!(takes_target(&def));
        assert!(!def.is_protected());
        assert!(!takes_target(&actions::input_text("x", 100)));
        assert!(!takes_target(&actions::input_secret("x", 100)));
        assert_eq!(
            def.input_schema["properties"]["text"]["maxLength"],
            json!(100)
        );
        assert_eq!(def.input_schema["required"], json!(["text"]));
        let target = &def.input_schema["properties"]["target"];
        assert!(target.is_object(), "{target}");
    }

    #[test]
    fn the_text_never_shows_in_debug() {
        let a =
            TypeIntoArgs::parse(&call(INPUT_TEXT, json!({ "text": "hunter2" }))).expect("parsed");
        assert!(!format!("{a:?}").contains("hunter2"));
    }

    #[test]
    fn calls_without_a_target_are_left_to_the_driver() {
        struct NoBackend;
        impl UiBackend for NoBackend {
            fn snapshot(&self, _: &CallContext) -> DriverResult<crate::driver::DriverObservation> {
                Err(DriverError::failure("not here"))
            }
            fn tap_node(
                &self,
                _: &CallContext,
                _: &devicerail_host_protocol::UiNode,
            ) -> DriverResult<semantic::Mode> {
                Err(DriverError::failure("not here"))
            }
            fn clear_node(
                &self,
                _: &CallContext,
                _: &devicerail_host_protocol::UiNode,
            ) -> DriverResult<semantic::Mode> {
                Err(DriverError::failure("not here"))
            }
            fn set_node_value(
                &self,
                _: &CallContext,
                _: &devicerail_host_protocol::UiNode,
                _: &str,
            ) -> DriverResult<semantic::Mode> {
                Err(DriverError::failure("not here"))
            }
        }
        let ctx = CallContext::new(None);
        assert!(
            execute(
                &NoBackend,
                &ctx,
                &call(INPUT_TEXT, json!({ "text": "a" })),
                10
            )
            .is_none()
        );
        let secret = json!({ "text": "a", "target": { "kind": "selector", "selector": { "identifier": "u" } } });
        assert!(execute(&NoBackend, &ctx, &call(actions::INPUT_SECRET, secret), 10).is_none());
        assert!(
            execute(
                &NoBackend,
                &ctx,
                &call("tap", json!({ "x": 1, "y": 1 })),
                10
            )
            .is_none()
        );
        let long = execute(
            &NoBackend,
            &ctx,
            &call(INPUT_TEXT, json!({ "text": "abcdef", "target": { "kind": "selector", "selector": { "identifier": "u" } } })),
            3,
        )
        .expect("handled");
        assert!(long.is_err());
    }
}
