//! Resolving a configured DevTools endpoint of an existing browser: a
//! `ws://` URL is used as is; `http://host:port` is asked for its
//! `/json/version` document, which names the browser WebSocket URL.

use std::time::Duration;

use serde::Deserialize;
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::TcpStream;

use crate::cdp::CdpError;

/// Largest `/json/version` answer read.
const MAX_ANSWER: usize = 64 * 1024;

#[derive(Deserialize)]
struct VersionDocument {
    #[serde(rename = "webSocketDebuggerUrl")]
    web_socket_debugger_url: String,
}

/// Host and port of an `http://host:port[/]` endpoint.
pub(crate) fn parse_http(endpoint: &str) -> Result<(String, u16), CdpError> {
    let bad = |reason: &str| CdpError::BadEndpoint {
        endpoint: endpoint.to_owned(),
        reason: reason.to_owned(),
    };
    let rest = endpoint
        .strip_prefix("http://")
        .ok_or_else(|| bad("expected ws://... or http://host:port"))?;
    let authority = rest.split('/').next().unwrap_or_default();
    let (host, port) = authority
        .rsplit_once(':')
        .ok_or_else(|| bad("the port is missing"))?;
    let port: u16 = port.parse().map_err(|_| bad("the port is not a number"))?;
    if host.is_empty() {
        return Err(bad("the host is missing"));
    }
    Ok((host.trim_matches(['[', ']']).to_owned(), port))
}

/// The browser WebSocket URL of `endpoint`.
pub(crate) async fn resolve(endpoint: &str, timeout: Duration) -> Result<String, CdpError> {
    if endpoint.starts_with("ws://") {
        return Ok(endpoint.to_owned());
    }
    let (host, port) = parse_http(endpoint)?;
    let fail = |reason: String| CdpError::Connect {
        url: endpoint.to_owned(),
        reason,
    };
    let exchange = async {
        let mut stream = TcpStream::connect((host.as_str(), port))
            .await
            .map_err(|e| fail(e.to_string()))?;
        // DevTools only answers Host headers that are an IP or localhost.
        let host_header = if host.contains(':') {
            format!("[{host}]:{port}")
        } else {
            format!("{host}:{port}")
        };
        let request = format!(
            "GET /json/version HTTP/1.1\r\nHost: {host_header}\r\nAccept: application/json\r\nConnection: close\r\n\r\n"
        );
        stream
            .write_all(request.as_bytes())
            .await
            .map_err(|e| fail(e.to_string()))?;
        let mut answer = Vec::new();
        let mut chunk = [0u8; 8192];
        loop {
            let n = stream
                .read(&mut chunk)
                .await
                .map_err(|e| fail(e.to_string()))?;
            if n == 0 {
                break;
            }
            answer.extend_from_slice(&chunk[..n]);
            if answer.len() > MAX_ANSWER {
                return Err(fail("the /json/version answer is too large".into()));
            }
            // The browser may keep the connection open: stop once the
            // body announced by Content-Length is complete.
            if complete(&answer) {
                break;
            }
        }
        Ok::<Vec<u8>, CdpError>(answer)
    };
    let answer = tokio::time::timeout(timeout, exchange)
        .await
        .map_err(|_| fail(format!("no answer within {timeout:?}")))??;
    ws_url_from_http_answer(endpoint, &answer)
}

/// Whether `answer` holds the headers and the whole announced body.
fn complete(answer: &[u8]) -> bool {
    let Some(end) = answer.windows(4).position(|w| w == b"\r\n\r\n") else {
        return false;
    };
    let head = String::from_utf8_lossy(&answer[..end]);
    let length = head.lines().find_map(|l| {
        let (name, value) = l.split_once(':')?;
        name.trim()
            .eq_ignore_ascii_case("content-length")
            .then(|| value.trim().parse::<usize>().ok())
            .flatten()
    });
    length.is_some_and(|len| answer.len() >= end + 4 + len)
}

/// Extracts `webSocketDebuggerUrl` from a raw HTTP answer.
pub(crate) fn ws_url_from_http_answer(endpoint: &str, answer: &[u8]) -> Result<String, CdpError> {
    let bad = |reason: String| CdpError::BadEndpoint {
        endpoint: endpoint.to_owned(),
        reason,
    };
    let text = String::from_utf8_lossy(answer);
    let (head, body) = text
        .split_once("\r\n\r\n")
        .ok_or_else(|| bad("the answer is not HTTP".into()))?;
    let status = head.lines().next().unwrap_or_default();
    if status.split_whitespace().nth(1).is_none_or(|c| c != "200") {
        return Err(bad(format!("/json/version answered {status:?}")));
    }
    let doc: VersionDocument = serde_json::from_str(body.trim()).map_err(|e| {
        bad(format!(
            "/json/version is not a DevTools version document: {e}"
        ))
    })?;
    Ok(doc.web_socket_debugger_url)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn http_endpoints() {
        assert_eq!(
            parse_http("http://127.0.0.1:9222").ok(),
            Some(("127.0.0.1".into(), 9222))
        );
        assert_eq!(
            parse_http("http://localhost:9222/").ok(),
            Some(("localhost".into(), 9222))
        );
        assert!(parse_http("http://localhost").is_err());
        assert!(parse_http("ftp://x:1").is_err());
    }

    #[test]
    fn version_document() {
        let answer = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n\r\n{\"Browser\":\"Chrome/1\",\"webSocketDebuggerUrl\":\"ws://127.0.0.1:9222/devtools/browser/x\"}";
        assert_eq!(
            ws_url_from_http_answer("http://127.0.0.1:9222", answer).ok(),
            Some("ws://127.0.0.1:9222/devtools/browser/x".into())
        );
        let missing = b"HTTP/1.1 404 Not Found\r\n\r\n";
        assert!(ws_url_from_http_answer("http://127.0.0.1:9222", missing).is_err());
    }
}
