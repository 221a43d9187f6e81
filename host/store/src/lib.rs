//! # devicerail-host-store
//!
//! Everything the host keeps on disk about what happened: the durable,
//! append-only event log ([`event_store`], SQLite in WAL mode with group
//! commits), the content-addressed Evidence blobs ([`evidence`]), the
//! packed form of UI snapshots ([`snapshot_codec`]), owner-only atomic
//! files for tools that write outside it ([`private_file`]), and the lock
//! that gives one host a data directory ([`lockfile`]).
//!
//! What it must never do: lose or rewrite an acknowledged event, hand out a
//! sequence twice, store a protected Action's arguments, or know about
//! connections, plugins or the wire beyond the protocol's types. A
//! read-only view ([`event_store::ReadOnlyStore`]) serves offline tools and
//! never creates files in a data directory.

#![forbid(unsafe_code)]

pub mod event_store;
pub mod evidence;
pub mod lockfile;
pub mod private_file;
pub mod snapshot_codec;
