//! The action space and Action results.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::bounded::presence::{is_false, required_value};
use crate::bounded::{RequestTimeoutMs, SafeU64};
use crate::errors::ErrorInfo;
use crate::ids::CallId;
use crate::observation::{AssetRef, Observation};
use crate::ui::UiContextRef;

/// How an Action's arguments are treated when recorded.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum ActionProtection {
    /// Arguments and screenshots are recorded.
    #[default]
    Standard,
    /// Arguments are redacted and screenshots omitted; hidden unless the
    /// connection negotiated `action.protected.v1`.
    Protected,
}

/// One Action a device offers.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ActionDefinition {
    /// The name callers put in `ActionCall.name`; unique within the device's
    /// action space.
    pub name: String,
    /// Human-readable summary of what the Action does.
    pub description: String,
    /// JSON Schema of the `arguments` object.
    #[serde(deserialize_with = "required_value")]
    pub input_schema: serde_json::Value,
    /// Absent means `standard`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub protection: Option<ActionProtection>,
}

impl ActionDefinition {
    /// The protection, with an absent value read as `standard`.
    pub fn protection(&self) -> ActionProtection {
        self.protection.unwrap_or_default()
    }

    /// Whether the Action is `protected`.
    pub fn is_protected(&self) -> bool {
        self.protection() == ActionProtection::Protected
    }
}

/// One Action invocation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ActionCall {
    /// Caller-chosen id that correlates the call with its events.
    pub id: CallId,
    /// The Action to run, as `device.capabilities` lists it.
    pub name: String,
    /// Arguments matching the Action's `inputSchema`; absent reads as `null`.
    #[serde(default)]
    pub arguments: serde_json::Value,
}

impl ActionCall {
    /// The call `id` of Action `name` with `arguments`.
    pub fn new(id: CallId, name: impl Into<String>, arguments: serde_json::Value) -> Self {
        Self {
            id,
            name: name.into(),
            arguments,
        }
    }
}

/// An Action invocation as recorded in events. Protected and unknown
/// Actions keep only correlation fields: `arguments` is `null` and
/// `argumentsRedacted` is true.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RecordedActionCall {
    /// The call's id.
    pub id: CallId,
    /// The Action's name.
    pub name: String,
    /// The arguments as called; `null` when redacted.
    #[serde(default)]
    pub arguments: serde_json::Value,
    /// `true` when the arguments were withheld; absent means `false`.
    #[serde(default, skip_serializing_if = "is_false")]
    pub arguments_redacted: bool,
}

impl RecordedActionCall {
    /// The durable form of `call`; `redact` drops its arguments.
    pub fn of(call: &ActionCall, redact: bool) -> Self {
        Self {
            id: call.id,
            name: call.name.clone(),
            arguments: if redact {
                serde_json::Value::Null
            } else {
                call.arguments.clone()
            },
            arguments_redacted: redact,
        }
    }
}

/// Parameters of `device.execute`: the Action fields, flat, plus an
/// optional Driver-only budget.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct DeviceExecuteParams {
    /// Caller-chosen id that correlates the call with its events.
    pub id: CallId,
    /// The Action to run, as `device.capabilities` lists it.
    pub name: String,
    /// Arguments matching the Action's `inputSchema`; absent reads as `null`.
    #[serde(default)]
    pub arguments: serde_json::Value,
    /// Starts once `actionStarted` is durable; covers Driver execution only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub action_timeout_ms: Option<RequestTimeoutMs>,
}

impl DeviceExecuteParams {
    /// The Action call these params describe.
    pub fn call(&self) -> ActionCall {
        ActionCall {
            id: self.id,
            name: self.name.clone(),
            arguments: self.arguments.clone(),
        }
    }
}

/// Why a semantic Action fell back to coordinates.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum CoordinateFallbackReason {
    /// The element offers no semantic way to perform this interaction.
    SemanticInteractionUnavailable,
    /// The platform or its automation interface cannot perform this
    /// interaction semantically.
    PlatformLimitation,
}

/// How a semantic Action was carried out.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "mode", rename_all = "camelCase", deny_unknown_fields)]
pub enum ActionExecution {
    /// Through the platform's accessibility interaction.
    #[serde(rename_all = "camelCase")]
    NativeSemantic {
        /// The native context the element was resolved in.
        context: UiContextRef,
    },
    /// Through the web document (DOM) itself.
    #[serde(rename_all = "camelCase")]
    WebSemantic {
        /// The web document the element was resolved in.
        context: UiContextRef,
    },
    /// By input at the element's coordinates.
    #[serde(rename_all = "camelCase")]
    CoordinateFallback {
        /// The context the element was resolved in.
        context: UiContextRef,
        /// Why semantic interaction was not used.
        fallback_reason: CoordinateFallbackReason,
    },
}

/// The success result of one Action.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ActionResult {
    /// The `id` of the call this result answers.
    pub call_id: CallId,
    /// When the Driver started the Action, in Unix milliseconds.
    pub started_at_ms: SafeU64,
    /// When the Driver finished the Action, in Unix milliseconds.
    pub finished_at_ms: SafeU64,
    /// Action-specific output (semantic Actions use their result types).
    #[serde(deserialize_with = "required_value")]
    pub output: serde_json::Value,
    /// Observation taken before the Action, or `null`.
    #[serde(default)]
    pub before: Option<Observation>,
    /// Observation taken after the Action, or `null`.
    #[serde(default)]
    pub after: Option<Observation>,
    /// Further Evidence the Action produced; absent means none.
    #[serde(default)]
    pub evidence: Vec<AssetRef>,
    /// Set for semantic Actions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub execution: Option<ActionExecution>,
}

/// The terminal outcome of one Action, with the four cases kept distinct.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
// Wire DTO: variants are serialized in place; boxing buys nothing here.
#[allow(clippy::large_enum_variant)]
#[serde(tag = "outcome", rename_all = "camelCase", deny_unknown_fields)]
pub enum ActionOutcome {
    /// The Action completed.
    Succeeded {
        /// The Action's result.
        result: ActionResult,
    },
    /// The Action failed.
    Failed {
        /// Why it failed (a driver or host error).
        error: ErrorInfo,
    },
    /// The Action was cancelled by `request.cancel` or shutdown.
    Cancelled {
        /// The cancellation, coded `action_cancelled`.
        error: ErrorInfo,
    },
    /// The Action's time budget elapsed.
    #[serde(rename_all = "camelCase")]
    TimedOut {
        /// The timeout, coded `action_timeout`.
        error: ErrorInfo,
        /// The budget that elapsed, in milliseconds.
        timeout_ms: SafeU64,
    },
}
