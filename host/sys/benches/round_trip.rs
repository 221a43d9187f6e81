//! What one call and its reply cost across the worker boundary before any
//! of the host's own code runs: the kernel's floor under process
//! isolation. A caller sends a 64-byte call and waits for a reply of the
//! size of an observation's JSON (3 KB, the mock's 12-node screen); the
//! answering side waits for the call and replies. Three ways, alternating:
//!
//! * `SOCK_SEQPACKET` between two processes (the worker channel's
//!   transport, `devicerail_host_sys::packet`): one `sendmsg` and one
//!   blocking `recvmsg` each way;
//! * shared memory and a futex between two processes (a `SharedRegion` both
//!   map; each side stores a sequence number, wakes the other and copies
//!   the reply through the region): what a ring with futex doorbells would
//!   pay;
//! * two threads of one process and a futex (roughly an inline plugin's
//!   hand-off to its executor and back).
//!
//! Wall time and CPU (both sides, user + system) per round trip. Every
//! round trip wakes a sleeping peer each way, so on a virtual machine the
//! wake-ups (inter-processor interrupts) dominate all three.
//!
//! Run: `cargo bench -p devicerail-host-sys --bench round_trip` (`n=N`
//! round trips per way, default 100,000; `rounds=R`, default 2).

#![allow(missing_docs)]

use std::os::fd::{AsFd, AsRawFd, FromRawFd, OwnedFd};
use std::process::Command;
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Instant;

use devicerail_host_sys::packet::{self, PacketSocket};
use devicerail_host_sys::shm::SharedRegion;
use rustix::thread::futex;

const CALL: usize = 64;
const REPLY: usize = 3000;
/// The descriptor a child takes its socket or region on.
const CHILD_FD: i32 = 3;

/// CPU time of this process and its waited-for children (user + system),
/// in microseconds, from `/proc/self/stat`.
fn cpu_all() -> f64 {
    let stat = std::fs::read_to_string("/proc/self/stat").expect("/proc/self/stat");
    // Fields after the command's closing parenthesis, from the state (3).
    let rest = stat.rsplit_once(')').map_or("", |(_, r)| r);
    let fields: Vec<f64> = rest
        .split_whitespace()
        .map(|f| f.parse().unwrap_or(0.0))
        .collect();
    // utime, stime, cutime, cstime: fields 14 to 17, here 11 to 14.
    let ticks: f64 = fields.get(11..15).map_or(0.0, |t| t.iter().sum());
    ticks * 1e6 / rustix::param::clock_ticks_per_second() as f64
}

/// The region's first two header words as 32-bit futex words (the call's
/// and the reply's sequence numbers), as the worker's rings use them.
fn words(region: &SharedRegion) -> (&AtomicU32, &AtomicU32) {
    (
        region.word32(0).expect("a header word"),
        region.word32(1).expect("a header word"),
    )
}

/// A futex between processes (`shared`) or between threads of this one.
fn flags(shared: bool) -> futex::Flags {
    if shared {
        futex::Flags::empty()
    } else {
        futex::Flags::PRIVATE
    }
}

/// Waits until `w` holds `want`, sleeping on the futex.
fn wait_for(w: &AtomicU32, want: u32, shared: bool) {
    loop {
        let v = w.load(Ordering::Acquire);
        if v == want {
            return;
        }
        let _ = futex::wait(w, flags(shared), v, None);
    }
}

fn wake(w: &AtomicU32, shared: bool) {
    let _ = futex::wake(w, flags(shared), 1);
}

fn child(kind: &str, n: u32) {
    let reply = vec![7u8; REPLY];
    match kind {
        "socket" => {
            let s = PacketSocket::inherit(CHILD_FD).expect("the socket");
            let mut buf = vec![0u8; 64 << 10];
            for _ in 0..n {
                s.recv(&mut buf).expect("a call");
                s.send(&[&reply], &[]).expect("reply");
            }
        }
        "futex" => {
            // SAFETY: the parent placed this process's region at
            // `CHILD_FD` (`spawn_tied`); nothing else owns it.
            let fd = unsafe { OwnedFd::from_raw_fd(CHILD_FD) };
            let region = SharedRegion::map(fd).expect("the region");
            let (call, answer) = words(&region);
            for i in 1..=n {
                wait_for(call, i, true);
                region.write(0, &reply).expect("in the region");
                answer.store(i, Ordering::Release);
                wake(answer, true);
            }
        }
        other => panic!("unknown child {other}"),
    }
}

