//! # devicerail-host-protocol
//!
//! The DeviceRail 1.5 wire contract, as Rust types: the JSON-RPC envelope,
//! every params/result/event DTO, version and feature negotiation, the
//! method table and the error catalog. Serialized forms are the
//! compatibility boundary; field names, `null`s and bounds follow the
//! published protocol exactly, and bounds are enforced by the types.
//!
//! This crate must never do I/O or depend on an async runtime: it is shared
//! by the host, every driver plugin and any Rust client. Host behaviour
//! (routing, storage, deadlines) lives in `devicerail-host`.
//!
//! The golden examples and their manifest live in the workspace-only
//! `devicerail-host-fixtures` crate, which the tests here use.

#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod action;
pub mod asset;
pub mod bounded;
pub mod control;
pub mod device;
pub mod envelope;
pub mod errors;
pub mod event;
pub mod handshake;
pub mod ids;
pub mod lab;
pub mod manual;
pub mod media;
pub mod methods;
pub mod negotiation;
pub mod observation;
pub mod pool;
pub mod session;
pub mod stream;
pub mod ui;
pub mod verdict;

pub use action::*;
pub use bounded::{
    Bounded, BoundedString, BoundedVec, DuplicateEntry, EventSequence, MAX_SAFE_INTEGER,
    NonNegativeF64, OutOfRange, PageLimit, RequestTimeoutMs, SafeU64, UniqueStrings,
};
pub use control::*;
pub use device::*;
pub use envelope::{
    EnvelopeError, EventsStreamEventNotification, EventsStreamTerminalNotification, JsonRpcVersion,
    NoParams, RpcFailure, RpcParams, RpcRequest, RpcResponse, RpcServerMessage,
    RpcServerNotification, RpcSuccess,
};
pub use errors::{ErrorCode, ErrorInfo, RpcError};
pub use event::*;
pub use handshake::*;
pub use ids::*;
pub use manual::*;
pub use media::*;
pub use methods::{
    Availability, METHODS, Method, MethodId, MethodSpec, ParamsShape, Transports, method_spec,
};
pub use negotiation::{
    Feature, FeatureError, FeatureSet, LATEST, SERVER_PROTOCOL_RANGES, VersionError,
};
pub use observation::*;
pub use session::*;
pub use stream::*;
pub use ui::*;
pub use verdict::*;

/// Largest NDJSON frame in either direction (1 MiB of JSON payload).
pub const MAX_FRAME_BYTES: usize = 1024 * 1024;
