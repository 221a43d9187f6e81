//! The suite's web server on 127.0.0.1: pages it can swap between runs
//! (the same URL, another page), and the probes the pages report, in the
//! order they arrived.

use std::collections::HashMap;
use std::io::{Read as _, Write as _};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// Serves the current pages until dropped.
pub(crate) struct Server {
    port: u16,
    pages: Arc<Mutex<HashMap<String, String>>>,
    probes: Arc<Mutex<Vec<String>>>,
    stop: Arc<AtomicBool>,
}

impl Server {
    pub(crate) fn start() -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1");
        let port = listener.local_addr().expect("addr").port();
        let pages: Arc<Mutex<HashMap<String, String>>> = Arc::default();
        let probes: Arc<Mutex<Vec<String>>> = Arc::default();
        let stop = Arc::new(AtomicBool::new(false));
        let (p, q, s) = (pages.clone(), probes.clone(), stop.clone());
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                if s.load(Ordering::Acquire) {
                    break;
                }
                let Ok(stream) = stream else { continue };
                let (p, q) = (p.clone(), q.clone());
                std::thread::spawn(move || serve(stream, &p, &q));
            }
        });
        Self {
            port,
            pages,
            probes,
            stop,
        }
    }

    pub(crate) fn url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}{path}", self.port)
    }

    /// Serves `html` at `path` from now on.
    pub(crate) fn set(&self, path: &str, html: String) {
        self.pages
            .lock()
            .expect("pages")
            .insert(path.to_owned(), html);
    }

    /// Forgets the probes reported so far.
    pub(crate) fn clear(&self) {
        self.probes.lock().expect("probes").clear();
    }

    /// The probes reported since the last call (and forgets them), after
    /// a moment for the last ones to arrive, in the order the pages sent
    /// them (by each probe's `o=LOAD-N`, which is then dropped).
    pub(crate) fn take_probes(&self) -> Vec<String> {
        std::thread::sleep(Duration::from_millis(60));
        let raw = std::mem::take(&mut *self.probes.lock().expect("probes"));
        let mut keyed: Vec<((f64, u64), String)> = raw
            .into_iter()
            .map(|q| {
                let (order, rest) = q
                    .strip_prefix("o=")
                    .and_then(|r| r.split_once('&'))
                    .unwrap_or(("", q.as_str()));
                let (load, n) = order.rsplit_once('-').unwrap_or(("0", "0"));
                (
                    (load.parse().unwrap_or(0.0), n.parse().unwrap_or(0)),
                    rest.to_owned(),
                )
            })
            .collect();
        keyed.sort_by(|a, b| a.0.0.total_cmp(&b.0.0).then(a.0.1.cmp(&b.0.1)));
        keyed.into_iter().map(|(_, q)| q).collect()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Release);
        let _ = TcpStream::connect(("127.0.0.1", self.port));
    }
}

fn serve(
    mut stream: TcpStream,
    pages: &Mutex<HashMap<String, String>>,
    probes: &Mutex<Vec<String>>,
) {
    let _ = stream.set_read_timeout(Some(Duration::from_secs(5)));
    let mut buf = Vec::new();
    let mut chunk = [0u8; 4096];
    while !buf.windows(4).any(|w| w == b"\r\n\r\n") {
        match stream.read(&mut chunk) {
            Ok(0) | Err(_) => return,
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
        }
        if buf.len() > 64 * 1024 {
            return;
        }
    }
    let head = String::from_utf8_lossy(&buf);
    let target = head
        .lines()
        .next()
        .and_then(|l| l.split_whitespace().nth(1))
        .unwrap_or("/")
        .to_owned();
    let (path, query) = target.split_once('?').unwrap_or((&target, ""));
    let (status, body) = if path == "/probe" {
        probes.lock().expect("probes").push(query.to_owned());
        ("204 No Content", String::new())
    } else {
        match pages.lock().expect("pages").get(path) {
            Some(b) => ("200 OK", b.clone()),
            None => (
                "404 Not Found",
                "<!doctype html><title>404</title><p>not found</p>".to_owned(),
            ),
        }
    };
    let answer = format!(
        "HTTP/1.1 {status}\r\nContent-Type: text/html; charset=utf-8\r\nContent-Length: {}\r\nCache-Control: no-store\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    let _ = stream.write_all(answer.as_bytes());
}
