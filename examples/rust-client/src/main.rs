//! A Rust user's program against DeviceRail Host, written with the protocol
//! authors' published client (`devicerail-client` from crates.io) and
//! nothing of this workspace: spawn `devicerail serve`, pick the mock
//! device, sign in with semantic Actions, follow the Session's event stream
//! (confirming each event), end the Session and export it page by page.
//!
//! ```text
//! devicerail-rust-client-example [PLUGINS_DIR DATA_DIR]
//! ```
//!
//! The host binary is `$DEVICERAIL_BIN`, else `devicerail` on `PATH`.
//! Without arguments the host uses its own defaults
//! (`$DEVICERAIL_PLUGINS_DIR`, `$DEVICERAIL_DATA_DIR`, else the platform
//! data directory). The plugins directory must hold the mock plugin.

#![forbid(unsafe_code)]

use std::time::Duration;

use devicerail_client::methods::{
    DeviceConnect, DeviceExecute, DeviceObserve, DeviceSelect, DevicesList, NoParams, SessionEnd,
    SessionExport, SessionStart,
};
use devicerail_client::protocol::{
    ActionCall, DeviceExecuteParams, DeviceSelectParams, ElementSelector, ElementTarget,
    EventsSubscribeParams, PeerInfo, RequestTimeoutMs, SessionEndParams, SessionExportParams,
    SessionOutcome, SetElementValueArguments, SetElementValueResult, TapElementArguments,
    TestEventPayload, WaitForElementArguments, WaitForElementCondition, WaitForElementResult,
    feature,
};
use devicerail_client::{
    CallOptions, ClientError, DeviceRailClient, EventStreamOptions, SpawnConfig, default_hello,
};
use uuid::Uuid;

type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// How long starting the host (hello included) may take; the client has no
/// deadline of its own.
const START_WAIT: Duration = Duration::from_secs(30);

#[tokio::main(flavor = "current_thread")]
async fn main() {
    if let Err(e) = run().await {
        eprintln!("error: {e}");
        std::process::exit(1);
    }
}

fn selector(identifier: &str) -> ElementTarget {
    ElementTarget::Selector {
        selector: ElementSelector {
            identifier: Some(identifier.into()),
            ..Default::default()
        },
    }
}

/// `device.execute` of a typed semantic Action, with a budget for the
/// driver (`actionTimeoutMs`) and for the whole request (`timeoutMs`).
async fn execute(
    client: &DeviceRailClient,
    call: ActionCall,
) -> Result<serde_json::Value, ClientError> {
    let name = call.name.clone();
    let params = DeviceExecuteParams {
        id: call.id,
        name: call.name,
        arguments: call.arguments,
        action_timeout_ms: RequestTimeoutMs::new(10_000),
    };
    let options = CallOptions {
        timeout_ms: RequestTimeoutMs::new(20_000),
    };
    let result = client.call::<DeviceExecute>(params, options).await?;
    let mode = result
        .execution
        .as_ref()
        .and_then(|e| serde_json::to_value(e).ok())
        .and_then(|v| v.get("mode").cloned())
        .unwrap_or_default();
    println!("executed {name} ({mode})");
    Ok(result.output)
}

async fn run() -> Result<(), BoxError> {
    let binary = std::env::var_os("DEVICERAIL_BIN").unwrap_or_else(|| "devicerail".into());
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut hello = default_hello();
    hello.client = PeerInfo {
        name: "devicerail-rust-client-example".into(),
        version: env!("CARGO_PKG_VERSION").into(),
    };
    let mut config = SpawnConfig::new(binary, hello).arg("serve");
    match args.as_slice() {
        [] => {}
        [plugins, data] => {
            config = config
                .arg("--plugins-dir")
                .arg(plugins)
                .arg("--data-dir")
                .arg(data);
        }
        _ => return Err("usage: devicerail-rust-client-example [PLUGINS_DIR DATA_DIR]".into()),
    }
    let client = tokio::time::timeout(START_WAIT, DeviceRailClient::spawn(config))
        .await
        .map_err(|_| "the host did not answer hello in time")??;
    let negotiated = client.negotiated_hello()?;
    println!(
        "connected to {} {} over protocol {}.{}",
        negotiated.server.name,
        negotiated.server.version,
        negotiated.protocol.selected.major,
        negotiated.protocol.selected.minor
    );
    let features = client.enabled_features();
    for needed in [
        feature::DEVICE_ROUTING_V1,
        feature::DEVICE_SEMANTIC_ACTIONS_V1,
        feature::EVENTS_STREAM_V1,
        feature::SESSION_EXPORT_PAGE_V1,
    ] {
        if !features.contains(needed) {
            return Err(format!("the host did not enable {needed}").into());
        }
    }
    let result = session(&client).await;
    // The host exits 0 on stdin EOF; close() reports anything else.
    let closed = client.close().await;
    result?;
    closed?;
    Ok(())
}

