//! `devicerail attach`: bridges this process's stdin/stdout to a shared
//! host's control socket, so any client that spawns a stdio host works
//! unchanged against the shared one. It announces itself with the attach
//! preamble (`devicerail_host_link::Intro`) before the client's first byte and then copies
//! bytes both ways without reading them. With `DEVICERAIL_LEASE_TOKEN` set
//! (a Kubernetes device plugin puts it in a pod's environment), the
//! preamble presents that reservation token, so the client may take the
//! device reserved for it. It never serves the protocol itself, never
//! writes anything but the host's bytes to stdout, and never prints the
//! token.

use std::io::{Read, Write};
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use devicerail_host_link::Intro;
use devicerail_host_protocol::pool::{LeaseToken, TokenError};

/// The environment variable that carries a reservation token.
pub(crate) const LEASE_TOKEN_ENV: &str = "DEVICERAIL_LEASE_TOKEN";

/// How long `--spawn` waits for the started host to listen.
const SPAWN_WAIT: Duration = Duration::from_secs(15);

/// Why attaching failed.
#[derive(Debug, thiserror::Error)]
pub(crate) enum AttachError {
    #[error(
        "no DeviceRail host is listening on {path}; start one with `devicerail serve --listen unix:{path}` (or run `devicerail attach --spawn`)"
    )]
    NoHost { path: PathBuf },
    #[error("cannot connect to {path}: {source}")]
    Connect {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("cannot start a host: {0}")]
    Spawn(std::io::Error),
    #[error(
        "the host started for {path} did not listen within {secs} s; its log is {log}",
        secs = SPAWN_WAIT.as_secs()
    )]
    SpawnTimeout { path: PathBuf, log: PathBuf },
    #[error("the bridge failed: {0}")]
    Bridge(std::io::Error),
    #[error(transparent)]
    Paths(#[from] devicerail_host_config::paths::PathError),
    #[error("${LEASE_TOKEN_ENV} is not a lease token: {0}")]
    Token(TokenError),
    #[error("cannot run ssh (install OpenSSH's client): {0}")]
    Ssh(std::io::Error),
    #[error("ssh to {destination} ended with {status}")]
    SshFailed {
        destination: String,
        status: std::process::ExitStatus,
    },
    #[error("--ssh-option takes KEY=VALUE (as `ssh -o` does), not {0:?}")]
    SshOption(String),
}

/// The reservation token of `DEVICERAIL_LEASE_TOKEN`, if set (an empty
/// value counts as unset).
fn lease_token() -> Result<Option<LeaseToken>, AttachError> {
    match std::env::var(LEASE_TOKEN_ENV) {
        Ok(v) if !v.is_empty() => LeaseToken::new(v).map(Some).map_err(AttachError::Token),
        Ok(_) | Err(std::env::VarError::NotPresent) => Ok(None),
        Err(std::env::VarError::NotUnicode(_)) => Err(AttachError::Token(TokenError::Charset)),
    }
}

/// The preamble line for this process, presenting `token` if any.
fn preamble(token: Option<&LeaseToken>) -> String {
    Intro::new("attach").lease_token(token.cloned()).line()
}

/// What `--spawn` passes to the host it starts.
#[derive(Debug, Clone, Default)]
pub(crate) struct SpawnOptions {
    pub plugins_dir: Option<PathBuf>,
    pub data_dir: Option<PathBuf>,
}

fn connect(path: &Path) -> Result<UnixStream, AttachError> {
    UnixStream::connect(path).map_err(|source| match source.kind() {
        std::io::ErrorKind::NotFound | std::io::ErrorKind::ConnectionRefused => {
            AttachError::NoHost {
                path: path.to_path_buf(),
            }
        }
        _ => AttachError::Connect {
            path: path.to_path_buf(),
            source,
        },
    })
}

