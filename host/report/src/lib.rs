//! # devicerail-host-report
//!
//! Offline readers of a host's store: [`bundle`] writes one Session as a
//! portable tar bundle and reads bundles back only after validating them;
//! [`report`] renders a Session, from a store or a bundle, as one
//! self-contained HTML page.
//!
//! What it must never do: write into a data directory (it reads through the
//! store's read-only view, even while a host runs), or trust a bundle before
//! it is validated.

#![forbid(unsafe_code)]

pub mod bundle;
pub mod report;
