//! [`LeaseTap`]: passes a host's bytes to the official client unchanged
//! and reads who holds each device out of the `devices.list` answers that
//! cross (`lease.holder`, this host's extension, which the client's own
//! types drop).

use std::collections::HashMap;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};

use serde_json::Value;
use tokio::io::{AsyncRead, ReadBuf};

use crate::methods::DevicesList;
use crate::{Intro, LinkError, Reach, attach, call0};

/// The devices of the shared host listening on `socket`, as its
/// `devices.list` answers them through the official client, each with
/// who holds its lease (`Some("anotherConnection")`, `Some("reservation")`,
/// …; `None` when free). For `devicerail devices`.
pub async fn devices_with_leases(
    socket: &std::path::Path,
    who: &str,
) -> Result<Vec<(Value, Option<String>)>, LinkError> {
    let leases = LeaseView::default();
    let (read, write) = Reach::shared(socket)
        .stream(&Intro::new(who))
        .await?
        .into_split();
    let client = attach(LeaseTap::new(read, leases.clone()), write, who).await?;
    let answer = call0::<DevicesList>(&client, Some(30_000)).await;
    let _ = client.close().await;
    let answer = answer?;
    let leases = leases.lock().map(|m| m.clone()).unwrap_or_default();
    Ok(answer["devices"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|d| {
            let holder = d["id"]
                .as_str()
                .and_then(|id| leases.get(id).cloned().flatten());
            (d.clone(), holder)
        })
        .collect())
}

/// Lease holders last seen per device id (`None`: free).
pub type LeaseView = Arc<Mutex<HashMap<String, Option<String>>>>;

/// Longest frame the lease tap looks into; longer ones pass untouched.
const TAP_LINE_MAX: usize = 256 * 1024;

/// Passes the host's bytes to the client unchanged and reads the lease
/// holders out of `devices.list` answers.
pub struct LeaseTap<R> {
    inner: R,
    line: Vec<u8>,
    leases: LeaseView,
}

impl<R> LeaseTap<R> {
    /// Reads `inner`, recording lease holders into `leases`.
    pub fn new(inner: R, leases: LeaseView) -> Self {
        Self {
            inner,
            line: Vec::new(),
            leases,
        }
    }

    fn take_line(&mut self) {
        let line = std::mem::take(&mut self.line);
        if line.len() > TAP_LINE_MAX || !contains(&line, b"\"devices\"") {
            return;
        }
        let Ok(v) = serde_json::from_slice::<Value>(&line) else {
            return;
        };
        let Some(devices) = v["result"]["devices"].as_array() else {
            return;
        };
        let mut seen = HashMap::new();
        for d in devices {
            if let Some(id) = d["id"].as_str() {
                let holder = d["lease"]["holder"].as_str().map(str::to_owned);
                seen.insert(id.to_owned(), holder);
            }
        }
        if let Ok(mut map) = self.leases.lock() {
            *map = seen;
        }
    }

    fn scan(&mut self, bytes: &[u8]) {
        for chunk in bytes.split_inclusive(|&b| b == b'\n') {
            let (body, done) = match chunk.split_last() {
                Some((b'\n', body)) => (body, true),
                _ => (chunk, false),
            };
            if self.line.len() <= TAP_LINE_MAX {
                self.line.extend_from_slice(body);
            }
            if done {
                self.take_line();
            }
        }
    }
}

fn contains(hay: &[u8], needle: &[u8]) -> bool {
    hay.windows(needle.len()).any(|w| w == needle)
}

impl<R: AsyncRead + Unpin> AsyncRead for LeaseTap<R> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let before = buf.filled().len();
        let polled = Pin::new(&mut self.inner).poll_read(cx, buf);
        if let Poll::Ready(Ok(())) = &polled {
            let fresh = buf.filled()[before..].to_vec();
            self.scan(&fresh);
        }
        polled
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_tap_reads_lease_holders_across_chunks() {
        let leases: LeaseView = Arc::default();
        let mut tap = LeaseTap {
            inner: tokio::io::empty(),
            line: Vec::new(),
            leases: leases.clone(),
        };
        let frame = br#"{"jsonrpc":"2.0","id":"1","result":{"devices":[{"id":"mock-1","lease":{"holder":"anotherConnection","sinceMs":1}},{"id":"mock-2"}]}}"#;
        let (a, b) = frame.split_at(40);
        tap.scan(a);
        tap.scan(b);
        tap.scan(b"\n{\"other\":1}\n");
        let map = leases.lock().expect("lock").clone();
        assert_eq!(map["mock-1"].as_deref(), Some("anotherConnection"));
        assert_eq!(map["mock-2"], None);
    }
}