/// Starts `devicerail serve --listen unix:PATH` as a background service
/// (its own session, no terminal, stdin from /dev/null, log beside the
/// socket) and waits until it accepts connections.
fn spawn_host(path: &Path, opts: &SpawnOptions) -> Result<UnixStream, AttachError> {
    let exe = std::env::current_exe().map_err(AttachError::Spawn)?;
    let log = path.with_extension("log");
    if let Some(dir) = path.parent() {
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(dir)
            .map_err(AttachError::Spawn)?;
    }
    let log_file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .mode(0o600)
        .open(&log)
        .map_err(AttachError::Spawn)?;
    let mut listen = std::ffi::OsString::from("unix:");
    listen.push(path);
    let mut cmd = Command::new(exe);
    cmd.arg("serve").arg("--listen").arg(listen);
    if let Some(p) = &opts.plugins_dir {
        cmd.arg("--plugins-dir").arg(p);
    }
    if let Some(d) = &opts.data_dir {
        cmd.arg("--data-dir").arg(d);
    }
    cmd.stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::from(log_file));
    // The child leaves our session so it outlives this process and its
    // terminal.
    devicerail_host_sys::spawn_detached(&mut cmd);
    let mut child = cmd.spawn().map_err(AttachError::Spawn)?;
    tracing::info!(pid = child.id(), socket = %path.display(), log = %log.display(), "started a shared host");
    let deadline = Instant::now() + SPAWN_WAIT;
    loop {
        match connect(path) {
            Ok(s) => return Ok(s),
            Err(AttachError::NoHost { .. }) if Instant::now() < deadline => {
                if let Ok(Some(status)) = child.try_wait() {
                    // It exited: most likely another host won the race.
                    if let Ok(s) = connect(path) {
                        return Ok(s);
                    }
                    return Err(AttachError::Spawn(std::io::Error::other(format!(
                        "the host exited ({status}); see {}",
                        log.display()
                    ))));
                }
                std::thread::sleep(Duration::from_millis(50));
            }
            Err(AttachError::NoHost { .. }) => {
                return Err(AttachError::SpawnTimeout {
                    path: path.to_path_buf(),
                    log,
                });
            }
            Err(e) => return Err(e),
        }
    }
}

/// Bridges stdin/stdout to the host at `socket` (or the default path)
/// until either side closes. With `spawn`, starts a host when none
/// listens.
pub(crate) fn attach(
    socket: Option<&Path>,
    spawn: Option<SpawnOptions>,
) -> Result<(), AttachError> {
    let path = devicerail_host_config::paths::socket_path(socket)?;
    let token = lease_token()?;
    let stream = match (connect(&path), spawn) {
        (Ok(s), _) => s,
        (Err(AttachError::NoHost { .. }), Some(opts)) => spawn_host(&path, &opts)?,
        (Err(e), _) => return Err(e),
    };
    bridge(stream, token.as_ref())
}

/// A lab host on another machine, reached through SSH.
#[derive(Debug, Clone)]
pub(crate) struct Remote {
    /// `user@host`, as `ssh` takes it.
    pub destination: String,
    /// `-o` options for `ssh`.
    pub options: Vec<String>,
    /// The `devicerail` program there.
    pub devicerail: String,
    /// The lab's socket (default: its default).
    pub socket: Option<PathBuf>,
}

/// `word` quoted for the remote shell (`ssh` hands the command line to
/// the login shell of the lab's user).
fn shell_quote(word: &str) -> String {
    format!("'{}'", word.replace('\'', "'\\''"))
}

impl Remote {
    /// The `ssh` command line: batch mode (no password prompts on the
    /// protocol's pipes), no pseudo-terminal, then `devicerail attach`
    /// on the lab.
    fn command(&self) -> Result<Command, AttachError> {
        let mut cmd = Command::new("ssh");
        cmd.args(["-T", "-o", "BatchMode=yes", "-o", "LogLevel=ERROR"]);
        for o in &self.options {
            if !o.contains('=') || o.starts_with('-') {
                return Err(AttachError::SshOption(o.clone()));
            }
            cmd.arg("-o").arg(o);
        }
        let mut remote = format!("{} attach", shell_quote(&self.devicerail));
        if let Some(socket) = &self.socket {
            remote.push_str(" --socket ");
            remote.push_str(&shell_quote(&socket.to_string_lossy()));
        }
        cmd.arg("--").arg(&self.destination).arg(remote);
        Ok(cmd)
    }
}

