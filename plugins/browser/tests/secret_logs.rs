//! `inputSecret` text never reaches the logs: every plugin log record (at
//! trace level, forwarded through the real cdylib boundary) is captured
//! while a secret is typed, and searched for it.

mod common;

use std::io::Write;
use std::sync::{Arc, Mutex};

use common::{Browser, TestServer, node};
use serde_json::json;

const SECRET: &str = "s3cr3t-Hunter-42";

const LOGIN: &str = r#"<!doctype html><html><head><title>Login</title></head><body>
<label for="pw">Password</label> <input id="pw" type="password">
</body></html>"#;

#[derive(Clone, Default)]
struct Captured(Arc<Mutex<Vec<u8>>>);

impl Write for Captured {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[test]
fn input_secret_never_appears_in_logs() {
    let logs = Captured::default();
    let writer = logs.clone();
    tracing_subscriber::fmt()
        .with_max_level(tracing::Level::TRACE)
        .with_ansi(false)
        .with_writer(move || writer.clone())
        .init();

    let web = TestServer::start(&[("/login", LOGIN)]);
    let b = Browser::connect(json!({}));
    b.goto(&web.url("/login"));
    let tree = b.tree();
    let field = node(&tree, |n| n.identifier.as_deref() == Some("pw"));
    let (x, y) = field.bounds.expect("bounds").center();
    b.ok("tap", json!({ "x": x, "y": y }));
    let typed = b.ok("inputSecret", json!({ "text": SECRET }));
    assert!(
        !typed.output.to_string().contains(SECRET),
        "the output does not echo it"
    );

    // The secret reached the page, masked in the UI tree.
    let after = b.tree();
    let field = node(&after, |n| n.identifier.as_deref() == Some("pw"));
    assert_eq!(
        field.value.as_deref().map(|v| v.chars().count()),
        Some(SECRET.chars().count())
    );
    assert!(
        !serde_json::to_string(&after)
            .expect("json")
            .contains(SECRET)
    );
    drop(b);

    let text =
        String::from_utf8_lossy(&logs.0.lock().unwrap_or_else(|p| p.into_inner())).into_owned();
    assert!(
        text.contains("inputSecret"),
        "plugin logs were captured (the action name is logged): {}",
        text.len()
    );
    assert!(
        text.contains("DevTools request"),
        "trace-level transport logs were captured"
    );
    let leaks: Vec<&str> = text.lines().filter(|l| l.contains(SECRET)).collect();
    assert!(
        leaks.is_empty(),
        "the secret leaked into the logs: {leaks:#?}"
    );
}
