//! Transports: they carry frames between a peer and the `Dispatcher`
//! they are given, and bound what they buffer. Adding a transport is a new
//! module here plus one line of wiring in `serve.rs`.
//!
//! * `stdio` — NDJSON on the process's stdin/stdout (the control
//!   connection).
//! * [`unix`] — the shared host's local control socket (NDJSON, one
//!   protocol connection per socket connection).
//! * `event_socket` — the loopback WebSocket of the event stream.
//!
//! Only [`unix`] is public, for its attach preamble and its errors; a
//! transport never calls a handler directly, only the `Dispatcher`.

pub(crate) mod event_socket;
pub(crate) mod stdio;
pub mod unix;
