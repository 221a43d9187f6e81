//! Typing text with `input text`, and quoting for the device's `sh`.
//!
//! What `input text <arg>` does to its argument: it scans left to right
//! and, when a `%` is followed by `s`, replaces the pair with a space; it
//! then maps every character through the virtual keyboard's key map,
//! which only knows printable ASCII (anything else makes the command
//! throw). The strategy here:
//!
//! * Only printable ASCII (U+0020..U+007E), `\n` (sent as
//!   `KEYCODE_ENTER`) and `\t` (`KEYCODE_TAB`) can be typed. Anything else
//!   is refused up front with `invalid_arguments` naming the first
//!   offending character, before anything is typed.
//! * A space is sent as `%s`, so no layer that splits words (older
//!   releases' `input` wrapper expands `$*` unquoted) can cut the text.
//! * A literal `%` directly followed by a literal `s` cannot be sent in
//!   one argument (it would become a space), so the text is cut between
//!   the two into separate `input text` invocations.
//! * Every argument is single-quoted for `sh` (`'` becomes `'\''`), so
//!   `$`, backticks, `;`, `&`, `|`, `<`, `>`, `*`, `?`, `"`, `\`, `(`,
//!   `)`, `#`, `~` and `!` arrive unchanged.
//! * Arguments are at most [`MAX_CHUNK`] bytes; a command line carries at
//!   most [`MAX_LINE`] bytes of steps, longer texts take several round
//!   trips.

/// Longest `input text` argument (encoded bytes).
pub(crate) const MAX_CHUNK: usize = 512;
/// Longest command line built from typing steps.
pub(crate) const MAX_LINE: usize = 3072;
/// `KEYCODE_ENTER`.
pub(crate) const KEYCODE_ENTER: u32 = 66;
/// `KEYCODE_TAB`.
pub(crate) const KEYCODE_TAB: u32 = 61;
/// `KEYCODE_DEL` (backspace).
pub(crate) const KEYCODE_DEL: u32 = 67;
/// `KEYCODE_MOVE_END`.
pub(crate) const KEYCODE_MOVE_END: u32 = 123;

/// A character `input text` cannot produce.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "character {ch:?} (U+{code:04X}) at position {index} cannot be typed with `input text`: only printable ASCII, newline and tab can"
)]
pub(crate) struct UntypableChar {
    /// The character that cannot be typed.
    pub(crate) ch: char,
    /// Its Unicode scalar value, for the message.
    pub(crate) code: u32,
    /// Position in characters.
    pub(crate) index: usize,
}

/// One step of typing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Step {
    /// An `input text` argument, already `%s`-encoded.
    Text(String),
    /// An `input keyevent` code.
    Key(u32),
}

/// Checks that every character of `text` can be typed.
pub(crate) fn check_typable(text: &str) -> Result<(), UntypableChar> {
    match text
        .chars()
        .enumerate()
        .find(|(_, c)| !matches!(c, ' '..='~' | '\n' | '\t'))
    {
        Some((index, ch)) => Err(UntypableChar {
            ch,
            code: u32::from(ch),
            index,
        }),
        None => Ok(()),
    }
}

/// The steps that type `text`.
pub(crate) fn plan(text: &str) -> Result<Vec<Step>, UntypableChar> {
    check_typable(text)?;
    let mut steps = Vec::new();
    let mut chunk = String::new();
    let mut prev_percent = false;
    let flush = |chunk: &mut String, steps: &mut Vec<Step>| {
        if !chunk.is_empty() {
            steps.push(Step::Text(std::mem::take(chunk)));
        }
    };
    for c in text.chars() {
        match c {
            '\n' | '\t' => {
                flush(&mut chunk, &mut steps);
                steps.push(Step::Key(if c == '\n' {
                    KEYCODE_ENTER
                } else {
                    KEYCODE_TAB
                }));
                prev_percent = false;
                continue;
            }
            // `%` then `s` would decode to a space: cut between them.
            's' if prev_percent => flush(&mut chunk, &mut steps),
            _ => {}
        }
        let encoded = if c == ' ' { "%s" } else { "" };
        let add = if encoded.is_empty() { 1 } else { 2 };
        if chunk.len() + add > MAX_CHUNK {
            // Never split `%` from a following `s` we encoded ourselves:
            // a chunk ending in `%` is literal, and `%s` starts anew.
            flush(&mut chunk, &mut steps);
        }
        if encoded.is_empty() {
            chunk.push(c);
        } else {
            chunk.push_str(encoded);
        }
        prev_percent = c == '%';
    }
    flush(&mut chunk, &mut steps);
    Ok(steps)
}

