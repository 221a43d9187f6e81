//! Answering an accepted device request, once: the request's hold on its
//! Session and its plugin permit are given back first, and its id is
//! released as the answer enters the connection's output.
//!
//! On the runtime an answer waits for room in the output queue. An answer
//! known elsewhere (on the event store's writer thread, once an
//! observation's commit is durable) is sent without waiting: straight to
//! the transport when nothing is queued before it, else queued; only a
//! full queue sends it back to the runtime to wait there. It must never
//! block the thread that answers.

use std::sync::Arc;

use devicerail_host_protocol::RpcId;
use tokio::sync::OwnedSemaphorePermit;

use crate::connection::{BusyGuard, Connection};

/// The one answer an accepted request owes its client.
pub(crate) struct Answer {
    conn: Arc<Connection>,
    id: RpcId,
    busy: Option<BusyGuard>,
    permit: Option<OwnedSemaphorePermit>,
    runtime: tokio::runtime::Handle,
}

impl Answer {
    /// The answer to request `id` of `conn`, holding `busy` until sent.
    /// Must be made on the runtime (a full queue waits there).
    pub(crate) fn new(conn: Arc<Connection>, id: RpcId, busy: Option<BusyGuard>) -> Self {
        Self {
            conn,
            id,
            busy,
            permit: None,
            runtime: tokio::runtime::Handle::current(),
        }
    }

    /// Keeps the plugin's permit until the answer is sent.
    pub(crate) fn hold(&mut self, permit: OwnedSemaphorePermit) {
        self.permit = Some(permit);
    }

    /// The request whose answer this is.
    pub(crate) fn id(&self) -> &RpcId {
        &self.id
    }

    /// Gives back what the request held and marks it complete (a
    /// cancellation now finds nothing to cancel).
    fn settle(&mut self) {
        self.permit = None;
        self.busy = None;
        self.conn.inflight.complete(&self.id);
    }

    /// Sends `frame`, waiting for room in the output queue.
    pub(crate) async fn send(mut self, frame: Vec<u8>) {
        self.settle();
        self.conn.send_response(&self.id, frame).await;
    }

    /// Sends `frame` from any thread without waiting: straight to the
    /// transport when `straight` and nothing is queued before it, else
    /// queued; a full queue hands it to a task on the runtime.
    pub(crate) fn send_now(mut self, frame: Vec<u8>, straight: bool) {
        self.settle();
        if let Err(frame) = self.conn.try_send_response(&self.id, frame, straight) {
            let Self {
                conn, id, runtime, ..
            } = self;
            runtime.spawn(async move { conn.send_response(&id, frame).await });
        }
    }
}
