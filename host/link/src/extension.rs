//! [`Extension`]: a connection for this host's own extension methods (the
//! device pool's `devicerailHost.pool.*`), which the official client
//! cannot send (its method set is closed). It is introduced like every
//! other connection ([`Reach::stream`]), says the same hello as
//! [`Reach::client`] with the extension's feature required, and maps wire
//! errors the one way every tool does ([`LinkError::Remote`]); only the
//! framing (one request, one answer, in order) is its own.
//!
//! It never logs a request's params: they may carry lease tokens.

use std::time::Duration;

use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::unix::{OwnedReadHalf, OwnedWriteHalf};

use crate::call::wire_error;
use crate::reach::hello;
use crate::{Intro, LinkError, Reach};

/// Longest answer line read (the protocol's frame limit and its newline).
const MAX_LINE: usize = devicerail_host_protocol::MAX_FRAME_BYTES + 1;

/// A connection speaking extension methods, answered in order.
pub struct Extension {
    read: BufReader<OwnedReadHalf>,
    write: OwnedWriteHalf,
    next_id: u64,
    timeout: Duration,
}

fn timed_out(what: String) -> LinkError {
    LinkError::Io(std::io::Error::new(std::io::ErrorKind::TimedOut, what))
}

impl Extension {
    /// A connection to `reach` introduced with `intro`, hello done as
    /// client `name` with `feature` required; each call bounded by
    /// `timeout`.
    pub async fn open(
        reach: &Reach,
        intro: &Intro,
        name: &str,
        feature: &str,
        timeout: Duration,
    ) -> Result<Self, LinkError> {
        let (read, write) = reach.stream(intro).await?.into_split();
        let mut conn = Self {
            read: BufReader::new(read),
            write,
            next_id: 1,
            timeout,
        };
        let mut params = serde_json::to_value(hello(name))?;
        params["features"] = json!({ "required": [feature], "optional": [] });
        let answer: Value = conn.request("system.hello", params).await?;
        let enabled = answer["features"]["enabled"]
            .as_array()
            .is_some_and(|a| a.iter().any(|f| f == feature));
        if !enabled {
            return Err(LinkError::Remote {
                method: "system.hello",
                code: "required_feature_unsupported".into(),
                message: format!("the host does not offer {feature}"),
                data: Value::Null,
            });
        }
        Ok(conn)
    }

    /// Calls `method` with `params`; its result as `R`.
    pub async fn request<R: DeserializeOwned>(
        &mut self,
        method: &'static str,
        params: impl Serialize,
    ) -> Result<R, LinkError> {
        let id = self.next_id;
        self.next_id += 1;
        let mut frame = serde_json::to_vec(&json!({
            "jsonrpc": "2.0", "id": id, "method": method, "params": params,
        }))?;
        frame.push(b'\n');
        let exchange = async {
            self.write.write_all(&frame).await?;
            let mut line = String::new();
            loop {
                line.clear();
                let n = (&mut self.read)
                    .take(MAX_LINE as u64)
                    .read_line(&mut line)
                    .await?;
                if n == 0 {
                    return Err(LinkError::Io(std::io::Error::new(
                        std::io::ErrorKind::UnexpectedEof,
                        "the host closed the connection",
                    )));
                }
                let v: Value = serde_json::from_str(&line)?;
                // Notifications (no id) are not answers.
                if v["id"] == json!(id) {
                    return Ok(v);
                }
            }
        };
        let v = tokio::time::timeout(self.timeout, exchange)
            .await
            .map_err(|_| timed_out(format!("{method} got no answer in time")))??;
        if let Some(e) = v.get("error") {
            return Err(wire_error(method, e));
        }
        Ok(serde_json::from_value(v["result"].clone())?)
    }
}
