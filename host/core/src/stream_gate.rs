//! The event stream's shared state: the single-use capabilities that
//! `events.stream.open` mints (a 256-bit token bound to one Session and one
//! Origin policy, valid 30 s, never logged; at most
//! [`MAX_PENDING_CAPABILITIES`] unused at once), the checks an upgrade must
//! pass, and the subscriber count of each Session. The listener itself is a
//! transport, handed in at start-up ([`StreamListener`]) and bound only
//! when the first endpoint is opened.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use devicerail_host_protocol::{
    EventStreamCursor, EventStreamEndpoint, EventStreamOriginPolicy, OutOfRange, SessionId,
    StreamEpoch,
};
use tokio_tungstenite::tungstenite::handshake::server::Request;
use tokio_tungstenite::tungstenite::http::StatusCode;

use devicerail_host_store::event_store::now_ms;

/// Binds the event-stream listener (once) and says where it listens; the
/// transport that serves the sockets implements it.
pub(crate) trait StreamListener: Send + Sync {
    /// Starts listening on loopback, if not yet, and returns the address.
    fn listen(
        &self,
    ) -> std::pin::Pin<Box<dyn std::future::Future<Output = std::io::Result<SocketAddr>> + Send + '_>>;
}

/// The subprotocol a client must offer.
pub(crate) const SUBPROTOCOL: &str = "devicerail.events.v1";

/// How long an opened endpoint stays usable (default).
pub(crate) const CAPABILITY_TTL: Duration = Duration::from_secs(30);

/// Environment variable overriding [`CAPABILITY_TTL`] in milliseconds.
pub(crate) const TTL_ENV: &str = "DEVICERAIL_EVENT_STREAM_TTL_MS";

fn capability_ttl() -> Duration {
    static TTL: std::sync::OnceLock<Duration> = std::sync::OnceLock::new();
    *TTL.get_or_init(|| {
        std::env::var(TTL_ENV)
            .ok()
            .and_then(|v| v.parse::<u64>().ok())
            .filter(|ms| *ms > 0)
            .map_or(CAPABILITY_TTL, Duration::from_millis)
    })
}

/// Unused, unexpired endpoints that may exist at once.
pub(crate) const MAX_PENDING_CAPABILITIES: usize = 256;

/// Subscribers one Session may have at once.
pub(crate) const MAX_SUBSCRIBERS: usize = 128;

/// The wire versions the event stream serves (it exists from 1.3).
pub(crate) const STREAM_PROTOCOL_RANGES: &[devicerail_host_protocol::ProtocolRange] =
    &[devicerail_host_protocol::ProtocolRange::new(1, 3, 5)];

/// Why an endpoint could not be opened.
#[derive(Debug, thiserror::Error)]
pub(crate) enum OpenError {
    #[error("the host is shutting down")]
    ShuttingDown,
    #[error("this host serves no event stream")]
    NoListener,
    #[error("{0} unused endpoints are pending")]
    CapabilityLimit(usize),
    #[error("cannot listen on 127.0.0.1: {0}")]
    Bind(std::io::Error),
    #[error("no randomness for the capability: {0}")]
    Random(getrandom::Error),
    #[error("the endpoint is malformed: {0}")]
    Endpoint(OutOfRange),
}

/// One minted, not yet spent capability.
#[derive(Debug, Clone)]
struct Capability {
    session: SessionId,
    origin: EventStreamOriginPolicy,
    expires: Instant,
}

type SubscriberCounts = Arc<Mutex<HashMap<SessionId, usize>>>;

/// The stream server of one host process.
pub(crate) struct StreamGate {
    listener: OnceLock<Arc<dyn StreamListener>>,
    capabilities: Mutex<HashMap<String, Capability>>,
    subscribers: SubscriberCounts,
}

/// What the upgrade checks bound to an accepted socket.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Binding {
    pub session: SessionId,
}

/// Counts one subscriber of a Session until dropped.
#[derive(Debug)]
pub(crate) struct SubscriberGuard {
    counts: SubscriberCounts,
    session: SessionId,
}

impl Drop for SubscriberGuard {
    fn drop(&mut self) {
        let mut counts = self.counts.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(n) = counts.get_mut(&self.session) {
            *n -= 1;
            if *n == 0 {
                counts.remove(&self.session);
            }
        }
    }
}

impl Default for StreamGate {
    fn default() -> Self {
        Self {
            listener: OnceLock::new(),
            capabilities: Mutex::new(HashMap::new()),
            subscribers: Arc::default(),
        }
    }
}

fn random_token() -> Result<String, getrandom::Error> {
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes)?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

