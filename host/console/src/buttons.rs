//! The Session list's buttons: replay an ended Session on its device (as
//! `devicerail replay` does, a new Session with a verdict) and export it
//! as a script (as `devicerail export` does). Protected steps need their
//! secrets, which the console never holds: such a replay stops with the
//! reason.

use devicerail_host_link::Intro;
use devicerail_host_replay::export::{Language, export_source};
use devicerail_host_replay::run::{Options, replay_on};
use devicerail_host_report::report::Source;
use serde_json::{Value, json};

use crate::control::failure;
use crate::http::App;
use crate::messages::Failure;

/// Settling bound of a console replay's steps.
const SETTLE_MAX_MS: u32 = 3_000;

fn bad(code: &str, message: impl Into<String>) -> Failure {
    Failure {
        code: code.into(),
        message: message.into(),
    }
}

fn source(app: &App, session: &str) -> Result<Source, Failure> {
    let id = session
        .parse()
        .map_err(|_| bad("invalid_params", format!("{session} is not a Session id")))?;
    Ok(Source::Store {
        data_dir: app.data_dir.clone(),
        session: Some(id),
    })
}

/// Replays `session`; answers the counts and the new Session's report.
pub(crate) async fn replay(app: &App, session: &str) -> Result<Value, Failure> {
    let opts = Options {
        source: source(app, session)?,
        device: None,
        from: None,
        to: None,
        strict: false,
        settle_max_ms: SETTLE_MAX_MS,
    };
    let client = app
        .lab
        .reach
        .client(&Intro::new("console replay"), "devicerail-console (replay)")
        .await
        .map_err(|e| failure(&e))?;
    let none = |_: &str| -> Option<String> { None };
    let outcome = replay_on(&client, &opts, &none).await;
    let _ = client.close().await;
    let summary = outcome.map_err(|e| bad("replay_failed", e.to_string()))?;
    Ok(json!({
        "session": summary.session,
        "counts": {
            "matched": summary.matched,
            "healed": summary.healed,
            "diverged": summary.diverged,
        },
        "stopped": summary.stopped,
        "report": format!("/sessions/{}/report", summary.session),
    }))
}

/// `session` as a `script`.
pub(crate) async fn export(app: &App, session: &str, script: &str) -> Result<Value, Failure> {
    let language = match script {
        "python" => Language::Python,
        "typescript" => Language::TypeScript,
        "rust" => Language::Rust,
        "playwright" => Language::Playwright,
        other => return Err(bad("invalid_params", format!("no {other} export"))),
    };
    let source = source(app, session)?;
    tokio::task::spawn_blocking(move || export_source(&source, language))
        .await
        .map_err(|e| bad("internal_error", e.to_string()))?
        .map(Value::String)
        .map_err(|e| bad("export_failed", e.to_string()))
}
