//! # devicerail-host-sys
//!
//! Every operating-system call of the host that the standard library does
//! not wrap: advisory file locks, the effective user id, the protocol's
//! standard output, non-blocking standard streams ([`stream`]), the
//! open-files limit, signalling a child, the hooks
//! that run in a child between `fork` and `exec`, packet sockets with
//! descriptor passing ([`packet`]), memory shared with a worker process
//! ([`shm`]) and the doorbells of rings in it ([`doorbell`]).
//!
//! The calls go through `rustix`, which wraps them without `unsafe`. What
//! `unsafe` remains is of five kinds, each argued where it stands: turning
//! an inherited descriptor number into a handle (the parent handed it over;
//! it is checked open first), registering a descriptor this crate owns
//! with Tokio's reactor, `CommandExt::pre_exec` hooks, which may
//! only make async-signal-safe calls (every hook here makes only raw system
//! calls: no allocation, no locks), mapping a sealed memory file, and
//! copying into, out of and atomically updating that mapping (bounds
//! checked; no reference to shared bytes ever leaves [`shm`]).
//!
//! What it must never do: hold state, log, or know anything about the
//! protocol. It is a thin, testable layer so that every other host crate can
//! say `#![forbid(unsafe_code)]`.

use std::fs::File;
use std::io;
use std::os::fd::{AsFd, BorrowedFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::net::UnixStream;
use std::os::unix::process::CommandExt;
use std::process::Command;

pub mod doorbell;
pub mod packet;
pub mod shm;
pub mod stream;

use rustix::fs::FlockOperation;
use rustix::io::FdFlags;
use rustix::process::{Pid, Resource, Signal};

/// Whether a non-blocking lock was taken.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Locked {
    /// This process now holds the lock (until the descriptor is closed).
    Taken,
    /// Another open file description holds it.
    Busy,
}

/// Takes an exclusive advisory lock (`flock`) on `file` without waiting.
///
/// The lock lives as long as the open file description: dropping the
/// `File` (or the process exiting, even by `kill -9`) releases it.
pub fn lock_exclusive(file: &File) -> io::Result<Locked> {
    match rustix::fs::flock(file, FlockOperation::NonBlockingLockExclusive) {
        Ok(()) => Ok(Locked::Taken),
        Err(rustix::io::Errno::WOULDBLOCK) => Ok(Locked::Busy),
        Err(e) => Err(e.into()),
    }
}

/// The effective user id of this process.
pub fn effective_uid() -> u32 {
    rustix::process::geteuid().as_raw()
}

/// The id of this process's parent, if it has one.
pub fn parent_pid() -> Option<u32> {
    rustix::process::getppid().map(|p| p.as_raw_nonzero().get().unsigned_abs())
}

/// Moves the protocol's standard output out of everyone's way: returns a
/// close-on-exec duplicate of descriptor 1 for the protocol, then points
/// descriptor 1 at standard error, so a stray `print!` (ours, a plugin's, a
/// library's) lands in the log instead of corrupting the protocol stream.
pub fn take_stdout() -> io::Result<File> {
    let stdout = rustix::stdio::stdout();
    let proto = rustix::io::fcntl_dupfd_cloexec(stdout, 3)?;
    rustix::stdio::dup2_stdout(rustix::stdio::stderr())?;
    Ok(File::from(proto))
}

/// Raises the soft limit of open files to the hard limit (at most 2^20):
/// every socket, pipe and plugin channel is a descriptor. Returns whether
/// the limit is now the hard one.
pub fn raise_open_files_limit() -> bool {
    let mut lim = rustix::process::getrlimit(Resource::Nofile);
    match (lim.current, lim.maximum) {
        (Some(cur), Some(max)) if cur < max => {
            lim.current = Some(max.min(1 << 20));
            rustix::process::setrlimit(Resource::Nofile, lim).is_ok()
        }
        _ => true,
    }
}

