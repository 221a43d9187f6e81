//! Fresh reservation tokens: 32 random bytes from the operating system,
//! base64url without padding (43 characters). A token is a secret: it is
//! handed to the host (to reserve), to the pod's environment (to attach)
//! and to the state file (to survive a restart), and nowhere else.

use base64::Engine;
use devicerail_host_protocol::pool::LeaseToken;

/// Why no token could be made.
#[derive(Debug, thiserror::Error)]
#[error("the operating system gave no random bytes: {0}")]
pub struct TokenError(getrandom::Error);

/// A new random token.
pub fn fresh() -> Result<LeaseToken, TokenError> {
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes).map_err(TokenError)?;
    let text = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes);
    // 43 characters of the URL-safe alphabet: always a valid token.
    LeaseToken::new(text).map_err(|_| TokenError(getrandom::Error::UNEXPECTED))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_are_fresh_and_valid() {
        let a = fresh().expect("token");
        let b = fresh().expect("token");
        assert_eq!(a.expose().len(), 43);
        assert_ne!(a, b);
    }
}