/// Bridges stdin/stdout to the lab host of `remote`: `ssh` runs
/// `devicerail attach` there with this process's stdin and stdout, so the
/// protocol's bytes pass through SSH untouched and only SSH authenticates.
/// A lease token is not forwarded (SSH does not pass the environment).
pub(crate) fn attach_over_ssh(remote: &Remote) -> Result<(), AttachError> {
    let status = remote
        .command()?
        .stdin(Stdio::inherit())
        .stdout(Stdio::inherit())
        .stderr(Stdio::inherit())
        .status()
        .map_err(AttachError::Ssh)?;
    if status.success() {
        Ok(())
    } else {
        Err(AttachError::SshFailed {
            destination: remote.destination.clone(),
            status,
        })
    }
}

fn bridge(stream: UnixStream, token: Option<&LeaseToken>) -> Result<(), AttachError> {
    let mut to_host = stream.try_clone().map_err(AttachError::Bridge)?;
    to_host
        .write_all(preamble(token).as_bytes())
        .map_err(AttachError::Bridge)?;
    // stdin → host on a thread; when the client closes stdin, the host
    // sees end of input and closes the connection (ending its Session).
    std::thread::Builder::new()
        .name("attach-stdin".into())
        .spawn(move || {
            let mut stdin = std::io::stdin().lock();
            let mut buf = vec![0u8; 64 * 1024];
            loop {
                match stdin.read(&mut buf) {
                    Ok(0) => break,
                    Ok(n) => {
                        if to_host.write_all(&buf[..n]).is_err() {
                            break;
                        }
                    }
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                    Err(_) => break,
                }
            }
            let _ = to_host.shutdown(std::net::Shutdown::Write);
        })
        .map_err(AttachError::Bridge)?;
    // host → stdout here; the host closing its end ends the bridge.
    let mut from_host = stream;
    let mut stdout = std::io::stdout().lock();
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        match from_host.read(&mut buf) {
            Ok(0) => return Ok(()),
            Ok(n) => {
                stdout.write_all(&buf[..n]).map_err(AttachError::Bridge)?;
                stdout.flush().map_err(AttachError::Bridge)?;
            }
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(AttachError::Bridge(e)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_ssh_command_quotes_the_remote_words_and_refuses_stray_flags() {
        let remote = Remote {
            destination: "me@lab".into(),
            options: vec!["Port=2222".into()],
            devicerail: "/opt/dev rail/devicerail".into(),
            socket: Some(PathBuf::from("/run/it's.sock")),
        };
        let cmd = remote.command().expect("command");
        let args: Vec<String> = cmd
            .get_args()
            .map(|a| a.to_string_lossy().into_owned())
            .collect();
        assert_eq!(args[args.len() - 2], "me@lab");
        assert_eq!(
            args[args.len() - 1],
            "'/opt/dev rail/devicerail' attach --socket '/run/it'\\''s.sock'"
        );
        assert!(args.windows(2).any(|w| w == ["-o", "Port=2222"]));
        let bad = Remote {
            options: vec!["-oProxyCommand=evil".into()],
            ..remote
        };
        assert!(matches!(bad.command(), Err(AttachError::SshOption(_))));
    }

    #[test]
    fn the_preamble_presents_the_token_as_one_word() {
        use devicerail_host_core::transport::unix::{ATTACH_PREAMBLE, TOKEN_KEY};
        let token = LeaseToken::new("k".repeat(43)).expect("token");
        let line = preamble(Some(&token));
        assert!(line.starts_with(ATTACH_PREAMBLE) && line.ends_with('\n'));
        let parsed = devicerail_host_core::transport::unix::parse_preamble(
            &line.as_bytes()[ATTACH_PREAMBLE.len()..],
        );
        assert!(parsed.token.is_some());
        assert!(!parsed.said.contains(token.expose()));
        assert!(!preamble(None).contains(TOKEN_KEY));
    }
}
