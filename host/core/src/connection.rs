//! One protocol connection: its handshake phase, negotiated context,
//! device selection, active Session and in-flight requests.

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use devicerail_host_protocol::{
    CallId, ConnectionId, DeviceId, ErrorCode, FeatureSet, HelloResult, MAX_FRAME_BYTES,
    MediaStreamId, PeerInfo, ProtocolVersion, RpcError, RpcFailure, RpcId, RpcSuccess, SessionId,
    TransportInfo,
};
use serde::Serialize;
use serde_json::json;
use tokio_util::sync::CancellationToken;

use crate::media::MediaStream;
use crate::outbox::OutputQueue;

/// What `system.hello` settled.
#[derive(Debug, Clone)]
pub(crate) struct Negotiated {
    pub version: ProtocolVersion,
    pub features: FeatureSet,
    pub client: PeerInfo,
    pub hello: HelloResult,
    /// Whether the host's device-pool extension was negotiated
    /// (`devicerail_host_protocol::pool::POOL_FEATURE`).
    pub pool: bool,
    /// Whether the host's device-lab extension was negotiated
    /// (`devicerail_host_protocol::lab::LAB_FEATURE`).
    pub lab: bool,
}

impl Negotiated {
    pub(crate) fn has(&self, f: devicerail_host_protocol::Feature) -> bool {
        self.features.contains(f)
    }
}

/// The connection state machine.
#[derive(Debug, Clone)]
pub(crate) enum Phase {
    AwaitingHello,
    Ready(Arc<Negotiated>),
}

/// What keeps a Session busy (`session_busy` reports each count).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Work {
    /// A `device.execute`.
    Action,
    /// A `device.observe`.
    Observation,
    /// A `media.stream.capture`.
    Capture,
}

/// The connection's active Session and the work still running in it.
#[derive(Debug)]
pub(crate) struct ActiveSession {
    pub id: SessionId,
    /// The device the Session was started on; its device requests route
    /// there, and the connection's selection cannot change meanwhile.
    pub device: DeviceId,
    busy: [AtomicUsize; 3],
    /// Protected or unclassified Actions running now (no media stream may
    /// start meanwhile).
    sensitive: AtomicUsize,
    /// Action ids used in this Session (`duplicate_action_call`).
    call_ids: Mutex<HashSet<CallId>>,
    /// Media streams started in this Session, ended ones included (an
    /// identical start is answered from here); forgotten with the Session.
    pub streams: Mutex<HashMap<MediaStreamId, Arc<MediaStream>>>,
}

impl ActiveSession {
    pub(crate) fn new(id: SessionId, device: DeviceId) -> Arc<Self> {
        Arc::new(Self {
            id,
            device,
            busy: Default::default(),
            sensitive: AtomicUsize::new(0),
            call_ids: Mutex::default(),
            streams: Mutex::default(),
        })
    }

    /// Marks one piece of work as in flight until the guard drops.
    pub(crate) fn enter(self: &Arc<Self>, work: Work) -> BusyGuard {
        self.busy[work as usize].fetch_add(1, Ordering::AcqRel);
        BusyGuard(self.clone(), work)
    }

    /// In-flight work of each kind: (actions, observations, captures).
    pub(crate) fn busy(&self) -> (usize, usize, usize) {
        let n = |w: Work| self.busy[w as usize].load(Ordering::Acquire);
        (n(Work::Action), n(Work::Observation), n(Work::Capture))
    }

    /// Marks a protected or unclassified Action as running until the guard
    /// drops.
    pub(crate) fn enter_sensitive(self: &Arc<Self>) -> SensitiveGuard {
        self.sensitive.fetch_add(1, Ordering::AcqRel);
        SensitiveGuard(self.clone())
    }

    pub(crate) fn sensitive_in_flight(&self) -> bool {
        self.sensitive.load(Ordering::Acquire) > 0
    }

    /// Claims an Action id; `false` if the Session already used it.
    pub(crate) fn claim_call_id(&self, id: CallId) -> bool {
        self.call_ids
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(id)
    }

    /// The stream with `id`, if this Session started it.
    pub(crate) fn stream(&self, id: &MediaStreamId) -> Option<Arc<MediaStream>> {
        self.streams
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(id)
            .cloned()
    }

    /// Whether a media stream of this Session is still open.
    pub(crate) fn has_open_stream(&self) -> bool {
        self.streams
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .values()
            .any(|s| !s.is_ended())
    }

