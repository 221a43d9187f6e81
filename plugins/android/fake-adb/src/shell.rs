//! The small subset of the device's `sh` the fake understands: words with
//! single quotes, double quotes and backslashes, `$?` and `$name`
//! expansion, `name=value` assignments, lists joined by `;`, `&&` and `||`,
//! pipelines, and the redirections `>file`, `>/dev/null`, `2>/dev/null`,
//! `>&2` and `2>&1`. Anything else is a syntax error, as it would be a
//! surprise for the driver under test.

use std::collections::HashMap;

/// What one command produced.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Output {
    /// What it wrote to standard output.
    pub(crate) stdout: Vec<u8>,
    /// What it wrote to standard error.
    pub(crate) stderr: Vec<u8>,
    /// Its exit status (0 for success).
    pub(crate) status: i32,
    /// Both streams in the order commands wrote them, as a terminal or a
    /// raw `exec:` stream delivers them (filled by [`run`]).
    pub(crate) merged: Vec<u8>,
    /// How long the device took (the latency model's; zero when instant).
    pub(crate) cost: std::time::Duration,
}

impl Output {
    /// Success (status 0) with this standard output.
    pub(crate) fn ok(stdout: impl Into<Vec<u8>>) -> Self {
        Self {
            stdout: stdout.into(),
            status: 0,
            ..Self::default()
        }
    }

    /// Failure with this status and standard error.
    pub(crate) fn fail(status: i32, stderr: impl Into<Vec<u8>>) -> Self {
        Self {
            stderr: stderr.into(),
            status,
            ..Self::default()
        }
    }
}

