//! Deliberately broken copies of golden fixtures, and a few valid variants.
//!
//! Each case copies one fixture and makes one edit. The generated
//! `test/broken.ts` embeds the broken copies under `// @ts-expect-error`,
//! so `tsc` fails (TS2578) the day the types stop rejecting one of them; the
//! valid variants sit beside them without the directive, so the types
//! cannot become stricter than the schemas either. The schema crate's tests
//! also validate every copy against its JSON Schema.

use std::fmt;

use serde_json::Value;

/// One edit of a fixture, at a JSON pointer.
#[derive(Debug, Clone, Copy)]
pub enum Edit {
    /// Removes the member or element at the pointer (it must exist).
    Remove(&'static str),
    /// Replaces the value at the pointer (it must exist) with this JSON.
    Set(&'static str, &'static str),
    /// Adds a new member, named by the second field, to the object at the
    /// pointer; the member must not exist yet.
    Add(&'static str, &'static str, &'static str),
}

/// One edited fixture.
#[derive(Debug, Clone, Copy)]
pub struct Case {
    /// The manifest id of the fixture that is copied.
    pub fixture: &'static str,
    /// What the edit does, in a few words.
    pub why: &'static str,
    /// The change applied to a copy of the fixture (see [`apply`]).
    pub edit: Edit,
    /// Whether the JSON Schema accepts the edited copy. True for a valid
    /// variant, and for a broken copy only where the TypeScript types are
    /// deliberately stricter than the schema (open objects typed closed).
    pub schema_accepts: bool,
}

const fn broken(fixture: &'static str, why: &'static str, edit: Edit) -> Case {
    Case {
        fixture,
        why,
        edit,
        schema_accepts: false,
    }
}

/// Copies that `tsc` must reject.
pub const BROKEN: &[Case] = &[
    broken(
        "error.info.v1",
        "drops the required member `retryable`",
        Edit::Remove("/retryable"),
    ),
    broken(
        "error.info.v1",
        "adds a member to a closed object",
        Edit::Add("", "extra", "1"),
    ),
    broken(
        "rpc.verdict-record.request.v1",
        "uses a value outside a string enum (VerdictStatus)",
        Edit::Set("/params/verdict/status", "\"passed\""),
    ),
    broken(
        "event.error.v1",
        "uses an unknown discriminant in a tagged payload",
        Edit::Set("/payload/type", "\"oops\""),
    ),
    broken(
        "event.error.v1",
        "adds another variant's member to a tagged payload",
        Edit::Add("/payload", "outcome", "\"completed\""),
    ),
    broken(
        "event.session-ended.v1",
        "ends a Session with an unknown outcome",
        Edit::Set("/payload/outcome", "\"aborted\""),
    ),
    broken(
        "rpc.device-connect.request.v1",
        "passes a member to a method that takes no params",
        Edit::Set("/params", "{\"force\":true}"),
    ),
    broken(
        "rpc.device-connect.response.v1",
        "carries both `result` and `error`",
        Edit::Add(
            "",
            "error",
            "{\"code\":-32000,\"message\":\"offline\",\"data\":{\"code\":\"device_unavailable\",\"message\":\"offline\",\"retryable\":true}}",
        ),
    ),
    broken(
        "rpc.failure.v1",
        "gives a string where an integer belongs (error code)",
        Edit::Set("/error/code", "\"-32000\""),
    ),
    broken(
        "rpc.events-list.request.v1",
        "gives a string where an integer belongs (limit)",
        Edit::Set("/params/limit", "\"2\""),
    ),
    broken(
        "handshake.system-hello.request.v1",
        "sends a `jsonrpc` other than \"2.0\"",
        Edit::Set("/jsonrpc", "\"1.0\""),
    ),
    broken(
        "handshake.system-hello.request.v1",
        "names another method in a typed request",
        Edit::Set("/method", "\"device.connect\""),
    ),
    broken(
        "device.device-info.v1",
        "names an unknown platform kind",
        Edit::Set("/platform/kind", "\"amiga\""),
    ),
    broken(
        "device.observation.v1",
        "sets a non-nullable member to null",
        Edit::Set("/id", "null"),
    ),
    broken(
        "ui.snapshot.v1",
        "gives a string for a number inside an array element",
        Edit::Set("/nodes/1/bounds/x", "\"60\""),
    ),
    broken(
        "ui.snapshot.v1",
        "gives a string where an array belongs",
        Edit::Set("/rootStableNodeIds", "\"app\""),
    ),
    Case {
        fixture: "device.device-info.v1",
        why: "adds a member to an object the JSON Schema leaves open (typed closed)",
        edit: Edit::Add("", "serial", "\"abc\""),
        schema_accepts: true,
    },
];

const fn valid(fixture: &'static str, why: &'static str, edit: Edit) -> Case {
    Case {
        fixture,
        why,
        edit,
        schema_accepts: true,
    }
}

/// Copies that `tsc` must accept: values the schemas allow that the
/// fixtures do not show.
pub const VALID: &[Case] = &[
    valid(
        "error.info.v1",
        "`details` is any JSON value, including null",
        Edit::Set("/details", "null"),
    ),
    valid(
        "action.call.v1",
        "`arguments` is any JSON value, including an array",
        Edit::Set("/arguments", "[1,\"x\",null]"),
    ),
    valid(
        "handshake.system-hello.request.v1",
        "a request id may be a string",
        Edit::Set("/id", "\"hello-1\""),
    ),
    valid(
        "rpc.device-connect.request.v1",
        "a method without params accepts `[]`",
        Edit::Set("/params", "[]"),
    ),
    valid(
        "rpc.device-connect.request.v1",
        "optional members may be left out",
        Edit::Remove("/timeoutMs"),
    ),
];

/// Why an [`Edit`] cannot be applied to a fixture.
#[derive(Debug)]
pub enum EditError {
    /// The pointer names no existing member or element.
    Missing {
        /// The JSON pointer.
        pointer: &'static str,
    },
    /// A `Set` would leave the value unchanged.
    Unchanged {
        /// The JSON pointer.
        pointer: &'static str,
        /// The JSON the value already is.
        json: &'static str,
    },
    /// An `Add` names a member that already exists.
    MemberExists {
        /// The JSON pointer of the object.
        pointer: &'static str,
        /// The member name.
        key: &'static str,
    },
    /// An `Add` points at something other than an object.
    NotAnObject {
        /// The JSON pointer.
        pointer: &'static str,
    },
    /// The pointer's last token is escaped (`~`), which edits do not
    /// support, or the pointer has no `/`.
    UnsupportedPointer {
        /// The JSON pointer.
        pointer: &'static str,
    },
    /// The JSON text of the new value does not parse.
    BadJson {
        /// The text.
        json: &'static str,
        /// The parse error.
        source: serde_json::Error,
    },
}

impl fmt::Display for EditError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Missing { pointer } => write!(f, "nothing at {pointer}"),
            Self::Unchanged { pointer, json } => write!(f, "{pointer} already is {json}"),
            Self::MemberExists { pointer, key } => write!(f, "{pointer}/{key} already exists"),
            Self::NotAnObject { pointer } => write!(f, "no object at {pointer:?}"),
            Self::UnsupportedPointer { pointer } => write!(f, "unsupported pointer {pointer:?}"),
            Self::BadJson { json, source } => write!(f, "bad JSON {json:?}: {source}"),
        }
    }
}

