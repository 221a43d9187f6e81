//! Crash containment: a plugin whose isolation is `process` runs in its
//! own worker process (`devicerail plugin-worker`, the host binary
//! itself), loaded through the same stable-ABI loader, and the host calls
//! it through [`RemoteDriver`], which implements the same `Driver` trait.
//! An abort, a segfault, `exit`, a stack overflow or a hang then kills
//! only the worker: its calls fail with `driver_crashed` (retryable), its
//! devices answer `device_unavailable` until the supervisor has restarted
//! it, and other plugins never notice.
//!
//! * `frame`: the layout of one message (kind, parts and where each
//!   part's bytes are: inline, in the arena, in a sealed memory file).
//! * `channel`: sending and receiving frames on the packet socket, and
//!   the shared arena large reply parts travel through.
//! * `ring`: calls and replies through shared memory (a ring each way,
//!   with doorbells rung only when the other side sleeps).
//! * `message`: the headers and how observations cross (PNG as bytes).
//! * `link`: one live worker: writer, waiting calls, kill.
//! * `spec`: what a worker is started with, and start failures.
//! * [`environment`]: the environment a worker runs with (an allow-list,
//!   never the host's credentials).
//! * `shared`: the live worker as callers see it; one call's round trip.
//! * `remote`: the host's `Driver` for a worker.
//! * `supervisor`: spawning (the worker opens the library and reports
//!   its manifest first), reaping, reporting and restarting.
//! * `inspect`: a short-lived worker that inspects one library for the
//!   command line (manifest, devices, doctor checks).
//! * `output`: the worker's stdout/stderr, forwarded to the log.
//! * [`entry`]: what runs inside the worker process.
//!
//! Nothing here touches the host's protocol descriptors, sessions or
//! registry; this module only provides a `Driver`.

mod channel;
pub mod entry;
pub mod environment;
mod frame;
mod inspect;
pub(crate) mod link;
pub(crate) mod message;
mod output;
pub(crate) mod remote;
mod ring;
pub(crate) mod shared;
mod spec;
mod supervisor;

pub use inspect::{InspectError, Inspection};
pub use remote::{RemoteDriver, WorkerProbe};
pub use spec::{Backoff, StartError, WorkerSpec};
pub use supervisor::Opening;
