//! The MCP server itself: the `rmcp` handler that lists the tools and
//! routes each call to its module, plus the `devices` and `session`
//! tools. Failures of a call (bad arguments, a leased device, a stale ref)
//! are tool errors (`isError`), which the agent reads and can act on; only
//! an unknown tool is a protocol error.
//!
//! It never writes to stdout itself (rmcp owns the protocol stream) and
//! never logs tool arguments.

use std::path::PathBuf;
use std::sync::Arc;

use devicerail_host_link::methods::DevicesList;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
    ListToolsResult, PaginatedRequestParams, ServerCapabilities, ServerConfig,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler};
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

use super::backend::{Backend, call0};
use super::sessions::usable;
use super::state::{State, ToolError};
use super::tools::{self, DevicesArgs, SessionArgs, SessionOp};
use super::{act, observe};

/// The `rmcp` handler.
#[derive(Clone)]
pub(crate) struct McpServer {
    state: Arc<State>,
}

impl McpServer {
    /// A server over `backend`, reading Evidence from `data_dir`;
    /// `no_devices` is what `devices` answers when there is none.
    pub(crate) fn new(backend: Backend, data_dir: PathBuf, no_devices: String) -> Self {
        let mut state = State::new(backend, data_dir);
        state.no_devices = no_devices;
        Self {
            state: Arc::new(state),
        }
    }

    /// Closes every connection (the host ends open Sessions as for any
    /// client that goes away) and stops an in-process host.
    pub(crate) async fn close(self) {
        for (_, slot) in self.state.slots.all() {
            slot.lock().await.close().await;
        }
        if let Some(c) = self.state.lobby.lock().await.take() {
            let _ = c.close().await;
        }
        self.state.backend.shutdown().await;
    }

    async fn dispatch(&self, name: &str, args: Value) -> Result<CallToolResult, ToolError> {
        let state = &self.state;
        match name {
            tools::DEVICES => {
                let _: DevicesArgs = parse(args)?;
                devices(state).await
            }
            tools::OBSERVE => observe::observe(state, parse(args)?).await,
            tools::ACT => act::act(state, parse(args)?).await,
            tools::WAIT_FOR => act::wait_for(state, parse(args)?).await,
            tools::SESSION => session(state, parse(args)?).await,
            _ => Err(ToolError::Args(format!("unknown tool {name}"))),
        }
    }
}

fn parse<T: DeserializeOwned>(args: Value) -> Result<T, ToolError> {
    let args = if args.is_null() { json!({}) } else { args };
    serde_json::from_value(args).map_err(|e| ToolError::Args(e.to_string()))
}

async fn devices(state: &State) -> Result<CallToolResult, ToolError> {
    let listed = {
        let mut lobby = state.lobby.lock().await;
        if lobby.as_ref().is_some_and(|c| !usable(c)) {
            *lobby = None;
        }
        if lobby.is_none() {
            *lobby = Some(super::backend::connect(&state.backend, &state.leases).await?);
        }
        let Some(client) = lobby.as_ref() else {
            return Err(ToolError::Args("no connection".into()));
        };
        match call0::<DevicesList>(client, Some(30_000)).await {
            Ok(v) => v,
            Err(e) => {
                // A broken lobby is replaced on the next call.
                if let Some(c) = lobby.take() {
                    let _ = c.close().await;
                }
                return Err(e.into());
            }
        }
    };
    let leases = state
        .leases
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .clone();
    let mut out = Vec::new();
    let mut lines = Vec::new();
    for d in listed["devices"].as_array().into_iter().flatten() {
        let id = d["id"].as_str().unwrap_or_default().to_owned();
        let slot = state.slots.get(&id);
        let (mine, session) = match slot.try_lock() {
            Ok(s) => (s.holds(), s.session().map(str::to_owned)),
            // Busy with a call of this server: it holds the device.
            Err(_) => (true, None),
        };
        let holder = if mine {
            Some("thisServer")
        } else if leases.get(&id).is_some_and(Option::is_some) {
            Some("anotherClient")
        } else {
            None
        };
        let platform = d["platform"]["kind"]
            .as_str()
            .or(d["platform"].as_str())
            .unwrap_or("other")
            .to_owned();
        let name = d["name"].as_str().unwrap_or_default().to_owned();
        let state_name = if d["connected"].as_bool().unwrap_or(false) {
            "connected"
        } else {
            "available"
        };
        lines.push(format!(
            "{id} ({platform}) {name:?}: {state_name}{}",
            match holder {
                Some("thisServer") => ", held by this server",
                Some(_) => ", leased by another client",
                None => "",
            }
        ));
        out.push(json!({
            "id": id,
            "platform": platform,
            "name": name,
            "state": state_name,
            "leased": holder.is_some(),
            "leaseHolder": holder,
            "sessionId": session,
        }));
    }
    let structured = json!({ "devices": out, "mode": state.backend.mode() });
    let mut result = CallToolResult::structured(structured);
    result.content = vec![ContentBlock::text(if lines.is_empty() {
        state.no_devices.clone()
    } else {
        lines.join("\n")
    })];
    Ok(result)
}

