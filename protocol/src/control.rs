//! Request control: `request.cancel`.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::ids::RpcId;

/// Parameters of `request.cancel`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RequestCancelParams {
    /// The `id` of the in-flight request to cancel; never the id of this
    /// cancel request itself.
    pub request_id: RpcId,
}

/// The outcome of one cancel request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum RequestCancelStatus {
    /// The target was in flight and is now cancelled.
    Requested,
    /// The target had already been cancelled.
    AlreadyRequested,
    /// No cancellable request has this id (finished or never existed).
    NotFound,
}

/// Result of `request.cancel`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RequestCancelResult {
    /// The target request's id, as given in the params.
    pub request_id: RpcId,
    /// What the cancel request did.
    pub status: RequestCancelStatus,
}