    /// Ids of the streams still open.
    pub(crate) fn open_streams(&self) -> Vec<MediaStreamId> {
        self.streams
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .values()
            .filter(|s| !s.is_ended())
            .map(|s| s.info.id)
            .collect()
    }
}

/// Keeps a Session busy.
#[derive(Debug)]
pub(crate) struct BusyGuard(Arc<ActiveSession>, Work);

impl Drop for BusyGuard {
    fn drop(&mut self) {
        self.0.busy[self.1 as usize].fetch_sub(1, Ordering::AcqRel);
    }
}

/// Marks a sensitive Action as running.
#[derive(Debug)]
pub(crate) struct SensitiveGuard(Arc<ActiveSession>);

impl Drop for SensitiveGuard {
    fn drop(&mut self) {
        self.0.sensitive.fetch_sub(1, Ordering::AcqRel);
    }
}

/// One accepted, unfinished request.
#[derive(Debug)]
struct InflightEntry {
    cancel: CancellationToken,
    /// Set once the result is known; cancel then reports `notFound` while
    /// the id stays reserved until the response is queued.
    completed: bool,
}

/// Outcome of `request.cancel` on the table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum CancelOutcome {
    Requested,
    AlreadyRequested,
    NotFound,
}

/// Reserved request ids of one connection.
#[derive(Debug, Default)]
pub(crate) struct Inflight {
    table: Mutex<HashMap<RpcId, InflightEntry>>,
}

impl Inflight {
    fn lock(&self) -> MutexGuard<'_, HashMap<RpcId, InflightEntry>> {
        self.table.lock().unwrap_or_else(|p| p.into_inner())
    }

    pub(crate) fn contains(&self, id: &RpcId) -> bool {
        self.lock().contains_key(id)
    }

    pub(crate) fn len(&self) -> usize {
        self.lock().len()
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.lock().is_empty()
    }

    /// Reserves `id` with a fresh cancellation token (child of `parent`),
    /// unless `limit` requests are already reserved.
    pub(crate) fn reserve(
        &self,
        id: &RpcId,
        parent: &CancellationToken,
        limit: usize,
    ) -> Result<CancellationToken, RpcError> {
        let mut t = self.lock();
        if t.contains_key(id) {
            return Err(ErrorCode::RequestIdInUse.rpc(
                format!("request id {id} is reserved by an unfinished request"),
                json!({ "requestId": id }),
            ));
        }
        if t.len() >= limit {
            return Err(ErrorCode::TooManyRequests.rpc(
                format!("the connection already has {limit} requests in flight"),
                json!({ "limit": limit }),
            ));
        }
        let cancel = parent.child_token();
        t.insert(
            id.clone(),
            InflightEntry {
                cancel: cancel.clone(),
                completed: false,
            },
        );
        Ok(cancel)
    }

    pub(crate) fn complete(&self, id: &RpcId) {
        if let Some(e) = self.lock().get_mut(id) {
            e.completed = true;
        }
    }

    pub(crate) fn release(&self, id: &RpcId) {
        self.lock().remove(id);
    }

    /// Cancels every unfinished request (the connection is closing).
    pub(crate) fn cancel_all(&self) {
        for e in self.lock().values().filter(|e| !e.completed) {
            e.cancel.cancel();
        }
    }

    pub(crate) fn cancel(&self, id: &RpcId) -> CancelOutcome {
        match self.lock().get(id) {
            Some(e) if !e.completed => {
                if e.cancel.is_cancelled() {
                    CancelOutcome::AlreadyRequested
                } else {
                    e.cancel.cancel();
                    CancelOutcome::Requested
                }
            }
            _ => CancelOutcome::NotFound,
        }
    }
}

/// State of an event-stream WebSocket connection.
#[derive(Debug)]
pub(crate) struct StreamState {
    /// The Session the spent capability was bound to.
    pub binding: crate::stream_gate::Binding,
    closed: CancellationToken,
    /// Cancelled when the running pump (if any) has finished.
    pump: Mutex<Option<CancellationToken>>,
    /// The close code the socket ends with (normal unless a failure set it).
    pub close_code: Arc<std::sync::atomic::AtomicU16>,
}

