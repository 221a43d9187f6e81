//! What a worker prints: each line of its stdout and stderr is forwarded
//! to the host's log (stderr, never the protocol's stdout) under the
//! plugin's id, and the last lines are kept for the crash report. Lines
//! the worker's own log wrote keep their level.

use std::collections::VecDeque;
use std::io::{BufRead, BufReader, Read};
use std::sync::{Arc, Mutex};

/// Lines kept for a crash report.
pub(super) const TAIL_LINES: usize = 20;
/// Longest line kept or forwarded (longer lines are cut).
const MAX_LINE: usize = 2048;

/// The last lines a worker printed, shared by its two readers.
#[derive(Debug, Clone, Default)]
pub(super) struct Tail(Arc<Mutex<VecDeque<String>>>);

impl Tail {
    fn push(&self, line: String) {
        let mut lines = self.0.lock().unwrap_or_else(|p| p.into_inner());
        if lines.len() == TAIL_LINES {
            lines.pop_front();
        }
        lines.push_back(line);
    }

    /// The kept lines, oldest first.
    pub(super) fn lines(&self) -> Vec<String> {
        self.0
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .iter()
            .cloned()
            .collect()
    }
}

/// The level a worker's log line was written at, and the rest of it.
fn level_of(line: &str) -> (tracing::Level, &str) {
    let trimmed = line.trim_start();
    for (word, level) in [
        ("ERROR", tracing::Level::ERROR),
        ("WARN", tracing::Level::WARN),
        ("INFO", tracing::Level::INFO),
        ("DEBUG", tracing::Level::DEBUG),
        ("TRACE", tracing::Level::TRACE),
    ] {
        if let Some(rest) = trimmed.strip_prefix(word)
            && rest.starts_with(' ')
        {
            return (level, rest.trim_start());
        }
    }
    (tracing::Level::INFO, line)
}

fn cut(mut line: String) -> String {
    if line.len() > MAX_LINE {
        let mut end = MAX_LINE;
        while !line.is_char_boundary(end) {
            end -= 1;
        }
        line.truncate(end);
        line.push('…');
    }
    line
}

/// Forwards the lines of `pipe` (the worker's `stream`, `stdout` or
/// `stderr`) on a thread until the worker closes it.
pub(super) fn forward(
    plugin: &str,
    stream: &'static str,
    pipe: impl Read + Send + 'static,
    tail: &Tail,
) {
    let name = format!("worker-{stream}-{plugin}");
    let plugin = plugin.to_owned();
    let tail = tail.clone();
    let spawned = std::thread::Builder::new().name(name).spawn(move || {
        let mut reader = BufReader::new(pipe);
        let mut buf = Vec::new();
        loop {
            buf.clear();
            match reader.read_until(b'\n', &mut buf) {
                Ok(0) | Err(_) => return,
                Ok(_) => {}
            }
            let text = String::from_utf8_lossy(&buf);
            let line = cut(text.trim_end().to_owned());
            if line.is_empty() {
                continue;
            }
            let (level, message) = level_of(&line);
            let plugin = plugin.as_str();
            match level {
                tracing::Level::ERROR => tracing::error!(plugin, worker = stream, "{message}"),
                tracing::Level::WARN => tracing::warn!(plugin, worker = stream, "{message}"),
                tracing::Level::INFO => tracing::info!(plugin, worker = stream, "{message}"),
                tracing::Level::DEBUG => tracing::debug!(plugin, worker = stream, "{message}"),
                _ => tracing::trace!(plugin, worker = stream, "{message}"),
            }
            tail.push(line);
        }
    });
    if let Err(e) = spawned {
        tracing::warn!("cannot forward a plugin worker's {stream}: {e}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn levels_are_kept_and_the_tail_is_bounded() {
        assert_eq!(
            level_of(" WARN plugin=\"x\": slow"),
            (tracing::Level::WARN, "plugin=\"x\": slow")
        );
        assert_eq!(
            level_of("thread 'a' has overflowed its stack").0,
            tracing::Level::INFO
        );
        let tail = Tail::default();
        for i in 0..(TAIL_LINES + 5) {
            tail.push(i.to_string());
        }
        let lines = tail.lines();
        assert_eq!(lines.len(), TAIL_LINES);
        assert_eq!(lines[0], "5");
        assert!(cut("é".repeat(MAX_LINE)).len() <= MAX_LINE + '…'.len_utf8());
    }
}
