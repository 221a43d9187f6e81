//! `system.hello` and `system.describe`.

use std::sync::Arc;

use devicerail_host_protocol::errors::Context;
use devicerail_host_protocol::lab::LAB_FEATURE;
use devicerail_host_protocol::methods::MethodId;
use devicerail_host_protocol::negotiation::{
    available_features, negotiate_features, negotiate_version,
};
use devicerail_host_protocol::pool::POOL_FEATURE;
use devicerail_host_protocol::{
    ErrorCode, Feature, FeatureOffer, FeatureSelection, HelloParams, HelloResult,
    ProtocolSelection, RpcError, RpcParams, SERVER_PROTOCOL_RANGES, SystemDescribeResult,
    UniqueStrings,
};
use serde_json::json;

use crate::connection::{Connection, Negotiated};
use crate::handlers::call::Call;
use crate::handlers::routing;
use crate::state::Host;

/// Decodes hello params; every defect is a retryable `invalid_params`, an
/// empty protocol offer with its own reason.
fn hello_params(params: Option<RpcParams>) -> Result<HelloParams, RpcError> {
    if let Some(RpcParams::Object(map)) = &params
        && map
            .get("protocol")
            .and_then(|p| p.get("ranges"))
            .and_then(serde_json::Value::as_array)
            .is_some_and(Vec::is_empty)
    {
        return Err(ErrorCode::InvalidParams.rpc_in(
            Context::Hello,
            "the protocol offer is empty",
            json!({ "reason": "emptyProtocolOffer" }),
        ));
    }
    crate::params::decode(MethodId::SystemHello.spec(), params)
        .map_err(|e| ErrorCode::InvalidParams.rpc_in(Context::Hello, e.message, e.data.details))
}

/// Negotiates version and features; on success the connection is Ready.
/// Every failure leaves it awaiting a new hello.
pub(crate) fn hello(
    host: &Arc<Host>,
    conn: &Arc<Connection>,
    params: Option<RpcParams>,
) -> Result<HelloResult, RpcError> {
    let params = hello_params(params)?;
    let server = SERVER_PROTOCOL_RANGES;
    let version = negotiate_version(&params.protocol.ranges, server)
        .map_err(|e| e.to_rpc_error(&params.protocol.ranges, server))?;
    let transport_features = host.config.stdio_features;
    let (offer, pool, lab) = without_extensions(&params.features);
    // The pool extension is the pool manager's alone: an ordinary client
    // that requires it is refused, one that merely offers it goes without.
    if pool && !conn.pool_manager && params.features.required.contains(POOL_FEATURE) {
        return Err(ErrorCode::RequiredFeatureUnsupported.rpc(
            format!(
                "{POOL_FEATURE} is served only to the host's pool manager (a connection presenting the host's pool key)"
            ),
            json!({
                "unsupportedRequired": [POOL_FEATURE],
                "available": available_features(transport_features, version).names(),
            }),
        ));
    }
    let pool = pool && conn.pool_manager;
    let features = negotiate_features(&offer, transport_features, version)
        .map_err(|e| e.to_rpc_error(available_features(transport_features, version)))?;
    Ok(complete(conn, host, params, version, features, pool, lab))
}

/// The offer without the host's extensions, and whether each was offered
/// (required or optional): the pool's and the lab's. The protocol's
/// negotiation only knows the protocol's features.
fn without_extensions(offer: &FeatureOffer) -> (FeatureOffer, bool, bool) {
    let ours = |f: &str| f == POOL_FEATURE || f == LAB_FEATURE;
    let keep = |list: &UniqueStrings| -> UniqueStrings {
        list.iter()
            .filter(|f| !ours(f))
            .map(str::to_owned)
            .collect()
    };
    let offered = |name: &str| offer.required.contains(name) || offer.optional.contains(name);
    (
        FeatureOffer {
            required: keep(&offer.required),
            optional: keep(&offer.optional),
        },
        offered(POOL_FEATURE),
        offered(LAB_FEATURE),
    )
}

/// `system.hello` on an event-stream socket: versions 1.3–1.5 only, and
/// the offer must name `events.stream.v1` (the only feature there).
pub(crate) fn hello_stream(
    host: &Arc<Host>,
    conn: &Arc<Connection>,
    params: Option<RpcParams>,
) -> Result<HelloResult, RpcError> {
    let params = hello_params(params)?;
    let server = crate::stream_gate::STREAM_PROTOCOL_RANGES;
    let version = negotiate_version(&params.protocol.ranges, server)
        .map_err(|e| e.to_stream_rpc_error(&params.protocol.ranges, server))?;
    let stream = Feature::EventsStream.name();
    let offered = params.features.required.iter().any(|f| f == stream)
        || params.features.optional.iter().any(|f| f == stream);
    if !offered {
        return Err(ErrorCode::RequiredFeatureUnsupported.rpc_in(
            Context::EventStream,
            "the event stream needs events.stream.v1 in the feature offer",
            json!({ "requiredFeature": stream }),
        ));
    }
    let features = negotiate_features(
        &params.features,
        devicerail_host_protocol::FeatureSet::web_socket(),
        version,
    )
    .map_err(|e| e.to_stream_rpc_error())?;
    Ok(complete(
        conn, host, params, version, features, false, false,
    ))
}

/// Records a successful negotiation on `conn`.
pub(crate) fn complete(
    conn: &Arc<Connection>,
    host: &Host,
    params: HelloParams,
    version: devicerail_host_protocol::ProtocolVersion,
    features: devicerail_host_protocol::FeatureSet,
    pool: bool,
    lab: bool,
) -> HelloResult {
    let enabled = if pool || lab {
        let mut names: Vec<String> = features.iter().map(|f| f.name().to_owned()).collect();
        if pool {
            names.push(POOL_FEATURE.to_owned());
        }
        if lab {
            names.push(LAB_FEATURE.to_owned());
        }
        names.sort();
        names.into_iter().collect()
    } else {
        features.names()
    };
    let result = HelloResult {
        connection_id: conn.id,
        protocol: ProtocolSelection { selected: version },
        server: host.config.server.clone(),
        transport: conn.transport.clone(),
        features: FeatureSelection { enabled },
    };
    tracing::info!(
        connection = %conn.id,
        transport = %conn.transport.kind,
        client = %params.client.name,
        client_version = %params.client.version,
        protocol = %version,
        features = ?features,
        pool,
        lab,
        "handshake completed"
    );
    conn.set_ready(Negotiated {
        version,
        features,
        client: params.client,
        hello: result.clone(),
        pool,
        lab,
    });
    result
}

/// `system.describe`: the negotiated connection and its routing/session.
pub(crate) fn describe(call: &Call) -> SystemDescribeResult {
    SystemDescribeResult {
        connection: call.neg.hello.clone(),
        client: call.neg.client.clone(),
        device_id: routing::current_device(&call.host, &call.conn),
        active_session_id: call.conn.session().map(|s| s.id),
    }
}