/// One protocol connection.
pub(crate) struct Connection {
    pub id: ConnectionId,
    pub transport: TransportInfo,
    out: OutputQueue,
    phase: Mutex<Phase>,
    selected: Mutex<Option<DeviceId>>,
    session: Mutex<Option<Arc<ActiveSession>>>,
    pub inflight: Inflight,
    /// Set for event-stream WebSocket connections.
    pub stream: Option<StreamState>,
    /// The digest of the reservation token the client presented when it
    /// attached (`devicerail attach` with `DEVICERAIL_LEASE_TOKEN`).
    pub lease_token: Option<crate::leases::TokenDigest>,
    /// Whether the client presented the host's pool manager's key
    /// (`crate::pool_key`): only then may it negotiate the pool extension.
    pub pool_manager: bool,
}

impl Connection {
    pub(crate) fn new(transport: TransportInfo, out: OutputQueue) -> Arc<Self> {
        Self::build(transport, out, None, None, false)
    }

    /// A control connection whose client presented a reservation token.
    pub(crate) fn with_lease_token(
        transport: TransportInfo,
        out: OutputQueue,
        token: Option<crate::leases::TokenDigest>,
        pool_manager: bool,
    ) -> Arc<Self> {
        Self::build(transport, out, None, token, pool_manager)
    }

