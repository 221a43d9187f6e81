//! # devicerail-host-agent
//!
//! What an agent needs from recorded UI trees and screenshots, computed
//! without I/O so that `devicerail mcp`, the HTML report and replay read the
//! same facts the same way:
//!
//! * [`view`] — an index over one preorder UI tree and the class of each
//!   node (interactive, labelled, structure, empty).
//! * [`identity`] — what names an element across observations (its
//!   identifier, else role + label + the path of named ancestors, else its
//!   text), as a stable [`identity::ElementKey`].
//! * [`heal`] — when an identity no longer names an element: candidates
//!   scored on what the element is, every point explained; a clear winner
//!   heals, two close ones are named both.
//! * [`matching`] — which node of one tree is which node of another.
//! * [`refs`] — `e12` refs interned per element, and re-finding a ref's
//!   element in a fresh tree ([`refs::StaleRef`] when it is gone or
//!   ambiguous, never another element).
//! * [`diff`] — what changed between two trees, keyed by identity.
//! * [`pixels`] — a small perceptual digest of a screenshot and how much of
//!   it changed.
//! * [`effect`] — the verdict on an Action: what its before and after
//!   observations differ in, or `no visible change`.
//! * [`screen`] — one look at a device, typed ([`Screen`]): an
//!   Observation's identified tree, screenshot digest and idle hint, and
//!   what is on top at a point.
//! * [`settle`] — when a screen has settled (tree and pixels quiet for a
//!   window, driver idle hints honoured), as a state machine the caller
//!   feeds with samples, and the one loop that drives it over a caller's
//!   [`settle::Eyes`].
//! * [`budget`], [`render`] — outlines filled by priority within a
//!   character budget, and the text lines of outlines, diffs and effects.
//! * [`log`] — where an Action's before and after observations are in a
//!   recorded Session.
//!
//! What it must never do: perform I/O (no files, sockets, clocks or
//! threads: time comes in with the samples), depend on the host's runtime
//! crates (tokio, the MCP SDK, the store), or pick an element by position:
//! a ref that no longer names exactly one element is reported stale.

#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod budget;
pub mod diff;
pub mod effect;
pub mod heal;
pub mod identity;
pub mod log;
pub mod matching;
pub mod pixels;
pub mod refs;
pub mod render;
pub mod screen;
pub mod settle;
pub mod view;

#[cfg(test)]
pub(crate) mod testing;

pub use identity::{ElementKey, Keyed};
pub use screen::Screen;
pub use view::{Class, TreeView};
