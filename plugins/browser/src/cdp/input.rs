//! `Input` domain: synthesized mouse, wheel and keyboard input. All
//! coordinates here are CSS pixels of the viewport.

use serde_json::json;

use super::error::CdpError;
use super::session::CdpSession;

/// One key as `Input.dispatchKeyEvent` wants it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct KeyStroke {
    pub(crate) key: String,
    pub(crate) code: String,
    pub(crate) key_code: u32,
    /// Text the key produces (`None` for non-printing keys).
    pub(crate) text: Option<String>,
}

impl CdpSession {
    /// Move, press and release the left button at (`x`, `y`).
    ///
    /// The three events are sent at once and their answers awaited
    /// together: a request is written when its future is first polled (in
    /// the order given: `biased`), and Chromium handles one target's input in the
    /// order it arrives, so the page sees move, press, release as before
    /// at the cost of one round trip instead of three.
    pub(crate) async fn click(&self, x: f64, y: f64) -> Result<(), CdpError> {
        let button = |kind: &str| json!({ "type": kind, "x": x, "y": y, "button": "left", "buttons": 1, "clickCount": 1 });
        tokio::try_join!(
            biased;
            self.run(
                "Input.dispatchMouseEvent",
                json!({ "type": "mouseMoved", "x": x, "y": y, "button": "none" }),
            ),
            self.run("Input.dispatchMouseEvent", button("mousePressed")),
            self.run("Input.dispatchMouseEvent", button("mouseReleased")),
        )?;
        Ok(())
    }

    /// A wheel event at (`x`, `y`).
    pub(crate) async fn wheel(
        &self,
        x: f64,
        y: f64,
        delta_x: f64,
        delta_y: f64,
    ) -> Result<(), CdpError> {
        self.run(
            "Input.dispatchMouseEvent",
            json!({ "type": "mouseWheel", "x": x, "y": y, "deltaX": delta_x, "deltaY": delta_y }),
        )
        .await
    }

    /// Key down (with text for printing keys) and key up.
    pub(crate) async fn press_key(&self, stroke: &KeyStroke) -> Result<(), CdpError> {
        let mut down = json!({
            "type": if stroke.text.is_some() { "keyDown" } else { "rawKeyDown" },
            "key": stroke.key,
            "code": stroke.code,
            "windowsVirtualKeyCode": stroke.key_code,
            "nativeVirtualKeyCode": stroke.key_code,
        });
        if let Some(text) = &stroke.text {
            down["text"] = json!(text);
            down["unmodifiedText"] = json!(text);
        }
        self.run("Input.dispatchKeyEvent", down).await?;
        self.run(
            "Input.dispatchKeyEvent",
            json!({
                "type": "keyUp",
                "key": stroke.key,
                "code": stroke.code,
                "windowsVirtualKeyCode": stroke.key_code,
                "nativeVirtualKeyCode": stroke.key_code,
            }),
        )
        .await
    }

    /// Commits `text` to the focused element as one input.
    pub(crate) async fn insert_text(&self, text: &str) -> Result<(), CdpError> {
        self.run("Input.insertText", json!({ "text": text })).await
    }
}
