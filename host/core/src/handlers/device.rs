//! `device.connect`, `device.disconnect`, `device.capabilities` and
//! `device.observe` on an accepted request. (`device.execute` is
//! [`super::execute`]; acceptance is dispatch's.)

use devicerail_host_plugin_api::ObserveRequest;
use devicerail_host_protocol::{
    ActionDefinition, DeviceDisconnectResult, DeviceInfo, Feature, Observation, ObservationId,
    RpcError, TestEventPayload,
};

use crate::connection::Connection;
use crate::handlers::answer::Answer;
use crate::handlers::request::{
    Accepted, call_driver, capabilities, interrupt_error, observe_device, require_connected, shot,
    visible,
};
use crate::handlers::{session_required, store_error};
use crate::leases::Acquired;
use crate::recorder::{self, Shot, Tree};
use devicerail_host_engine::observation::HostObservation;
use devicerail_host_store::event_store::NewEvent;

/// `device.connect`: takes the device's lease for this connection first
/// (`device_in_use` when another holds it), gives it back if connecting
/// fails.
pub(crate) async fn connect(a: &Accepted) -> Result<DeviceInfo, RpcError> {
    let device = a.route.device.clone();
    let lease = a
        .host
        .leases
        .acquire(&device, a.conn.claimant(), Some(a.neg.client.clone()))?;
    let info = match call_driver(a, a.context(ObservationId::new_v7()), move |d, ctx| {
        d.connect(ctx, &device)
    })
    .await
    {
        Ok(info) => info,
        Err(e) => {
            if lease == Acquired::New {
                a.host.leases.release(&a.route.device, a.conn.id);
            }
            return Err(e);
        }
    };
    a.host.registry.update(&info);
    a.host.note_connected(&info.id, true);
    a.host.forget_capabilities(&info.id);
    tracing::info!(device = %info.id, plugin = %a.route.plugin, "device connected");
    Ok(info)
}

/// `device.disconnect`: only by the lease's holder (or on a free device);
/// ends the lease.
pub(crate) async fn disconnect(a: &Accepted) -> Result<DeviceDisconnectResult, RpcError> {
    a.host.leases.check(&a.route.device, a.conn.claimant())?;
    let device = a.route.device.clone();
    call_driver(a, a.context(ObservationId::new_v7()), move |d, ctx| {
        d.disconnect(ctx, &device)
    })
    .await?;
    a.host.registry.mark_disconnected(&a.route.device);
    a.host.note_connected(&a.route.device, false);
    a.host.forget_capabilities(&a.route.device);
    a.host.leases.release(&a.route.device, a.conn.id);
    tracing::info!(device = %a.route.device, "device disconnected");
    Ok(DeviceDisconnectResult { disconnected: true })
}

/// `device.capabilities`: the Actions this connection may call, from the
/// capabilities cached for the device's current connection (fetched from
/// the driver once per connection, on first use).
pub(crate) async fn capabilities_method(a: &Accepted) -> Result<Vec<ActionDefinition>, RpcError> {
    let caps = capabilities(a).await?;
    Ok(caps
        .actions
        .iter()
        .filter(|d| visible(&a.neg, d))
        .cloned()
        .collect())
}

/// One observation of the accepted request's device, as `device.observe`
/// takes it (a screenshot as the policy says, the UI tree where the
/// connection negotiated snapshots and the driver has them), not yet
/// recorded. `media.stream.capture` takes its frames the same way.
pub(crate) struct Looked {
    pub id: ObservationId,
    pub obs: HostObservation,
    pub shot: Shot,
    pub tree: Tree,
}

/// Asks the device for one observation the way `device.observe` does.
pub(crate) async fn look(a: &Accepted) -> Result<Looked, RpcError> {
    require_connected(a)?;
    let caps = capabilities(a).await?;
    let tree = match (a.neg.has(Feature::ObservationUiSnapshot), caps.ui_tree) {
        (false, _) => Tree::NotRequested,
        (true, true) => Tree::Wanted,
        (true, false) => {
            Tree::Omitted(devicerail_host_protocol::UiSnapshotOmissionReason::DriverUnsupported)
        }
    };
    let shot = shot(&a.host, false);
    let request = ObserveRequest {
        screenshot: shot == Shot::Wanted,
        ui_tree: tree == Tree::Wanted,
        live: None,
    };
    let id = ObservationId::new_v7();
    let obs = observe_device(a, a.context(id), request).await?;
    Ok(Looked {
        id,
        obs,
        shot,
        tree,
    })
}

/// Turns what [`look`] saw into an Observation with its Evidence, and the
/// `observationCaptured` event that records it (not yet appended).
pub(crate) async fn record(
    a: &Accepted,
    looked: Looked,
) -> Result<(Observation, NewEvent), RpcError> {
    let Looked {
        id,
        obs,
        shot,
        tree,
    } = looked;
    let captured = recorder::capture(&a.host, id, &a.route.device, obs, shot, tree).await?;
    if let Some(why) = a.stop.fired() {
        return Err(interrupt_error(why, a.timeout_ms));
    }
    let mut event = a.event(TestEventPayload::ObservationCaptured {
        observation: captured.observation.clone(),
    });
    event.evidence = captured.evidence;
    event.blobs = captured.blobs;
    Ok((captured.observation, event))
}

/// `device.observe`. The answer is known before the event's commit, so
/// it is encoded first and sent from the event store's writer thread the
/// moment the commit is durable: the request's own thread is not woken
/// again to answer.
pub(crate) async fn observe(a: &Accepted, answer: Answer) {
    let recorded = async {
        let session = a
            .session
            .clone()
            .ok_or_else(|| session_required("device.observe"))?;
        let looked = look(a).await?;
        let (observation, event) = record(a, looked).await?;
        Ok::<_, RpcError>((session, observation, event))
    }
    .await;
    let (session, observation, event) = match recorded {
        Ok(r) => r,
        Err(e) => return answer.send(Connection::encode_error(Some(&a.id), &e)).await,
    };
    let observed = Connection::encode_result(&a.id, &observation);
    a.host
        .store
        .append_one_then(session.id, event, move |committed, commit| {
            let frame = match committed {
                Ok(_) => observed,
                Err(e) => Connection::encode_error(Some(answer.id()), &store_error(e)),
            };
            // Alone in its commit, the answer goes straight out; the
            // answers of a larger commit are queued, for the runtime's
            // writer to write together.
            answer.send_now(frame, commit.commands == 1);
        })
        .await;
}
