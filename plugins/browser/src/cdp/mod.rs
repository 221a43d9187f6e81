//! A small Chrome DevTools Protocol client: the WebSocket transport
//! ([`client`]), sessions ([`session`]) and typed wrappers for the few
//! domains the driver uses. No third-party CDP crate: the wire format is
//! plain JSON and only a handful of methods are needed.

pub mod accessibility;
pub mod client;
pub mod dom;
pub mod emulation;
pub mod error;
pub mod input;
pub mod page;
pub mod runtime;
pub mod session;
pub mod target;

pub use client::{CdpClient, CdpEvent};
pub use error::CdpError;
pub use session::CdpSession;
