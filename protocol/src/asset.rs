//! Evidence references: [`AssetRef`], how an Observation, a UI snapshot or
//! a Verdict names stored Evidence.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// A reference to one stored Evidence object.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct AssetRef {
    /// Stable Evidence id; `sha256:<hex>` for content-addressed Evidence.
    pub id: String,
    /// MIME type of the content, such as `image/png`.
    pub media_type: String,
    /// Where the content lives, such as
    /// `devicerail://assets/sha256/<hex>`.
    pub uri: String,
    /// Lower-case hex SHA-256 of the content, when content-addressed.
    #[serde(default)]
    pub sha256: Option<String>,
}

impl AssetRef {
    /// The canonical reference of content-addressed Evidence.
    pub fn content_addressed(sha256_hex: &str, media_type: &str) -> Self {
        Self {
            id: format!("sha256:{sha256_hex}"),
            media_type: media_type.to_owned(),
            uri: format!("devicerail://assets/sha256/{sha256_hex}"),
            sha256: Some(sha256_hex.to_owned()),
        }
    }
}