fn spawn(kind: &str, n: u32, fd: std::os::fd::BorrowedFd<'_>) -> std::process::Child {
    let exe = std::env::current_exe().expect("this bench");
    let mut cmd = Command::new(exe);
    cmd.arg(format!("child={kind}")).arg(format!("n={n}"));
    devicerail_host_sys::spawn_tied(&mut cmd, Some((fd.as_raw_fd(), CHILD_FD)));
    cmd.spawn().expect("the answering process")
}

fn report(what: &str, n: u32, t0: Instant, c0: f64) -> (f64, f64) {
    let wall = t0.elapsed().as_secs_f64() * 1e6 / f64::from(n);
    let cpu = (cpu_all() - c0) / f64::from(n);
    println!("{what}: {wall:.1} us per round trip, CPU {cpu:.1} us (both sides)");
    (wall, cpu)
}

fn socket(n: u32) -> (f64, f64) {
    let (mine, theirs) = packet::pair().expect("a pair");
    let mut child = spawn("socket", n, theirs.as_fd());
    drop(theirs);
    let call = [1u8; CALL];
    let mut buf = vec![0u8; 64 << 10];
    let (t0, c0) = (Instant::now(), cpu_all());
    for _ in 0..n {
        mine.send(&[&call], &[]).expect("call");
        let r = mine.recv(&mut buf).expect("a reply");
        assert_eq!(r.len, REPLY);
    }
    child.wait().expect("the child");
    report("SOCK_SEQPACKET, two processes", n, t0, c0)
}

fn shared_futex(n: u32) -> (f64, f64) {
    let region = SharedRegion::create("round-trip", 64 << 10).expect("a region");
    let mut child = spawn("futex", n, region.fd());
    let (call, answer) = words(&region);
    let (t0, c0) = (Instant::now(), cpu_all());
    for i in 1..=n {
        call.store(i, Ordering::Release);
        wake(call, true);
        wait_for(answer, i, true);
        let got = region.read(0, REPLY).expect("the reply");
        assert_eq!(got.len(), REPLY);
    }
    child.wait().expect("the child");
    report("shared memory + futex, two processes", n, t0, c0)
}

fn threads(n: u32) -> (f64, f64) {
    let call = Arc::new(AtomicU32::new(0));
    let answer = Arc::new(AtomicU32::new(0));
    let slot = Arc::new(std::sync::Mutex::new(Vec::new()));
    let (t0, c0) = (Instant::now(), cpu_all());
    let (c, a, s) = (call.clone(), answer.clone(), slot.clone());
    let h = std::thread::spawn(move || {
        let reply = vec![7u8; REPLY];
        for i in 1..=n {
            wait_for(&c, i, false);
            *s.lock().unwrap_or_else(|p| p.into_inner()) = reply.clone();
            a.store(i, Ordering::Release);
            wake(&a, false);
        }
    });
    for i in 1..=n {
        call.store(i, Ordering::Release);
        wake(&call, false);
        wait_for(&answer, i, false);
        let got = std::mem::take(&mut *slot.lock().unwrap_or_else(|p| p.into_inner()));
        assert_eq!(got.len(), REPLY);
    }
    h.join().expect("the thread");
    report("futex, two threads of one process", n, t0, c0)
}

fn arg<T: std::str::FromStr>(args: &[String], name: &str) -> Option<T> {
    args.iter()
        .find_map(|a| a.strip_prefix(name)?.strip_prefix('=')?.parse().ok())
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let n: u32 = arg(&args, "n").unwrap_or(100_000);
    if let Some(kind) = arg::<String>(&args, "child") {
        child(&kind, n);
        return;
    }
    let rounds: usize = arg(&args, "rounds").unwrap_or(2);
    let mut best = [(f64::MAX, f64::MAX); 3];
    for _ in 0..rounds {
        for (i, r) in [socket(n), shared_futex(n), threads(n)]
            .into_iter()
            .enumerate()
        {
            best[i] = (best[i].0.min(r.0), best[i].1.min(r.1));
        }
    }
    println!();
    println!(
        "| round trip, {CALL} B call, {REPLY} B reply (best of {rounds}) | wall (us) | CPU (us) |"
    );
    println!("| --- | ---: | ---: |");
    for (name, (wall, cpu)) in [
        "`SOCK_SEQPACKET`, two processes",
        "shared memory + futex, two processes",
        "futex, two threads of one process",
    ]
    .into_iter()
    .zip(best)
    {
        println!("| {name} | {wall:.1} | {cpu:.1} |");
    }
}
