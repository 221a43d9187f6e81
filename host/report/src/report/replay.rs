//! A replay's comparison, in the replay Session's own report. `devicerail
//! replay` records, in the Session it runs, a link to the Session it
//! replays (its first verdict, [`link`]) and one verdict per step
//! ([`step_summary`]: the step's number, Action, verdict and note, citing
//! the replayed screen after it). The report of such a Session shows
//! both sides per step: the recorded Action's before and after
//! screenshots (read from the recorded Session, when the report can load
//! it) beside the replayed screen.
//!
//! The text forms are written and read here only, so they stay one.

use std::collections::HashMap;

use devicerail_host_agent::log::effect_inputs;
use devicerail_host_agent::screen::shot_of;
use devicerail_host_protocol::{TestEvent, TestEventPayload};
use serde::Serialize;

use crate::bundle::SessionData;

/// How the link verdict starts.
const LINK: &str = "devicerail replay: this Session replays Session ";
/// How a step verdict starts.
const STEP: &str = "replay step ";
/// Longest note a step verdict carries, in characters.
const MAX_NOTE: usize = 4000;

/// The link verdict's summary: this Session replays `session`, steps
/// `first` to `last`.
pub fn link(session: &str, first: usize, last: usize) -> String {
    format!("{LINK}{session} (steps {first} to {last})")
}

/// The Session a link verdict's summary names.
pub fn linked(summary: &str) -> Option<&str> {
    summary
        .strip_prefix(LINK)?
        .split_whitespace()
        .next()
        .filter(|s| !s.is_empty())
}

/// One step of a replay, as its verdict records it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct StepLine {
    /// The recorded step's number.
    pub number: usize,
    /// The Action.
    pub action: String,
    /// `matched`, `healed`, `diverged` or `skipped`.
    pub verdict: String,
    /// Why, in one line.
    pub note: String,
}

/// A step verdict's summary.
pub fn step_summary(number: usize, action: &str, verdict: &str, note: &str) -> String {
    let note: String = note.chars().take(MAX_NOTE).collect();
    format!("{STEP}{number} ({action}): {verdict}: {note}")
}

/// Reads a step verdict's summary.
pub fn parse_step(summary: &str) -> Option<StepLine> {
    let rest = summary.strip_prefix(STEP)?;
    let (number, rest) = rest.split_once(" (")?;
    let (action, rest) = rest.split_once("): ")?;
    let (verdict, note) = rest.split_once(": ").unwrap_or((rest, ""));
    Some(StepLine {
        number: number.parse().ok()?,
        action: action.to_owned(),
        verdict: verdict.to_owned(),
        note: note.to_owned(),
    })
}

/// One step, both sides.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Compared {
    /// What the replay recorded of it.
    #[serde(flatten)]
    pub line: StepLine,
    /// The recorded Action's before screenshot (sha256).
    pub recorded_before: Option<String>,
    /// The recorded Action's after screenshot.
    pub recorded_after: Option<String>,
    /// The replayed screen after the step.
    pub replayed_after: Option<String>,
}

/// The comparison a replay Session's report shows.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Comparison {
    /// The recorded Session.
    pub replays: String,
    /// Whether the recorded Session was there to show its side.
    pub recorded_available: bool,
    /// Every step the replay recorded.
    pub steps: Vec<Compared>,
}

/// The replay comparison of `events` (a Session's typed log), when it is
/// a replay; the recorded side from `recorded` when given (and it is the
/// Session replayed).
pub fn comparison(events: &[TestEvent], recorded: Option<&SessionData>) -> Option<Comparison> {
    let mut replays = None;
    let mut lines = Vec::new();
    for e in events {
        let TestEventPayload::VerdictRecorded { verdict } = &e.payload else {
            continue;
        };
        if replays.is_none() {
            if let Some(s) = linked(&verdict.summary) {
                replays = Some(s.to_owned());
            }
            continue;
        }
        if let Some(line) = parse_step(&verdict.summary) {
            let shot = verdict
                .evidence
                .iter()
                .find(|a| a.media_type.as_str() == devicerail_host_protocol::PNG_MEDIA_TYPE)
                .and_then(|a| a.sha256.clone());
            lines.push((line, shot));
        }
    }
    let replays = replays?;
    let recorded = recorded.filter(|d| d.session.id.to_string() == replays);
    let shots = recorded.map(recorded_shots).unwrap_or_default();
    let steps = lines
        .into_iter()
        .map(|(line, replayed_after)| {
            let (recorded_before, recorded_after) =
                shots.get(&line.number).cloned().unwrap_or_default();
            Compared {
                line,
                recorded_before,
                recorded_after,
                replayed_after,
            }
        })
        .collect();
    Some(Comparison {
        replays,
        recorded_available: recorded.is_some(),
        steps,
    })
}

/// The screenshots each Action of `data` was compared by (its before and
/// after, by the effect rule), by the Action's number from 1.
fn recorded_shots(data: &SessionData) -> HashMap<usize, (Option<String>, Option<String>)> {
    let events: Vec<TestEvent> = data
        .events
        .iter()
        .filter_map(|e| serde_json::from_str(&e.json).ok())
        .collect();
    let numbers: HashMap<String, usize> = events
        .iter()
        .filter_map(|e| match &e.payload {
            TestEventPayload::ActionStarted { call } => Some(call.id.to_string()),
            _ => None,
        })
        .enumerate()
        .map(|(k, id)| (id, k + 1))
        .collect();
    effect_inputs(&events)
        .into_iter()
        .filter_map(|i| {
            let n = *numbers.get(&i.call_id)?;
            Some((
                n,
                (
                    i.before_shot.and_then(shot_of),
                    i.after_shot.and_then(shot_of),
                ),
            ))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn step_verdicts_read_back_as_written() {
        let s = step_summary(3, "tap", "healed", "button \"Save\" moved: hit at (1, 2)");
        assert_eq!(
            parse_step(&s),
            Some(StepLine {
                number: 3,
                action: "tap".into(),
                verdict: "healed".into(),
                note: "button \"Save\" moved: hit at (1, 2)".into(),
            })
        );
        assert_eq!(parse_step("a verdict of someone else"), None);
        let l = link("0190-abc", 1, 6);
        assert_eq!(linked(&l), Some("0190-abc"));
        assert_eq!(linked("replays nothing"), None);
    }
}