fn session_result(
    state: &State,
    device: &str,
    id: Option<&str>,
    status: &str,
    verdict: Option<&str>,
) -> CallToolResult {
    let data_dir = state.data_dir.display().to_string();
    let report = id.map(|s| format!("devicerail report {s} --data-dir {data_dir}"));
    let bundle =
        id.map(|s| format!("devicerail bundle export {s} --data-dir {data_dir} --out {s}.tar"));
    let structured = json!({
        "device": device,
        "sessionId": id,
        "state": status,
        "verdict": verdict,
        "dataDir": data_dir,
        "reportCommand": report,
        "bundleCommand": bundle,
    });
    let text = match (id, &report) {
        (Some(id), Some(r)) => format!(
            "session {id} on {device}: {status}{}; recorded in {data_dir}; report: {r}",
            verdict
                .map(|v| format!(" (verdict {v})"))
                .unwrap_or_default()
        ),
        _ => format!("no session on {device}; the next call on it starts one"),
    };
    let mut result = CallToolResult::structured(structured);
    result.content = vec![ContentBlock::text(text)];
    result
}

async fn session(state: &State, args: SessionArgs) -> Result<CallToolResult, ToolError> {
    let slot = state.slots.get(&args.device);
    let mut slot = slot.lock().await;
    match args.op {
        SessionOp::Start => {
            let (_, id) = slot
                .ensure(&state.backend, &state.leases, &args.device)
                .await?;
            Ok(session_result(
                state,
                &args.device,
                Some(&id),
                "active",
                None,
            ))
        }
        SessionOp::Info => Ok(match (slot.session(), &slot.ended) {
            (Some(id), _) => session_result(state, &args.device, Some(id), "active", None),
            (None, Some((id, verdict))) => {
                session_result(state, &args.device, Some(id), "ended", verdict.as_deref())
            }
            (None, None) => session_result(state, &args.device, None, "none", None),
        }),
        SessionOp::Replay => replay(state, &mut slot, &args).await,
        SessionOp::End => {
            let verdict = args.verdict.as_deref().unwrap_or("unknown");
            if !["pass", "fail", "unknown"].contains(&verdict) {
                return Err(ToolError::Args(format!("unknown verdict {verdict:?}")));
            }
            let summary = args
                .summary
                .as_deref()
                .filter(|s| !s.is_empty())
                .unwrap_or("ended by the agent without a summary");
            match slot.end(verdict, summary).await? {
                Some(id) => Ok(session_result(
                    state,
                    &args.device,
                    Some(&id),
                    "ended",
                    Some(verdict),
                )),
                None => Ok(session_result(state, &args.device, None, "none", None)),
            }
        }
    }
}

