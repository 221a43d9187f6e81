//! Caller-recorded verdicts. The host stores them; it never computes one.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::asset::AssetRef;
use crate::bounded::{BoundedString, BoundedVec};

/// The caller's judgement.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum VerdictStatus {
    /// The caller judged the run a success.
    Pass,
    /// The caller judged the run a failure.
    Fail,
    /// The caller could not decide.
    Unknown,
}

/// A verdict with the Evidence it rests on (all from the active Session).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Verdict {
    /// The caller's judgement; the host never changes it.
    pub status: VerdictStatus,
    /// Free-text explanation (1 to 16,384 characters).
    pub summary: BoundedString<1, 16384>,
    /// Evidence the verdict cites (at most 64), each reachable from the
    /// active Session; absent means none.
    #[serde(default)]
    pub evidence: BoundedVec<AssetRef, 0, 64>,
}

/// Parameters of `verdict.record`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct VerdictRecordParams {
    /// The verdict to store, as given.
    pub verdict: Verdict,
}
