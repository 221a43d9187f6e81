//! Who may open the console: a person holding a one-time capability
//! token (the URL `devicerail console` prints, or an invite a viewer
//! made), exchanged at first use for a viewer cookie (`HttpOnly`,
//! `SameSite=Strict`). And from where: only a loopback host name (a DNS
//! rebinding page names its own) and, for the WebSocket, only the page's
//! own origin.
//!
//! Only digests of tokens and cookies are kept; comparisons go through
//! them. It must never log a token or a cookie.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use base64::Engine as _;
use sha2::{Digest, Sha256};

/// How long an invite stays usable.
pub const INVITE_LIFETIME: Duration = Duration::from_secs(15 * 60);
/// The viewer cookie's name.
pub const COOKIE: &str = "devicerail_console";

/// A viewer: one person's browser, known by its cookie.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Viewer {
    /// Short id (`v1`, `v2`…).
    pub id: String,
    /// What the page shows (`viewer 1`…).
    pub name: String,
}

type Digest32 = [u8; 32];

fn digest(secret: &str) -> Digest32 {
    Sha256::digest(secret.as_bytes()).into()
}

/// 32 random bytes, URL-safe base64.
fn fresh_secret() -> std::io::Result<String> {
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes).map_err(|e| std::io::Error::other(e.to_string()))?;
    Ok(base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes))
}

#[derive(Default)]
struct Book {
    /// Unused one-time tokens and when they stop working (`None`: the
    /// first, printed token, which lasts until it is used).
    invites: HashMap<Digest32, Option<Instant>>,
    viewers: HashMap<Digest32, Viewer>,
    next_viewer: u32,
}

/// Tokens and viewers.
#[derive(Default)]
pub struct Gate {
    book: Mutex<Book>,
}

impl Gate {
    fn book(&self) -> std::sync::MutexGuard<'_, Book> {
        self.book.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// A new one-time token, usable for `lifetime` (`None`: until used).
    pub fn invite(&self, lifetime: Option<Duration>) -> std::io::Result<String> {
        let token = fresh_secret()?;
        let mut book = self.book();
        let now = Instant::now();
        book.invites
            .retain(|_, until| until.is_none_or(|u| u > now));
        book.invites
            .insert(digest(&token), lifetime.map(|l| now + l));
        Ok(token)
    }

    /// Uses `token` up: a new viewer and its cookie, or `None` when the
    /// token is unknown, used or expired.
    pub fn redeem(&self, token: &str) -> std::io::Result<Option<(Viewer, String)>> {
        let mut book = self.book();
        let Some(until) = book.invites.remove(&digest(token)) else {
            return Ok(None);
        };
        if until.is_some_and(|u| u <= Instant::now()) {
            return Ok(None);
        }
        let cookie = fresh_secret()?;
        book.next_viewer += 1;
        let n = book.next_viewer;
        let viewer = Viewer {
            id: format!("v{n}"),
            name: format!("viewer {n}"),
        };
        book.viewers.insert(digest(&cookie), viewer.clone());
        Ok(Some((viewer, cookie)))
    }

    /// The viewer a request's `Cookie` header names, if any.
    pub fn viewer(&self, cookie_header: Option<&str>) -> Option<Viewer> {
        let value = cookie_header?
            .split(';')
            .filter_map(|c| c.trim().split_once('='))
            .find(|(name, _)| *name == COOKIE)?
            .1;
        self.book().viewers.get(&digest(value)).cloned()
    }
}

/// The `Set-Cookie` value for a viewer's cookie.
pub fn set_cookie(cookie: &str) -> String {
    format!("{COOKIE}={cookie}; HttpOnly; SameSite=Strict; Path=/")
}

/// Whether `host` (a `Host` header) names this machine's loopback: a page
/// served under another name (DNS rebinding) is refused.
pub fn loopback_host(host: &str) -> bool {
    let name = match host.rsplit_once(':') {
        Some((name, port)) if port.bytes().all(|b| b.is_ascii_digit()) => name,
        _ => host,
    };
    matches!(
        name.to_ascii_lowercase().as_str(),
        "localhost" | "127.0.0.1" | "[::1]"
    )
}

/// Whether a WebSocket's `Origin` is the page's own (`http://` + the
/// request's loopback `Host`): another site's page may not drive the
/// console with the viewer's cookie.
pub fn same_origin(origin: Option<&str>, host: &str) -> bool {
    origin.is_some_and(|o| loopback_host(host) && o.eq_ignore_ascii_case(&format!("http://{host}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_token_works_once_and_makes_one_viewer() {
        let gate = Gate::default();
        let token = gate.invite(None).expect("token");
        let (viewer, cookie) = gate.redeem(&token).expect("io").expect("valid");
        assert_eq!(viewer.id, "v1");
        assert!(gate.redeem(&token).expect("io").is_none(), "used up");
        assert!(gate.redeem("guess").expect("io").is_none());
        let header = format!("other=1; {COOKIE}={cookie}");
        assert_eq!(gate.viewer(Some(&header)), Some(viewer));
        assert_eq!(gate.viewer(Some(&format!("{COOKIE}=nope"))), None);
        assert_eq!(gate.viewer(None), None);
    }

    #[test]
    fn an_expired_invite_is_refused() {
        let gate = Gate::default();
        let token = gate.invite(Some(Duration::ZERO)).expect("token");
        std::thread::sleep(Duration::from_millis(2));
        assert!(gate.redeem(&token).expect("io").is_none());
    }

    #[test]
    fn only_loopback_names_and_the_pages_own_origin() {
        assert!(loopback_host("127.0.0.1:8080"));
        assert!(loopback_host("localhost:1"));
        assert!(loopback_host("[::1]:9"));
        assert!(!loopback_host("evil.example:8080"));
        assert!(!loopback_host("127.0.0.1.evil.example"));
        assert!(same_origin(Some("http://127.0.0.1:80"), "127.0.0.1:80"));
        assert!(!same_origin(Some("http://evil.example"), "127.0.0.1:80"));
        assert!(!same_origin(None, "127.0.0.1:80"));
        assert!(!same_origin(Some("http://localhost:81"), "localhost:80"));
    }
}