impl std::error::Error for EditError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Self::BadJson { source, .. } => Some(source),
            _ => None,
        }
    }
}

/// Applies `edit` to `value`.
pub fn apply(value: &mut Value, edit: Edit) -> Result<(), EditError> {
    match edit {
        Edit::Remove(pointer) => {
            let (parent, last) = split(pointer)?;
            let missing = || EditError::Missing { pointer };
            match value.pointer_mut(parent) {
                Some(Value::Object(map)) => map.remove(last).map(drop).ok_or_else(missing),
                Some(Value::Array(items)) => match last.parse::<usize>() {
                    Ok(i) if i < items.len() => {
                        items.remove(i);
                        Ok(())
                    }
                    _ => Err(missing()),
                },
                _ => Err(missing()),
            }
        }
        Edit::Set(pointer, json) => {
            let new = parse(json)?;
            let slot = value
                .pointer_mut(pointer)
                .ok_or(EditError::Missing { pointer })?;
            if *slot == new {
                return Err(EditError::Unchanged { pointer, json });
            }
            *slot = new;
            Ok(())
        }
        Edit::Add(pointer, key, json) => {
            let new = parse(json)?;
            match value.pointer_mut(pointer) {
                Some(Value::Object(map)) if !map.contains_key(key) => {
                    map.insert(key.to_owned(), new);
                    Ok(())
                }
                Some(Value::Object(_)) => Err(EditError::MemberExists { pointer, key }),
                _ => Err(EditError::NotAnObject { pointer }),
            }
        }
    }
}

fn split(pointer: &'static str) -> Result<(&'static str, &'static str), EditError> {
    match pointer.rsplit_once('/') {
        Some((parent, last)) if !last.contains('~') => Ok((parent, last)),
        _ => Err(EditError::UnsupportedPointer { pointer }),
    }
}

fn parse(json: &'static str) -> Result<Value, EditError> {
    serde_json::from_str(json).map_err(|source| EditError::BadJson { json, source })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn edits() {
        let mut v = json!({"a": {"b": [1, 2]}, "c": 1});
        assert!(apply(&mut v, Edit::Remove("/a/b/0")).is_ok());
        assert!(apply(&mut v, Edit::Set("/c", "2")).is_ok());
        assert!(apply(&mut v, Edit::Add("/a", "d", "true")).is_ok());
        assert_eq!(v, json!({"a": {"b": [2], "d": true}, "c": 2}));
        assert!(apply(&mut v, Edit::Remove("/x")).is_err());
        assert!(apply(&mut v, Edit::Set("/c", "2")).is_err(), "a no-op edit");
        assert!(apply(&mut v, Edit::Add("/a", "d", "1")).is_err());
        assert!(apply(&mut v, Edit::Add("/c", "d", "1")).is_err());
    }
}