impl StreamGate {
    /// Hands in the transport that serves the sockets (once, at start).
    pub(crate) fn set_listener(&self, listener: Arc<dyn StreamListener>) {
        if self.listener.set(listener).is_err() {
            tracing::warn!("the event stream listener was set twice; the first one serves");
        }
    }

    /// Mints an endpoint for `session` (the listener binds on first use).
    pub(crate) async fn open(
        &self,
        shutting_down: bool,
        session: SessionId,
        origin: EventStreamOriginPolicy,
    ) -> Result<(EventStreamEndpoint, u64), OpenError> {
        if shutting_down {
            return Err(OpenError::ShuttingDown);
        }
        {
            let mut caps = self.capabilities.lock().unwrap_or_else(|p| p.into_inner());
            let now = Instant::now();
            caps.retain(|_, c| c.expires > now);
            if caps.len() >= MAX_PENDING_CAPABILITIES {
                return Err(OpenError::CapabilityLimit(MAX_PENDING_CAPABILITIES));
            }
        }
        let listener = self.listener.get().ok_or(OpenError::NoListener)?;
        let addr = listener.listen().await.map_err(OpenError::Bind)?;
        let token = random_token().map_err(OpenError::Random)?;
        let ttl = capability_ttl();
        let expires = Instant::now() + ttl;
        let expires_at_ms = now_ms().get() + u64::try_from(ttl.as_millis()).unwrap_or(u64::MAX / 2);
        self.capabilities
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(
                token.clone(),
                Capability {
                    session,
                    origin,
                    expires,
                },
            );
        let endpoint = EventStreamEndpoint::new(format!("ws://{addr}/v/{token}"))
            .map_err(OpenError::Endpoint)?;
        Ok((endpoint, expires_at_ms))
    }

    /// Counts a new subscriber of `session`; `None` at the limit.
    pub(crate) fn subscribe(&self, session: SessionId) -> Option<SubscriberGuard> {
        let mut counts = self.subscribers.lock().unwrap_or_else(|p| p.into_inner());
        let n = counts.entry(session).or_insert(0);
        if *n >= MAX_SUBSCRIBERS {
            return None;
        }
        *n += 1;
        Some(SubscriberGuard {
            counts: self.subscribers.clone(),
            session,
        })
    }

    /// Checks an upgrade request and spends its capability.
    pub(crate) fn admit(
        &self,
        addr: SocketAddr,
        req: &Request,
    ) -> Result<Binding, (StatusCode, &'static str)> {
        let expected_host = addr.to_string();
        let host = req.headers().get("host").and_then(|h| h.to_str().ok());
        if host != Some(expected_host.as_str()) {
            return Err((
                StatusCode::FORBIDDEN,
                "the Host header must name this loopback endpoint exactly",
            ));
        }
        let token = req.uri().path().strip_prefix("/v/").unwrap_or("");
        let offered = req
            .headers()
            .get_all("sec-websocket-protocol")
            .iter()
            .filter_map(|v| v.to_str().ok())
            .flat_map(|v| v.split(','))
            .any(|p| p.trim() == SUBPROTOCOL);
        let mut caps = self.capabilities.lock().unwrap_or_else(|p| p.into_inner());
        let Some(cap) = caps.get(token).cloned() else {
            return Err((StatusCode::FORBIDDEN, "unknown or spent stream capability"));
        };
        if cap.expires <= Instant::now() {
            caps.remove(token);
            return Err((StatusCode::FORBIDDEN, "the stream capability expired"));
        }
        let origin = req.headers().get("origin").and_then(|o| o.to_str().ok());
        let origin_ok = match (&cap.origin, origin) {
            (EventStreamOriginPolicy::Absent, None) => true,
            (EventStreamOriginPolicy::Exact { origin: want }, Some(got)) => want == got,
            _ => false,
        };
        if !origin_ok {
            return Err((
                StatusCode::FORBIDDEN,
                "the Origin does not match the stream's origin policy",
            ));
        }
        if !offered {
            return Err((
                StatusCode::FORBIDDEN,
                "the devicerail.events.v1 subprotocol is required",
            ));
        }
        // Single use: spent on the first successful upgrade.
        caps.remove(token);
        Ok(Binding {
            session: cap.session,
        })
    }
}

pub(crate) fn cursor(epoch: StreamEpoch, session: SessionId, sequence: u64) -> EventStreamCursor {
    EventStreamCursor {
        stream_epoch: epoch,
        session_id: session,
        sequence: devicerail_host_protocol::EventSequence::saturating(sequence),
    }
}