/// The commands behind the shell (the fake device's programs).
pub(crate) trait Programs {
    /// Runs one simple command.
    fn run(&mut self, argv: &[String], stdin: &[u8]) -> Output;
    /// Writes a file (`> path`); the error is what the shell says after
    /// `can't create PATH: ` (e.g. `Permission denied`).
    fn write_file(&mut self, path: &str, data: &[u8]) -> Result<(), String>;
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Part {
    Lit(String),
    Var(String),
}

type Word = Vec<Part>;

#[derive(Debug, Clone, PartialEq, Eq)]
enum Token {
    Word(Word),
    Semi,
    And,
    Or,
    Pipe,
    /// `>`, `1>`: stdout to the file named by the next word.
    Out,
    /// `2>`: stderr to the file named by the next word.
    ErrOut,
    /// `>&2`, `1>&2`.
    OutToErr,
    /// `2>&1`.
    ErrToOut,
}

/// A shell syntax error.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("sh: syntax error: {0}")]
pub(crate) struct SyntaxError(pub(crate) String);

fn lex(line: &str) -> Result<Vec<Token>, SyntaxError> {
    let mut tokens = Vec::new();
    let mut chars = line.chars().peekable();
    let mut word: Word = Vec::new();
    let mut in_word = false;
    let push_lit = |word: &mut Word, c: char| match word.last_mut() {
        Some(Part::Lit(s)) => s.push(c),
        _ => word.push(Part::Lit(c.to_string())),
    };
    fn var_name(chars: &mut std::iter::Peekable<std::str::Chars<'_>>) -> String {
        if chars.peek() == Some(&'?') {
            chars.next();
            return "?".into();
        }
        let mut name = String::new();
        while let Some(&c) = chars.peek() {
            if c.is_ascii_alphanumeric() || c == '_' {
                name.push(c);
                chars.next();
            } else {
                break;
            }
        }
        name
    }
    macro_rules! end_word {
        () => {
            if in_word {
                tokens.push(Token::Word(std::mem::take(&mut word)));
                in_word = false;
            }
        };
    }
    while let Some(c) = chars.next() {
        match c {
            ' ' | '\t' | '\n' => end_word!(),
            '\'' => {
                in_word = true;
                let mut lit = String::new();
                loop {
                    match chars.next() {
                        Some('\'') => break,
                        Some(c) => lit.push(c),
                        None => return Err(SyntaxError("unterminated '".into())),
                    }
                }
                match word.last_mut() {
                    Some(Part::Lit(s)) => s.push_str(&lit),
                    _ => word.push(Part::Lit(lit)),
                }
            }
            '"' => {
                in_word = true;
                // Make an empty "" a word even with nothing inside.
                if word.is_empty() {
                    word.push(Part::Lit(String::new()));
                }
                loop {
                    match chars.next() {
                        Some('"') => break,
                        Some('\\') => match chars.next() {
                            Some(c @ ('"' | '\\' | '$' | '`')) => push_lit(&mut word, c),
                            Some(c) => {
                                push_lit(&mut word, '\\');
                                push_lit(&mut word, c);
                            }
                            None => return Err(SyntaxError("unterminated \"".into())),
                        },
                        Some('$') => {
                            let name = var_name(&mut chars);
                            if name.is_empty() {
                                push_lit(&mut word, '$');
                            } else {
                                word.push(Part::Var(name));
                            }
                        }
                        Some('`') => return Err(SyntaxError("command substitution".into())),
                        Some(c) => push_lit(&mut word, c),
                        None => return Err(SyntaxError("unterminated \"".into())),
                    }
                }
            }
            '\\' => {
                in_word = true;
                match chars.next() {
                    Some('\n') | None => {}
                    Some(c) => push_lit(&mut word, c),
                }
            }
            '$' => {
                in_word = true;
                let name = var_name(&mut chars);
                if name.is_empty() {
                    push_lit(&mut word, '$');
                } else {
                    word.push(Part::Var(name));
                }
            }
            ';' => {
                end_word!();
                tokens.push(Token::Semi);
            }
            '&' => {
                end_word!();
                if chars.next() == Some('&') {
                    tokens.push(Token::And);
                } else {
                    return Err(SyntaxError("background jobs".into()));
                }
            }
            '|' => {
                end_word!();
                if chars.peek() == Some(&'|') {
                    chars.next();
                    tokens.push(Token::Or);
                } else {
                    tokens.push(Token::Pipe);
                }
            }
            '>' => {
                // A lone "1" or "2" just before '>' is a descriptor.
                let fd = match (&word[..], in_word) {
                    ([Part::Lit(s)], true) if s == "1" || s == "2" => {
                        let fd = s.clone();
                        word.clear();
                        in_word = false;
                        fd
                    }
                    _ => {
                        end_word!();
                        "1".into()
                    }
                };
                if chars.peek() == Some(&'&') {
                    chars.next();
                    let target = chars.next();
                    tokens.push(match (fd.as_str(), target) {
                        ("1", Some('2')) => Token::OutToErr,
                        ("2", Some('1')) => Token::ErrToOut,
                        _ => return Err(SyntaxError("unsupported descriptor duplication".into())),
                    });
                } else if fd == "2" {
                    tokens.push(Token::ErrOut);
                } else {
                    tokens.push(Token::Out);
                }
            }
            '<' | '(' | ')' | '`' | '{' | '}' => {
                return Err(SyntaxError(format!("unsupported {c:?}")));
            }
            c => {
                in_word = true;
                push_lit(&mut word, c);
            }
        }
    }
    if in_word {
        tokens.push(Token::Word(word));
    }
    Ok(tokens)
}

#[derive(Debug, Clone, Default)]
struct Simple {
    words: Vec<Word>,
    stdout_to: Option<Word>,
    stderr_to: Option<Word>,
    out_to_err: bool,
    err_to_out: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Joiner {
    Seq,
    And,
    Or,
}

type Pipeline = Vec<Simple>;

fn parse(tokens: Vec<Token>) -> Result<Vec<(Joiner, Pipeline)>, SyntaxError> {
    let mut list = Vec::new();
    let mut joiner = Joiner::Seq;
    let mut pipeline: Pipeline = Vec::new();
    let mut simple = Simple::default();
    let mut it = tokens.into_iter();
    let finish_simple = |simple: &mut Simple, pipeline: &mut Pipeline| -> Result<(), SyntaxError> {
        if simple.words.is_empty() {
            return Err(SyntaxError("empty command".into()));
        }
        pipeline.push(std::mem::take(simple));
        Ok(())
    };
    while let Some(tok) = it.next() {
        match tok {
            Token::Word(w) => simple.words.push(w),
            Token::Out | Token::ErrOut => {
                let Some(Token::Word(target)) = it.next() else {
                    return Err(SyntaxError("redirection without a file".into()));
                };
                if tok == Token::Out {
                    simple.stdout_to = Some(target);
                } else {
                    simple.stderr_to = Some(target);
                }
            }
            Token::OutToErr => simple.out_to_err = true,
            Token::ErrToOut => simple.err_to_out = true,
            Token::Pipe => finish_simple(&mut simple, &mut pipeline)?,
            Token::Semi | Token::And | Token::Or => {
                finish_simple(&mut simple, &mut pipeline)?;
                list.push((joiner, std::mem::take(&mut pipeline)));
                joiner = match tok {
                    Token::And => Joiner::And,
                    Token::Or => Joiner::Or,
                    _ => Joiner::Seq,
                };
            }
        }
    }
    if !simple.words.is_empty() {
        finish_simple(&mut simple, &mut pipeline)?;
    }
    if !pipeline.is_empty() {
        list.push((joiner, pipeline));
    } else if joiner != Joiner::Seq {
        return Err(SyntaxError("a list ends with an operator".into()));
    }
    Ok(list)
}

/// Shell variables of one invocation.
#[derive(Debug, Default)]
pub(crate) struct Env {
    /// `$?`: the status of the last command.
    pub(crate) status: i32,
    /// Variables set by `name=value`, for `$name`.
    pub(crate) vars: HashMap<String, String>,
}

impl Env {
    fn expand(&self, word: &Word) -> String {
        word.iter()
            .map(|p| match p {
                Part::Lit(s) => s.clone(),
                Part::Var(n) if n == "?" => self.status.to_string(),
                Part::Var(n) => self.vars.get(n).cloned().unwrap_or_default(),
            })
            .collect()
    }
}

fn assignment(word: &Word) -> Option<(String, Word)> {
    let Some(Part::Lit(first)) = word.first() else {
        return None;
    };
    let (name, rest) = first.split_once('=')?;
    if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
        return None;
    }
    let mut value = vec![Part::Lit(rest.to_owned())];
    value.extend(word[1..].iter().cloned());
    Some((name.to_owned(), value))
}

fn run_simple(programs: &mut dyn Programs, env: &mut Env, cmd: &Simple, stdin: &[u8]) -> Output {
    let mut words = cmd.words.as_slice();
    while let Some((name, value)) = words.first().and_then(assignment) {
        let value = env.expand(&value);
        env.vars.insert(name, value);
        words = &words[1..];
    }
    if words.is_empty() {
        return Output::ok(Vec::new());
    }
    let argv: Vec<String> = words.iter().map(|w| env.expand(w)).collect();
    let mut out = programs.run(&argv, stdin);
    if cmd.err_to_out {
        let err = std::mem::take(&mut out.stderr);
        out.stdout.extend(err);
    }
    if cmd.out_to_err {
        let o = std::mem::take(&mut out.stdout);
        out.stderr.extend(o);
    }
    let refused = |path: &str, why: String, out: &mut Output| {
        out.stderr
            .extend_from_slice(format!("/system/bin/sh: can't create {path}: {why}\n").as_bytes());
        out.status = 1;
    };
    if let Some(target) = &cmd.stdout_to {
        let path = env.expand(target);
        let data = std::mem::take(&mut out.stdout);
        if path != "/dev/null"
            && let Err(why) = programs.write_file(&path, &data)
        {
            refused(&path, why, &mut out);
        }
    }
    if let Some(target) = &cmd.stderr_to {
        let path = env.expand(target);
        let data = std::mem::take(&mut out.stderr);
        if path != "/dev/null"
            && let Err(why) = programs.write_file(&path, &data)
        {
            refused(&path, why, &mut out);
        }
    }
    out
}

/// Runs a command line as `sh -c` would, with `stdin` for its first
/// command.
pub(crate) fn run(programs: &mut dyn Programs, line: &str, stdin: &[u8]) -> Output {
    let list = match lex(line).and_then(parse) {
        Ok(l) => l,
        Err(e) => {
            let mut out = Output::fail(2, format!("{e}\n"));
            out.merged = out.stderr.clone();
            return out;
        }
    };
    let mut env = Env::default();
    let mut total = Output::default();
    for (joiner, pipeline) in list {
        let skip = match joiner {
            Joiner::Seq => false,
            Joiner::And => env.status != 0,
            Joiner::Or => env.status == 0,
        };
        if skip {
            continue;
        }
        let mut input = stdin.to_vec();
        let last = pipeline.len().saturating_sub(1);
        for (i, cmd) in pipeline.iter().enumerate() {
            let out = run_simple(programs, &mut env, cmd, &input);
            total.cost += out.cost;
            total.stderr.extend_from_slice(&out.stderr);
            total.merged.extend_from_slice(&out.stderr);
            env.status = out.status;
            if i == last {
                total.stdout.extend_from_slice(&out.stdout);
                total.merged.extend_from_slice(&out.stdout);
            } else {
                input = out.stdout;
            }
        }
    }
    total.status = env.status;
    total
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Default)]
    struct Echo {
        ran: Vec<Vec<String>>,
        files: HashMap<String, Vec<u8>>,
    }

    impl Programs for Echo {
        fn run(&mut self, argv: &[String], stdin: &[u8]) -> Output {
            self.ran.push(argv.to_vec());
            match argv[0].as_str() {
                "echo" => Output::ok(format!("{}\n", argv[1..].join(" "))),
                "false" => Output::fail(1, "no\n"),
                "upper" => Output::ok(String::from_utf8_lossy(stdin).to_uppercase()),
                _ => Output::fail(127, format!("{}: not found\n", argv[0])),
            }
        }
        fn write_file(&mut self, path: &str, data: &[u8]) -> Result<(), String> {
            self.files.insert(path.into(), data.to_vec());
            Ok(())
        }
    }

    #[test]
    fn quoting_and_status() {
        let mut p = Echo::default();
        let out = run(
            &mut p,
            r#"echo 'a b'"c $?" d\ e && false; echo __rc=$?"#,
            b"",
        );
        assert_eq!(String::from_utf8_lossy(&out.stdout), "a bc 0 d e\n__rc=1\n");
        assert_eq!(p.ran[0], vec!["echo", "a bc 0", "d e"]);
        let out = run(&mut p, "echo 'x'\\''y'", b"");
        assert_eq!(String::from_utf8_lossy(&out.stdout), "x'y\n");
    }

    #[test]
    fn lists_pipes_redirections() {
        let mut p = Echo::default();
        let out = run(
            &mut p,
            "false || echo ok >&2; echo hi | upper; echo f >/tmp/x; r=$?; echo \"$r\" 2>/dev/null",
            b"",
        );
        assert_eq!(String::from_utf8_lossy(&out.stdout), "HI\n0\n");
        assert_eq!(String::from_utf8_lossy(&out.stderr), "no\nok\n");
        assert_eq!(p.files.get("/tmp/x").map(Vec::as_slice), Some(&b"f\n"[..]));
    }

    #[test]
    fn syntax_errors() {
        let mut p = Echo::default();
        assert_eq!(run(&mut p, "echo 'open", b"").status, 2);
        assert_eq!(run(&mut p, "echo a &", b"").status, 2);
        assert_eq!(run(&mut p, "echo $(id)", b"").status, 2);
    }
}