async fn session(client: &DeviceRailClient) -> Result<(), BoxError> {
    let none = CallOptions::default();
    let devices = client.call::<DevicesList>(NoParams, none).await?;
    let device = devices
        .devices
        .iter()
        .find(|d| d.id.0 == "mock-1")
        .ok_or("the mock device mock-1 is not served (is the mock plugin installed?)")?;
    client
        .call::<DeviceSelect>(
            DeviceSelectParams {
                device_id: device.id.clone(),
            },
            none,
        )
        .await?;
    let connected = client
        .call::<DeviceConnect>(
            NoParams,
            CallOptions {
                timeout_ms: RequestTimeoutMs::new(30_000),
            },
        )
        .await?;
    println!("device {} ({})", connected.id.0, connected.name);

    let session = client.call::<SessionStart>(NoParams, none).await?;
    println!("session {}", session.id);
    // Follow the Session from its first event.
    let mut stream = client
        .open_event_stream(
            EventsSubscribeParams {
                session_id: session.id.clone(),
                after_cursor: None,
            },
            EventStreamOptions::default(),
        )
        .await?;

    let observation = client.call::<DeviceObserve>(NoParams, none).await?;
    if let Some(ui) = &observation.ui_snapshot {
        println!("observed {} UI nodes", ui.node_count);
    }
    for (field, value) in [("username", "ada"), ("password", "correct horse")] {
        let output = execute(
            client,
            SetElementValueArguments {
                target: selector(field),
                value: value.into(),
            }
            .into_action_call(Uuid::new_v4())?,
        )
        .await?;
        let typed: SetElementValueResult = serde_json::from_value(output)?;
        println!("  {field} is node {}", typed.element.stable_node_id);
    }
    execute(
        client,
        TapElementArguments {
            target: ElementTarget::Selector {
                selector: ElementSelector {
                    role: Some("button".into()),
                    name: Some("Sign in".into()),
                    ..Default::default()
                },
            },
        }
        .into_action_call(Uuid::new_v4())?,
    )
    .await?;
    let waited: WaitForElementResult = serde_json::from_value(
        execute(
            client,
            WaitForElementArguments {
                selector: ElementSelector {
                    identifier: Some("sign-out".into()),
                    ..Default::default()
                },
                condition: WaitForElementCondition::Visible,
            }
            .into_action_call(Uuid::new_v4())?,
        )
        .await?,
    )?;
    if !waited.matched {
        return Err("signed in, but the sign-out control did not appear".into());
    }
    println!("signed in");

    let ended = client
        .call::<SessionEnd>(
            Some(SessionEndParams {
                outcome: Some(SessionOutcome::Completed),
                reason: Some("signed in".into()),
            }),
            none,
        )
        .await?;
    // The stream ends cleanly (None) right after the sessionEnded event.
    let mut streamed = 0u64;
    while let Some(item) = stream.next().await? {
        stream.confirm(&item.cursor)?;
        streamed += 1;
        let kind = serde_json::to_value(&item.event.payload)?
            .get("type")
            .cloned()
            .unwrap_or_default();
        println!("event #{} {kind}", item.cursor.sequence.get());
        if let TestEventPayload::SessionEnded { .. } = item.event.payload {
            println!("stream reached the end of the session");
        }
    }
    if streamed != ended.event_count.get() {
        return Err(format!("streamed {streamed} events of {}", ended.event_count.get()).into());
    }

    // Export the ended Session in pages.
    let mut after = None;
    let mut exported = 0;
    let mut pages = 0;
    loop {
        let page = client
            .call::<SessionExport>(
                Some(SessionExportParams {
                    session_id: Some(session.id.clone()),
                    after_sequence: after,
                    limit: Some(5),
                }),
                none,
            )
            .await?;
        pages += 1;
        exported += page.events.len();
        match page.next_after_sequence {
            Some(next) => after = Some(next),
            None => break,
        }
    }
    println!("exported {exported} events in {pages} pages");
    if exported as u64 != ended.event_count.get() {
        return Err("the export and the stream disagree".into());
    }
    Ok(())
}
