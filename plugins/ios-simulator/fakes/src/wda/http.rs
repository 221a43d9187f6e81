//! A minimal HTTP/1.1 server on 127.0.0.1 for the fake WebDriverAgent:
//! keep-alive connections, `Content-Length` bodies, one thread per
//! connection, and a `stop` that closes the port and every open connection
//! (so a client sees WebDriverAgent vanish).

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

/// Largest request body accepted.
const MAX_BODY: usize = 16 * 1024 * 1024;

/// One parsed request.
#[derive(Debug, Clone)]
pub(super) struct Request {
    /// The HTTP method, as sent.
    pub(super) method: String,
    /// The path without the query.
    pub(super) path: String,
    /// The query string after `?` (empty without one).
    pub(super) query: String,
    /// The request body.
    pub(super) body: Vec<u8>,
}

/// One response; `None` from a handler drops the connection unanswered.
#[derive(Debug, Clone)]
pub(super) struct Response {
    /// The HTTP status code.
    pub(super) status: u16,
    /// The JSON body.
    pub(super) body: Vec<u8>,
}

/// What serves requests.
pub(super) type Handler = Arc<dyn Fn(&Request) -> Option<Response> + Send + Sync>;

fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        400 => "Bad Request",
        404 => "Not Found",
        405 => "Method Not Allowed",
        500 => "Internal Server Error",
        _ => "Unknown",
    }
}

/// A running server.
pub(super) struct Server {
    addr: SocketAddr,
    stopped: Arc<AtomicBool>,
    connections: Arc<Mutex<Vec<TcpStream>>>,
    accept: Option<JoinHandle<()>>,
}

impl Server {
    /// Binds a random port on 127.0.0.1 and serves `handler`.
    pub(super) fn start(handler: Handler) -> std::io::Result<Self> {
        let listener = TcpListener::bind("127.0.0.1:0")?;
        let addr = listener.local_addr()?;
        let stopped = Arc::new(AtomicBool::new(false));
        let connections = Arc::new(Mutex::new(Vec::new()));
        let accept = {
            let (stopped, connections) = (stopped.clone(), connections.clone());
            std::thread::Builder::new()
                .name("fake-wda-accept".into())
                .spawn(move || {
                    for stream in listener.incoming() {
                        if stopped.load(Ordering::Acquire) {
                            break;
                        }
                        let Ok(stream) = stream else { continue };
                        let _ = stream.set_nodelay(true);
                        if let Ok(clone) = stream.try_clone() {
                            connections
                                .lock()
                                .unwrap_or_else(|p| p.into_inner())
                                .push(clone);
                        }
                        let (handler, stopped) = (handler.clone(), stopped.clone());
                        let _ = std::thread::Builder::new()
                            .name("fake-wda-conn".into())
                            .spawn(move || serve(stream, &handler, &stopped));
                    }
                })?
        };
        Ok(Self {
            addr,
            stopped,
            connections,
            accept: Some(accept),
        })
    }

    pub(super) fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Closes the port and every open connection; idempotent.
    pub(super) fn stop(&mut self) {
        if self.stopped.swap(true, Ordering::AcqRel) {
            return;
        }
        // Wake the accept loop so it sees the flag and drops the listener.
        let _ = TcpStream::connect(self.addr);
        if let Some(t) = self.accept.take() {
            let _ = t.join();
        }
        for c in self
            .connections
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .drain(..)
        {
            let _ = c.shutdown(Shutdown::Both);
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.stop();
    }
}

fn read_request(reader: &mut BufReader<TcpStream>) -> Option<(Request, bool)> {
    let mut line = String::new();
    if reader.read_line(&mut line).ok()? == 0 {
        return None;
    }
    let mut parts = line.split_whitespace();
    let method = parts.next()?.to_owned();
    let target = parts.next()?.to_owned();
    let mut length = 0usize;
    let mut close = false;
    loop {
        let mut h = String::new();
        if reader.read_line(&mut h).ok()? == 0 {
            return None;
        }
        let h = h.trim_end();
        if h.is_empty() {
            break;
        }
        if let Some((name, value)) = h.split_once(':') {
            let (name, value) = (name.trim().to_ascii_lowercase(), value.trim());
            if name == "content-length" {
                length = value.parse().ok()?;
            } else if name == "connection" && value.eq_ignore_ascii_case("close") {
                close = true;
            }
        }
    }
    if length > MAX_BODY {
        return None;
    }
    let mut body = vec![0u8; length];
    reader.read_exact(&mut body).ok()?;
    let (path, query) = match target.split_once('?') {
        Some((p, q)) => (p.to_owned(), q.to_owned()),
        None => (target, String::new()),
    };
    Some((
        Request {
            method,
            path,
            query,
            body,
        },
        close,
    ))
}

fn serve(stream: TcpStream, handler: &Handler, stopped: &AtomicBool) {
    let Ok(mut writer) = stream.try_clone() else {
        return;
    };
    let mut reader = BufReader::new(stream);
    while let Some((request, close)) = read_request(&mut reader) {
        if stopped.load(Ordering::Acquire) {
            return;
        }
        let Some(response) = handler(&request) else {
            let _ = writer.shutdown(Shutdown::Both);
            return;
        };
        let head = format!(
            "HTTP/1.1 {} {}\r\nContent-Type: application/json;charset=UTF-8\r\nContent-Length: {}\r\nConnection: {}\r\nServer: fake-wda\r\n\r\n",
            response.status,
            reason(response.status),
            response.body.len(),
            if close { "close" } else { "keep-alive" }
        );
        if writer.write_all(head.as_bytes()).is_err()
            || writer.write_all(&response.body).is_err()
            || writer.flush().is_err()
            || close
        {
            return;
        }
    }
}
