//! The screenshot policy: whether observations carry screenshots.

/// Whether observations carry screenshots.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Deserialize, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ScreenshotPolicy {
    /// Capture screenshots (except for protected Actions).
    Capture,
    /// Never capture; observations say `screenshotOmission: policy`.
    Omit,
}

impl ScreenshotPolicy {
    /// Every policy, in the order `--help` lists them.
    pub const ALL: [ScreenshotPolicy; 2] = [ScreenshotPolicy::Capture, ScreenshotPolicy::Omit];

    /// The policy's name on the command line, in the environment and in the
    /// configuration file.
    pub fn as_str(self) -> &'static str {
        match self {
            ScreenshotPolicy::Capture => "capture",
            ScreenshotPolicy::Omit => "omit",
        }
    }
}

impl std::str::FromStr for ScreenshotPolicy {
    type Err = UnknownPolicy;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::ALL
            .into_iter()
            .find(|p| p.as_str() == s)
            .ok_or_else(|| UnknownPolicy(s.to_owned()))
    }
}

impl std::fmt::Display for ScreenshotPolicy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A screenshot policy name that is neither `capture` nor `omit`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("must be capture or omit, not {0:?}")]
pub struct UnknownPolicy(pub String);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for p in ScreenshotPolicy::ALL {
            assert_eq!(p.as_str().parse::<ScreenshotPolicy>(), Ok(p));
        }
        assert!("Capture".parse::<ScreenshotPolicy>().is_err());
    }
}
