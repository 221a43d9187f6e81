//! `system.hello` and `system.describe`.

use std::sync::Arc;

use devicerail_protocol::methods::{MethodId, parse_params};
use devicerail_protocol::negotiation::{negotiate_features, negotiate_version};
use devicerail_protocol::{
    ErrorCode, FeatureSelection, HelloParams, HelloResult, ProtocolSelection, RpcError, RpcParams,
    SERVER_PROTOCOL_RANGES, SystemDescribeResult,
};
use serde_json::json;

use crate::connection::{Connection, Negotiated};
use crate::dispatch::Call;
use crate::handlers::routing;
use crate::state::Host;

/// Negotiates version and features; on success the connection is Ready.
/// Every failure leaves it awaiting a new hello.
pub fn hello(
    host: &Arc<Host>,
    conn: &Arc<Connection>,
    params: Option<RpcParams>,
    has_timeout: bool,
) -> Result<HelloResult, RpcError> {
    if has_timeout {
        return Err(ErrorCode::RequestTimeoutNotSupported.rpc(
            "system.hello does not accept timeoutMs (nothing is negotiated yet)",
            json!({ "method": "system.hello" }),
        ));
    }
    let params: HelloParams = parse_params(MethodId::SystemHello.spec(), params)?;
    let server = SERVER_PROTOCOL_RANGES;
    let version = negotiate_version(&params.protocol.ranges, server)
        .map_err(|e| e.to_rpc_error(&params.protocol.ranges, server))?;
    let transport_features = if conn.transport.kind == "webSocket" {
        devicerail_protocol::FeatureSet::web_socket()
    } else {
        host.config.stdio_features
    };
    let features = negotiate_features(&params.features, transport_features, version)
        .map_err(|e| e.to_rpc_error(version))?;
    let result = HelloResult {
        connection_id: conn.id,
        protocol: ProtocolSelection { selected: version },
        server: host.config.server.clone(),
        transport: conn.transport.clone(),
        features: FeatureSelection {
            enabled: features.names(),
        },
    };
    tracing::info!(
        client = %params.client.name,
        client_version = %params.client.version,
        protocol = %version,
        features = ?features,
        "handshake completed"
    );
    conn.set_ready(Negotiated {
        version,
        features,
        client: params.client,
        hello: result.clone(),
    });
    Ok(result)
}

/// `system.describe`: the negotiated connection and its routing/session.
pub fn describe(call: &Call) -> SystemDescribeResult {
    SystemDescribeResult {
        connection: call.neg.hello.clone(),
        client: call.neg.client.clone(),
        device_id: routing::current_device(&call.host, &call.conn),
        active_session_id: call.conn.session().map(|s| s.id),
    }
}
