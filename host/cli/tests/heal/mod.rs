//! The heal-accuracy suite's pages and their server.

pub(crate) mod pages;
pub(crate) mod server;
