//! A small Chrome DevTools Protocol client: the WebSocket transport
//! ([`CdpClient`]), sessions ([`CdpSession`]) and typed wrappers for the few
//! domains the driver uses. No third-party CDP crate: the wire format is
//! plain JSON and only a handful of methods are needed.
//!
//! What it must never do: log request parameters or answers (they may carry
//! protected text); only method names and ids are logged.

pub mod accessibility;
mod client;
pub mod dom;
mod emulation;
mod error;
pub(crate) mod input;
mod page;
mod runtime;
mod session;
mod target;

pub use client::{CdpClient, CdpEvent};
pub use error::CdpError;
pub use page::Navigated;
pub(crate) use runtime::On;
pub use session::CdpSession;
pub use target::TargetInfo;
