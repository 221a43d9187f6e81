//! `Emulation` domain: the viewport size and density.

use serde_json::json;

use super::error::CdpError;
use super::session::CdpSession;

impl CdpSession {
    /// Fixes the viewport to `width` x `height` CSS pixels at
    /// `device_scale_factor` device pixels per CSS pixel.
    pub async fn set_device_metrics(
        &self,
        width: u32,
        height: u32,
        device_scale_factor: f64,
    ) -> Result<(), CdpError> {
        self.run(
            "Emulation.setDeviceMetricsOverride",
            json!({
                "width": width,
                "height": height,
                "deviceScaleFactor": device_scale_factor,
                "mobile": false,
            }),
        )
        .await
    }

    /// Makes the page behave as focused even when the window is not.
    pub async fn set_focus_emulation(&self, enabled: bool) -> Result<(), CdpError> {
        self.run(
            "Emulation.setFocusEmulationEnabled",
            json!({ "enabled": enabled }),
        )
        .await
    }
}