/// `session` op=replay: the device's own connection gives way (it holds
/// the lease) to one that replays `source` as a new Session, which ends
/// with the replay's verdict.
async fn replay(
    state: &State,
    slot: &mut crate::sessions::Slot,
    args: &SessionArgs,
) -> Result<CallToolResult, ToolError> {
    use devicerail_host_replay::run::{self, Options};
    let source = args
        .source
        .as_deref()
        .filter(|s| !s.trim().is_empty())
        .ok_or_else(|| {
            ToolError::Args("op=replay needs `source`: a Session id or a bundle file".into())
        })?;
    if let Some(id) = slot.session() {
        return Err(ToolError::Args(format!(
            "{} has an active Session ({id}); end it (op=end) before replaying",
            args.device
        )));
    }
    let source = run::source_of(source, &state.data_dir).ok_or_else(|| {
        ToolError::Args(format!(
            "{source:?} is neither a Session id nor a bundle file"
        ))
    })?;
    slot.close().await;
    let opts = Options {
        source,
        device: Some(args.device.clone()),
        from: None,
        to: None,
        strict: args.strict.unwrap_or(false),
        settle_max_ms: REPLAY_SETTLE_MS,
    };
    let client = crate::backend::connect(&state.backend, &state.leases).await?;
    let env = |k: &str| std::env::var(k).ok();
    let outcome = run::replay_on(&client, &opts, &env).await;
    let _ = client.close().await;
    let summary = outcome.map_err(|e| ToolError::Step {
        step: "replay",
        done: 0,
        code: None,
        message: e.to_string(),
    })?;
    let verdict = if summary.succeeded() { "pass" } else { "fail" };
    slot.ended = Some((summary.session.clone(), Some(verdict.to_owned())));
    let mut result = session_result(
        state,
        &args.device,
        Some(&summary.session),
        "ended",
        Some(verdict),
    );
    let lines: Vec<String> = summary
        .steps
        .iter()
        .map(|s| {
            format!(
                "step {} {}: {} — {}",
                s.number,
                s.action,
                s.verdict.as_str(),
                s.note
            )
        })
        .collect();
    let text = format!(
        "replayed {} on {}: {} → {verdict}{}\n{}",
        summary.replays,
        args.device,
        summary.counts(),
        summary
            .stopped
            .as_deref()
            .map(|s| format!(" (stopped: {s})"))
            .unwrap_or_default(),
        lines.join("\n")
    );
    if let Some(Value::Object(o)) = result.structured_content.as_mut() {
        o.insert("replay".into(), serde_json::to_value(&summary)?);
    }
    result.content.insert(0, ContentBlock::text(text));
    Ok(result)
}

/// How long a replayed step may wait for the screen to settle.
const REPLAY_SETTLE_MS: u32 = 3_000;

impl ServerHandler for McpServer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("devicerail", env!("CARGO_PKG_VERSION")))
            .with_instructions(
                "DeviceRail drives phones, simulators and browsers. Call `devices`, then `observe` a device: the first look is an outline of the UI tree (and a screenshot); later looks return only what changed. Refs (e12) name elements and stay the same while the element is there: pass them to `act`. Every `act` answers with its effect once the screen settled (the changes, a new screen's outline, or `⚠ no visible change`), so you rarely need to observe after acting. A ref whose element is gone or ambiguous fails with `stale_ref` and candidates; nothing is done then. Outlines are budgeted (maxChars); use `subtree` or `filter` for what they left out, `full` for the whole screen. Every call is recorded in the device's Session; end it with `session` op=end and your verdict. For passwords pass the secret's name (`secret`), never its value.",
            )
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(tools::all()))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let name = request.name.to_string();
        if !tools::all().iter().any(|t| t.name == name) {
            return Err(ErrorData::invalid_params(
                format!("unknown tool {name}"),
                None,
            ));
        }
        let args = request.arguments.map(Value::Object).unwrap_or(Value::Null);
        let started = std::time::Instant::now();
        // A cancelled call drops its DeviceRail requests, which cancels
        // them on the host (their terminal events are still recorded).
        let outcome = tokio::select! {
            r = self.dispatch(&name, args) => r,
            _ = context.ct.cancelled() => {
                tracing::info!(tool = %name, "tool call cancelled by the client");
                return Err(ErrorData::internal_error("cancelled", None));
            }
        };
        let result = match outcome {
            Ok(r) => r,
            Err(e) => {
                tracing::info!(tool = %name, code = ?e.code(), "tool call failed");
                e.into_result()
            }
        };
        tracing::debug!(tool = %name, ms = started.elapsed().as_millis() as u64, "tool call");
        Ok(result.into())
    }
}
