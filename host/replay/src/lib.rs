//! # devicerail-host-replay
//!
//! `devicerail replay`: a recorded Session runs again on a device. Each
//! recorded Action is re-executed in order; one aimed at a point or at a
//! node of the recorded tree is re-aimed at the same element (found by
//! identity, `devicerail-host-agent`) and *healed* when it moved; a
//! selector is resolved again by the host; a protected Action takes its
//! secret from the environment by name. After each step the replayed
//! screen is compared with what the recording's step did: *matched*,
//! *healed* or *diverged* with the difference, each step recorded in the
//! replay's own Session (whose report shows both runs side by side, the
//! report crate's `replay` module); `devicerail export` turns the same
//! plan into a script for an official client.
//!
//! * [`plan`], [`aim`], [`compare`], [`secrets`] (naming), [`export`] —
//!   pure: they read the recording and trees they are given.
//! * [`run`] — the I/O: the host (shared, or in this process) through the
//!   official client.
//!
//! What it must never do: aim a step at an element other than the one the
//! recording hit (a lost element stops the replay), put a secret's value
//! anywhere but the one call that types it, or write to stdout (the
//! command prints; this crate returns).

#![forbid(unsafe_code)]

pub mod aim;
pub mod compare;
pub mod export;
pub mod plan;
pub mod playwright;
pub mod run;
pub mod secrets;

#[cfg(test)]
pub(crate) mod testing;