/// Quotes `arg` for `sh`: single quotes, with `'` as `'\''`.
pub(crate) fn sh_quote(arg: &str) -> String {
    let mut out = String::with_capacity(arg.len() + 2);
    out.push('\'');
    for c in arg.chars() {
        if c == '\'' {
            out.push_str("'\\''");
        } else {
            out.push(c);
        }
    }
    out.push('\'');
    out
}

/// The shell command of one step.
pub(crate) fn step_command(step: &Step) -> String {
    match step {
        Step::Text(t) => format!("input text {}", sh_quote(t)),
        Step::Key(k) => format!("input keyevent {k}"),
    }
}

/// Joins steps into command lines of at most [`MAX_LINE`] bytes, each
/// step running only if the previous one succeeded.
pub(crate) fn command_lines(steps: &[Step]) -> Vec<String> {
    let mut lines = Vec::new();
    let mut line = String::new();
    for step in steps {
        let cmd = step_command(step);
        if !line.is_empty() && line.len() + 4 + cmd.len() > MAX_LINE {
            lines.push(std::mem::take(&mut line));
        }
        if !line.is_empty() {
            line.push_str(" && ");
        }
        line.push_str(&cmd);
    }
    if !line.is_empty() {
        lines.push(line);
    }
    lines
}

/// The stdin lines of the secret typing loop ([`SECRET_LOOP`]).
pub(crate) fn stdin_script(steps: &[Step]) -> Vec<u8> {
    let mut out = Vec::new();
    for step in steps {
        match step {
            Step::Text(t) => {
                out.push(b't');
                out.extend_from_slice(t.as_bytes());
            }
            Step::Key(k) => {
                out.push(b'k');
                out.extend_from_slice(k.to_string().as_bytes());
            }
        }
        out.push(b'\n');
    }
    out.extend_from_slice(b".\n");
    out
}

/// The `exec:` command that types what arrives on stdin: lines of
/// `t<encoded text>` or `k<keycode>`, ended by a `.` line. The secret is
/// only ever on stdin and in the device-side `input` arguments, never on
/// an adb command line. It prints the `__rc=` marker itself.
pub(crate) const SECRET_LOOP: &str = "r=0; while IFS= read -r l && [ \"$l\" != . ]; do case \"$l\" in t*) input text \"${l#t}\";; k*) input keyevent \"${l#k}\";; *) false;; esac || { r=$?; break; }; done; echo __rc=$r";

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(steps: &[Step]) -> Vec<String> {
        steps
            .iter()
            .map(|s| match s {
                Step::Text(t) => t.clone(),
                Step::Key(k) => format!("<{k}>"),
            })
            .collect()
    }

    #[test]
    fn spaces_percent_and_newlines() {
        let steps = plan("a b\n100% sure\t%s").expect("typable");
        assert_eq!(
            texts(&steps),
            vec!["a%sb", "<66>", "100%%ssure", "<61>", "%", "s"]
        );
    }

    #[test]
    fn untypable_characters_are_named() {
        let e = plan("naïve").expect_err("non-ASCII");
        assert_eq!((e.ch, e.index, e.code), ('ï', 2, 0xEF));
        assert!(plan("bell\u{7}").is_err());
        assert!(plan("").expect("empty is fine").is_empty());
    }

    #[test]
    fn quoting_survives_metacharacters() {
        assert_eq!(sh_quote("it's $HOME"), "'it'\\''s $HOME'");
        let lines = command_lines(&plan("x'y").expect("ok"));
        assert_eq!(lines, vec!["input text 'x'\\''y'"]);
    }

    #[test]
    fn long_texts_are_chunked_and_split_across_lines() {
        let text = "ab".repeat(2000);
        let steps = plan(&text).expect("ok");
        assert!(steps.iter().all(|s| match s {
            Step::Text(t) => t.len() <= MAX_CHUNK,
            Step::Key(_) => true,
        }));
        let lines = command_lines(&steps);
        assert!(lines.len() >= 2);
        assert!(lines.iter().all(|l| l.len() <= MAX_LINE));
        let spaces = plan(&" ".repeat(600)).expect("ok");
        assert!(texts(&spaces).iter().all(|t| t.len() % 2 == 0));
    }

    #[test]
    fn stdin_lines() {
        let s = stdin_script(&plan("a b\n").expect("ok"));
        assert_eq!(s, b"ta%sb\nk66\n.\n");
    }
}