/// Sends `SIGKILL` to process `pid`.
///
/// The caller must know that `pid` is its own child and not yet reaped, so
/// the id cannot have been reused by another process.
pub fn kill(pid: u32) -> io::Result<()> {
    let raw = i32::try_from(pid).map_err(|_| io::Error::from(io::ErrorKind::InvalidInput))?;
    let pid = Pid::from_raw(raw).ok_or_else(|| io::Error::from(io::ErrorKind::InvalidInput))?;
    rustix::process::kill_process(pid, Signal::KILL)?;
    Ok(())
}

/// Asks the kernel to `SIGKILL` this process when its parent thread dies,
/// then checks the parent is still `parent` (it may have died before the
/// request was made). Returns `false` when the process is orphaned.
pub fn die_with_parent(parent: u32) -> io::Result<bool> {
    rustix::process::set_parent_process_death_signal(Some(Signal::KILL))?;
    Ok(parent_pid() == Some(parent))
}

/// The conventional name of signal number `sig` among those a crashed
/// process usually dies of (`SIGSEGV`, `SIGABRT`, ...).
pub fn signal_name(sig: i32) -> Option<&'static str> {
    [
        (Signal::ABORT, "SIGABRT"),
        (Signal::SEGV, "SIGSEGV"),
        (Signal::BUS, "SIGBUS"),
        (Signal::KILL, "SIGKILL"),
        (Signal::ILL, "SIGILL"),
        (Signal::FPE, "SIGFPE"),
        (Signal::TERM, "SIGTERM"),
        (Signal::INT, "SIGINT"),
    ]
    .into_iter()
    .find(|(s, _)| s.as_raw() == sig)
    .map(|(_, name)| name)
}

/// Whether `fd` is an open socket.
pub fn is_socket(fd: BorrowedFd<'_>) -> bool {
    rustix::fs::fstat(fd).is_ok_and(|st| {
        rustix::fs::FileType::from_raw_mode(st.st_mode) == rustix::fs::FileType::Socket
    })
}

/// Marks `fd` close-on-exec, so processes this one starts do not inherit it.
pub fn set_cloexec(fd: impl AsFd) -> io::Result<()> {
    rustix::io::fcntl_setfd(fd, FdFlags::CLOEXEC)?;
    Ok(())
}

/// Takes ownership of descriptor `fd`, which this process inherited from
/// its parent as its channel: checks it is an open socket, marks it
/// close-on-exec (so processes this one starts do not inherit it) and wraps
/// it.
///
/// Call it once per inherited number: the parent handed the descriptor
/// over, and nothing else in this process may own it.
pub fn inherited_socket(fd: RawFd) -> io::Result<UnixStream> {
    if fd < 0 {
        return Err(io::Error::from(io::ErrorKind::InvalidInput));
    }
    // SAFETY: the borrow lives only for the two checks below; for a number
    // that is not open the kernel answers EBADF and nothing is touched.
    let borrowed = unsafe { BorrowedFd::borrow_raw(fd) };
    if !is_socket(borrowed) {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("descriptor {fd} is not an open socket"),
        ));
    }
    set_cloexec(borrowed)?;
    // SAFETY: `fd` is open (checked), was inherited from the parent for
    // this purpose, and the caller promises nothing else owns it.
    Ok(unsafe { UnixStream::from_raw_fd(fd) })
}

/// How many threads this process runs (Linux `/proc/self/status`).
pub fn thread_count() -> io::Result<usize> {
    let status = std::fs::read_to_string("/proc/self/status")?;
    status
        .lines()
        .find_map(|l| l.strip_prefix("Threads:"))
        .and_then(|v| v.trim().parse().ok())
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidData, "no Threads line"))
}