    /// Who this connection is when it asks for a device.
    pub(crate) fn claimant(&self) -> crate::leases::Claimant<'_> {
        crate::leases::Claimant {
            conn: self.id,
            token: self.lease_token.as_ref(),
        }
    }

    /// A WebSocket connection bound to the Session of a spent capability.
    pub(crate) fn new_stream(
        transport: TransportInfo,
        out: OutputQueue,
        binding: crate::stream_gate::Binding,
    ) -> Arc<Self> {
        let stream = StreamState {
            binding,
            closed: CancellationToken::new(),
            pump: Mutex::new(None),
            close_code: Arc::new(std::sync::atomic::AtomicU16::new(1000)),
        };
        Self::build(transport, out, Some(stream), None, false)
    }

    fn build(
        transport: TransportInfo,
        out: OutputQueue,
        stream: Option<StreamState>,
        lease_token: Option<crate::leases::TokenDigest>,
        pool_manager: bool,
    ) -> Arc<Self> {
        Arc::new(Self {
            id: ConnectionId::new_v4(),
            transport,
            out,
            phase: Mutex::new(Phase::AwaitingHello),
            selected: Mutex::new(None),
            session: Mutex::new(None),
            inflight: Inflight::default(),
            stream,
            lease_token,
            pool_manager,
        })
    }

    /// Marks the subscription's pump as running (until
    /// [`Connection::pump_finished`]).
    pub(crate) fn pump_started(&self) {
        if let Some(s) = &self.stream {
            *s.pump.lock().unwrap_or_else(|p| p.into_inner()) = Some(CancellationToken::new());
        }
    }

    /// Resolves when the stream connection closes (socket or pump).
    pub(crate) async fn closed(&self) {
        match &self.stream {
            Some(s) => s.closed.cancelled().await,
            None => std::future::pending().await,
        }
    }

    pub(crate) fn close_stream(&self) {
        if let Some(s) = &self.stream {
            s.closed.cancel();
        }
    }

    /// Ends a stream connection after a failed handshake or subscription:
    /// what is queued is still written, then the socket closes with `code`.
    pub(crate) async fn fail_stream(&self, code: u16) {
        if let Some(s) = &self.stream {
            s.close_code.store(code, Ordering::Release);
            // An empty frame tells the socket writer to close.
            let _ = self.out.send(Vec::new()).await;
            s.closed.cancel();
        }
    }

    /// Resolves once no pump is running.
    pub(crate) async fn pump_done(&self) {
        let token = self
            .stream
            .as_ref()
            .and_then(|s| s.pump.lock().unwrap_or_else(|p| p.into_inner()).clone());
        if let Some(t) = token {
            t.cancelled().await;
        }
    }

    pub(crate) fn pump_finished(&self) {
        if let Some(s) = &self.stream
            && let Some(t) = s.pump.lock().unwrap_or_else(|p| p.into_inner()).as_ref()
        {
            t.cancel();
        }
    }

    /// Queues a stream frame; `false` once the socket writer is gone.
    pub(crate) async fn send_stream_frame(&self, frame: Vec<u8>) -> bool {
        self.out.send(frame).await.is_ok()
    }

    pub(crate) fn phase(&self) -> Phase {
        self.phase.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    pub(crate) fn set_ready(&self, negotiated: Negotiated) {
        *self.phase.lock().unwrap_or_else(|p| p.into_inner()) = Phase::Ready(Arc::new(negotiated));
    }

    pub(crate) fn selected(&self) -> Option<DeviceId> {
        self.selected
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    pub(crate) fn select(&self, id: DeviceId) {
        *self.selected.lock().unwrap_or_else(|p| p.into_inner()) = Some(id);
    }

    pub(crate) fn session(&self) -> Option<Arc<ActiveSession>> {
        self.session
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    pub(crate) fn set_session(&self, s: Option<Arc<ActiveSession>>) {
        *self.session.lock().unwrap_or_else(|p| p.into_inner()) = s;
    }

    /// Queues a frame (waits while the output queue is full).
    pub(crate) async fn send_frame(&self, frame: Vec<u8>) {
        // The writer only stops at shutdown, after every sender is gone.
        let _ = self.out.send(frame).await;
    }

    /// Queues the response to the concurrent request `id`, releasing the
    /// id as the response enters the output queue (the protocol's rule):
    /// before the peer can read it, so an id reused right after its
    /// response is never refused.
    pub(crate) async fn send_response(&self, id: &RpcId, frame: Vec<u8>) {
        let release = || self.inflight.release(id);
        if self.out.send_then(frame, release).await.is_err() {
            self.inflight.release(id);
        }
    }

    /// Sends the response to the concurrent request `id` without waiting,
    /// from any thread (see [`OutputQueue::try_send_then`]), releasing the
    /// id as [`Connection::send_response`] does. Hands the frame back,
    /// the id still reserved, when the output queue has no room now.
    pub(crate) fn try_send_response(
        &self,
        id: &RpcId,
        frame: Vec<u8>,
        straight: bool,
    ) -> Result<(), Vec<u8>> {
        self.out
            .try_send_then(frame, straight, || self.inflight.release(id))
    }

    /// Serializes a success response; a result that cannot fit in one
    /// frame becomes `response_frame_too_large`.
    pub(crate) fn encode_result<T: Serialize>(id: &RpcId, result: &T) -> Vec<u8> {
        match serde_json::to_vec(&RpcSuccess::new(id.clone(), result)) {
            Ok(v) if v.len() <= MAX_FRAME_BYTES => v,
            Ok(v) => Self::encode_error(
                Some(id),
                &ErrorCode::ResponseFrameTooLarge.rpc(
                    format!(
                        "the result is {} bytes, over the {MAX_FRAME_BYTES}-byte frame limit",
                        v.len()
                    ),
                    json!({ "actualBytes": v.len(), "limitBytes": MAX_FRAME_BYTES }),
                ),
            ),
            Err(e) => Self::encode_error(
                Some(id),
                &ErrorCode::InternalError.rpc(
                    format!("could not serialize the result: {e}"),
                    json!({ "cause": "serialization" }),
                ),
            ),
        }
    }

    /// Serializes an error answer. Error messages and details are bounded
    /// and ids are bounded at the door (`dispatch::MAX_ECHOED_ID_BYTES`),
    /// so an error frame always fits; should one not, the answer degrades
    /// to a fixed `internal_error` with a `null` id rather than break the
    /// frame limit.
    pub(crate) fn encode_error(id: Option<&RpcId>, error: &RpcError) -> Vec<u8> {
        const FALLBACK: &[u8] = br#"{"jsonrpc":"2.0","id":null,"error":{"code":-32603,"message":"internal error","data":{"code":"internal_error","message":"internal error","retryable":false,"details":null}}}"#;
        let failure = RpcFailure::new(id.cloned(), error.clone());
        match serde_json::to_vec(&failure) {
            Ok(v) if v.len() <= MAX_FRAME_BYTES => v,
            Ok(v) => {
                tracing::error!(
                    bytes = v.len(),
                    "an error answer would exceed the frame limit"
                );
                FALLBACK.to_vec()
            }
            Err(_) => FALLBACK.to_vec(),
        }
    }

    pub(crate) async fn respond<T: Serialize>(&self, id: &RpcId, result: Result<T, RpcError>) {
        let frame = match result {
            Ok(v) => Self::encode_result(id, &v),
            Err(e) => Self::encode_error(Some(id), &e),
        };
        self.send_frame(frame).await;
    }

    pub(crate) async fn respond_error(&self, id: Option<&RpcId>, error: RpcError) {
        self.send_frame(Self::encode_error(id, &error)).await;
    }
}
