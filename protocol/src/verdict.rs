//! Caller-recorded verdicts. The host stores them; it never computes one.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::bounded::{BoundedString, BoundedVec};
use crate::event::TestEvent;
use crate::observation::AssetRef;

/// The caller's judgement.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum VerdictStatus {
    Pass,
    Fail,
    Unknown,
}

/// A verdict with the Evidence it rests on (all from the active Session).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Verdict {
    pub status: VerdictStatus,
    pub summary: BoundedString<1, 16384>,
    #[serde(default)]
    pub evidence: BoundedVec<AssetRef, 0, 64>,
}

/// Parameters of `verdict.record`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct VerdictRecordParams {
    pub verdict: Verdict,
}

/// Result of `verdict.record`: the durable event.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct VerdictRecordResult {
    pub event: TestEvent,
}