/// Sets environment variables of this process while it runs a single
/// thread, so that no other thread can read the environment meanwhile.
/// Refused (nothing set) when the process already runs more than one.
pub fn set_env_single_threaded(vars: &[(String, String)]) -> io::Result<()> {
    if vars.is_empty() {
        return Ok(());
    }
    let threads = thread_count()?;
    if threads != 1 {
        return Err(io::Error::other(format!(
            "the process runs {threads} threads; its environment can only be changed before it starts any"
        )));
    }
    for (k, v) in vars {
        if k.is_empty() || k.contains(['=', '\0']) || v.contains('\0') {
            return Err(io::Error::from(io::ErrorKind::InvalidInput));
        }
        // SAFETY: this process runs one thread (checked just above, and
        // this thread starts none while it loops), so nothing reads the
        // environment concurrently; the name and value are valid (checked).
        unsafe { std::env::set_var(k, v) };
    }
    Ok(())
}

/// Installs `hook` to run in the child between `fork` and `exec`.
fn pre_exec<F>(cmd: &mut Command, hook: F)
where
    F: FnMut() -> io::Result<()> + Send + Sync + 'static,
{
    // SAFETY: every hook given here (the callers below) is made only of
    // async-signal-safe system calls through rustix: no allocation, no
    // locks, no unwinding on the success path.
    unsafe {
        cmd.pre_exec(hook);
    }
}

/// Starts the child in a new session (`setsid`), so it outlives this
/// process and its terminal.
pub fn spawn_detached(cmd: &mut Command) {
    pre_exec(cmd, || {
        rustix::process::setsid()?;
        Ok(())
    });
}

/// Ties the child to this process: the kernel kills it when the thread of
/// this process that spawned it dies, and it exits at once if this process
/// was already gone before that was armed.
///
/// With `channel = Some((from, to))`, the child's descriptor `from` (one
/// this process created for it) becomes descriptor `to`, inheritable across
/// `exec`.
pub fn spawn_tied(cmd: &mut Command, channel: Option<(RawFd, RawFd)>) {
    let parent = std::process::id();
    pre_exec(cmd, move || {
        rustix::process::set_parent_process_death_signal(Some(Signal::KILL))?;
        if parent_pid() != Some(parent) {
            // The spawn fails and the child exits before `exec`.
            return Err(rustix::io::Errno::SRCH.into());
        }
        if let Some((from, to)) = channel {
            // SAFETY: in the forked child both numbers are descriptors this
            // process set up for it (`from` is open; `to` is the agreed
            // number, replaced by dup2); the handles are forgotten, never
            // closed here.
            let from_fd = unsafe { BorrowedFd::borrow_raw(from) };
            if from == to {
                rustix::io::fcntl_setfd(from_fd, FdFlags::empty())?;
            } else {
                let mut target = std::mem::ManuallyDrop::new(unsafe { OwnedFd::from_raw_fd(to) });
                rustix::io::dup2(from_fd, &mut target)?;
            }
        }
        Ok(())
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_lock_on_the_same_file_is_busy() {
        let dir = std::env::temp_dir().join(format!("sys-lock-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("dir");
        let path = dir.join("lock");
        let a = File::create(&path).expect("a");
        let b = File::open(&path).expect("b");
        assert_eq!(lock_exclusive(&a).expect("lock"), Locked::Taken);
        assert_eq!(lock_exclusive(&b).expect("lock"), Locked::Busy);
        drop(a);
        assert_eq!(lock_exclusive(&b).expect("lock"), Locked::Taken);
        std::fs::remove_dir_all(&dir).ok();
    }

    #[test]
    fn the_environment_changes_only_in_a_single_thread() {
        // A second thread, whatever the test harness runs.
        let (tx, rx) = std::sync::mpsc::channel::<()>();
        let other = std::thread::spawn(move || rx.recv());
        assert!(thread_count().expect("threads") > 1);
        let r = set_env_single_threaded(&[("DEVICERAIL_SYS_TEST".into(), "1".into())]);
        drop(tx);
        let _ = other.join();
        assert!(r.is_err());
        assert!(std::env::var_os("DEVICERAIL_SYS_TEST").is_none());
        assert!(set_env_single_threaded(&[]).is_ok());
    }

    #[test]
    fn ids_and_limits() {
        assert_eq!(parent_pid().map(|p| p > 0), Some(true));
        let _ = effective_uid();
        assert!(raise_open_files_limit());
    }
}
