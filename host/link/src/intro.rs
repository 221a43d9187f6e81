//! [`Intro`]: the attach preamble a client of the control socket (or of an
//! in-process host) starts its connection with: who it is and this
//! process's id (for the host's log), and what it presents: a
//! reservation's lease token (`devicerail attach` in a pod), the pool
//! manager's key (the Kubernetes device plugin). The host's side is
//! `devicerail_host_core::transport::unix::parse_preamble`.
//!
//! The line is the only place a token or key is spelled out; `Debug`
//! never shows them.

use devicerail_host_core::pool_key::PREAMBLE_KEY;
use devicerail_host_core::transport::unix::{ATTACH_PREAMBLE, TOKEN_KEY};
use devicerail_host_protocol::pool::LeaseToken;

/// How a connection introduces itself.
#[derive(Clone)]
pub struct Intro {
    who: String,
    lease_token: Option<LeaseToken>,
    pool_key: Option<LeaseToken>,
}

impl std::fmt::Debug for Intro {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Intro")
            .field("who", &self.who)
            .field("lease_token", &self.lease_token.is_some())
            .field("pool_key", &self.pool_key.is_some())
            .finish()
    }
}

impl Intro {
    /// A connection of `who` (one word or a few: `mcp`, `replay`,
    /// `kube-device-plugin pool`), presenting nothing.
    pub fn new(who: &str) -> Self {
        Self {
            who: who.split_whitespace().collect::<Vec<_>>().join(" "),
            lease_token: None,
            pool_key: None,
        }
    }

    /// Presents a reservation's token (the device reserved for it can be
    /// taken).
    #[must_use]
    pub fn lease_token(mut self, token: Option<LeaseToken>) -> Self {
        self.lease_token = token;
        self
    }

    /// Presents the pool manager's key (the pool extension is served).
    #[must_use]
    pub fn pool_key(mut self, key: LeaseToken) -> Self {
        self.pool_key = Some(key);
        self
    }

    /// The preamble line, newline included.
    pub fn line(&self) -> String {
        let mut line = ATTACH_PREAMBLE.to_owned();
        if !self.who.is_empty() {
            line.push(' ');
            line.push_str(&self.who);
        }
        line.push_str(&format!(" pid={}", std::process::id()));
        if let Some(t) = &self.lease_token {
            line.push_str(&format!(" {TOKEN_KEY}={}", t.expose()));
        }
        if let Some(k) = &self.pool_key {
            line.push_str(&format!(" {PREAMBLE_KEY}={}", k.expose()));
        }
        line.push('\n');
        line
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use devicerail_host_core::transport::unix::parse_preamble;

    #[test]
    fn the_host_reads_what_the_line_presents_and_debug_hides_it() {
        let token = LeaseToken::new("t".repeat(43)).expect("token");
        let key = LeaseToken::new("k".repeat(64)).expect("key");
        let intro = Intro::new("kube  device-plugin")
            .lease_token(Some(token.clone()))
            .pool_key(key.clone());
        let line = intro.line();
        assert!(line.starts_with(ATTACH_PREAMBLE) && line.ends_with('\n'));
        let parsed = parse_preamble(&line.as_bytes()[ATTACH_PREAMBLE.len()..]);
        assert!(parsed.token.is_some() && parsed.pool_key.is_some());
        assert!(
            parsed.said.starts_with("kube device-plugin pid="),
            "{}",
            parsed.said
        );
        assert!(!parsed.said.contains(token.expose()) && !parsed.said.contains(key.expose()));
        let debug = format!("{intro:?}");
        assert!(!debug.contains(token.expose()) && !debug.contains(key.expose()));
        let plain = Intro::new("mcp").line();
        assert!(!plain.contains(TOKEN_KEY) && !plain.contains(PREAMBLE_KEY));
    }
}
