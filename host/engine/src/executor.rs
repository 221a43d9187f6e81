//! Per-plugin executors: every blocking driver call of one plugin runs on
//! that plugin's own bounded pool of OS threads, never on the async
//! runtime's blocking pool, so a plugin that hangs can only exhaust its own
//! capacity. Reading stdin, writing responses, the event store and every
//! other plugin keep their threads.
//!
//! A call the host gave up on (its deadline and grace passed) is
//! *abandoned*: its thread is written off and a replacement may start, so
//! healthy calls keep `workers` threads. Abandoned threads that never
//! return are bounded too: past `stuck` of them the plugin is wedged and
//! refuses new calls until some return.
//!
//! This module must never block an async worker: `submit` only takes a
//! short lock, and results come back through a oneshot channel.

use std::collections::{HashMap, VecDeque};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};

use tokio::sync::oneshot;

/// The bounds of one executor.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Limits {
    /// Threads running healthy (not abandoned) calls at most.
    pub workers: usize,
    /// Calls waiting for a thread at most.
    pub queue: usize,
    /// Abandoned calls still running before the plugin counts as wedged.
    pub stuck: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            workers: 20,
            queue: 256,
            stuck: 32,
        }
    }
}

/// Why a call was not accepted.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SubmitError {
    /// The plugin's queue is full: the call is refused rather than queued
    /// behind a backlog.
    #[error("{queued} calls are already waiting for the plugin's threads")]
    QueueFull {
        /// Calls waiting when this one came.
        queued: usize,
    },
    /// Too many abandoned calls of the plugin never returned; it takes no
    /// more until some do.
    #[error("the plugin has {stuck} calls that never returned")]
    Wedged {
        /// Abandoned calls still running.
        stuck: usize,
    },
    /// No thread could be started and none is left to take the call; the
    /// text is the operating system's reason.
    #[error("the plugin's executor could not start a thread: {0}")]
    Spawn(String),
}

type Job = Box<dyn FnOnce() + Send + 'static>;

#[derive(Default)]
struct State {
    queue: VecDeque<(u64, Job)>,
    /// Running jobs: id → abandoned.
    running: HashMap<u64, bool>,
    threads: usize,
    idle: usize,
    stuck: usize,
    next_id: u64,
}

struct Shared {
    name: String,
    limits: Limits,
    state: Mutex<State>,
    work: Condvar,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// The executor of one plugin; cheap to clone.
#[derive(Clone)]
pub struct Executor {
    shared: Arc<Shared>,
}

impl std::fmt::Debug for Executor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let s = self.shared.lock();
        f.debug_struct("Executor")
            .field("name", &self.shared.name)
            .field("threads", &s.threads)
            .field("stuck", &s.stuck)
            .field("queued", &s.queue.len())
            .finish()
    }
}

/// A submitted call: abandon it when the host stops waiting.
#[derive(Debug)]
pub struct Ticket {
    id: u64,
    executor: Executor,
}

impl Ticket {
    /// The host gave up on the call: a queued call is dropped, a running
    /// one written off (its thread no longer counts against the plugin's
    /// healthy capacity).
    pub fn abandon(&self) {
        let shared = &self.executor.shared;
        let mut s = shared.lock();
        if let Some(pos) = s.queue.iter().position(|(id, _)| *id == self.id) {
            s.queue.remove(pos);
            return;
        }
        if let Some(abandoned) = s.running.get_mut(&self.id)
            && !*abandoned
        {
            *abandoned = true;
            s.stuck += 1;
            tracing::warn!(plugin = %shared.name, stuck = s.stuck, "a driver call did not return after its deadline and grace; its thread is written off");
            if let Err(e) = self.executor.grow(&mut s) {
                tracing::warn!(plugin = %shared.name, "{e}");
            }
        }
    }
}

impl Executor {
    /// An executor named after its plugin (thread names, logs).
    pub(crate) fn new(name: &str, limits: Limits) -> Self {
        Self {
            shared: Arc::new(Shared {
                name: name.to_owned(),
                limits,
                state: Mutex::default(),
                work: Condvar::new(),
            }),
        }
    }

    /// Runs `f` on one of the plugin's threads; its result arrives on the
    /// receiver (closed if `f` panicked or the call was dropped unstarted).
    pub fn submit<T: Send + 'static>(
        &self,
        f: impl FnOnce() -> T + Send + 'static,
    ) -> Result<(Ticket, oneshot::Receiver<T>), SubmitError> {
        let (tx, rx) = oneshot::channel();
        let job: Job = Box::new(move || {
            let _ = tx.send(f());
        });
        let mut s = self.shared.lock();
        let limits = self.shared.limits;
        if s.stuck >= limits.stuck {
            return Err(SubmitError::Wedged { stuck: s.stuck });
        }
        if s.queue.len() >= limits.queue {
            return Err(SubmitError::QueueFull {
                queued: s.queue.len(),
            });
        }
        let id = s.next_id;
        s.next_id += 1;
        s.queue.push_back((id, job));
        if let Err(e) = self.grow(&mut s) {
            if s.threads == s.stuck {
                // No thread will ever take the job.
                s.queue.pop_back();
                return Err(e);
            }
            tracing::warn!(plugin = %self.shared.name, "{e}");
        }
        drop(s);
        self.shared.work.notify_one();
        Ok((
            Ticket {
                id,
                executor: self.clone(),
            },
            rx,
        ))
    }

    /// Starts a thread when queued calls outnumber idle threads and the
    /// healthy threads are below the limit.
    fn grow(&self, s: &mut State) -> Result<(), SubmitError> {
        let healthy = s.threads - s.stuck;
        if s.idle >= s.queue.len() || healthy >= self.shared.limits.workers {
            return Ok(());
        }
        let shared = self.shared.clone();
        let n = s.next_id;
        std::thread::Builder::new()
            .name(format!("plugin-{}-{n}", self.shared.name))
            .spawn(move || worker(&shared))
            .map_err(|e| SubmitError::Spawn(e.to_string()))?;
        s.threads += 1;
        Ok(())
    }

    /// (threads, stuck, queued) right now; only the tests look.
    #[cfg(test)]
    pub(crate) fn load(&self) -> (usize, usize, usize) {
        let s = self.shared.lock();
        (s.threads, s.stuck, s.queue.len())
    }
}

fn worker(shared: &Arc<Shared>) {
    loop {
        let (id, job) = {
            let mut s = shared.lock();
            loop {
                if let Some(next) = s.queue.pop_front() {
                    s.running.insert(next.0, false);
                    break next;
                }
                s.idle += 1;
                s = shared.work.wait(s).unwrap_or_else(|p| p.into_inner());
                s.idle -= 1;
            }
        };
        if catch_unwind(AssertUnwindSafe(job)).is_err() {
            tracing::error!(plugin = %shared.name, "a driver call panicked on the host side");
        }
        let mut s = shared.lock();
        if s.running.remove(&id) == Some(true) {
            s.stuck -= 1;
            tracing::info!(plugin = %shared.name, stuck = s.stuck, "an abandoned driver call returned");
        }
        // A written-off thread that came back is surplus once its
        // replacement runs.
        if s.threads - s.stuck > shared.limits.workers {
            s.threads -= 1;
            return;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::time::Duration;

    fn limits(workers: usize, queue: usize, stuck: usize) -> Limits {
        Limits {
            workers,
            queue,
            stuck,
        }
    }

    #[tokio::test]
    async fn runs_calls_and_returns_results() {
        let e = Executor::new("t", limits(2, 8, 2));
        let mut rxs = Vec::new();
        for i in 0..6 {
            rxs.push(e.submit(move || i * 2).expect("submit").1);
        }
        let mut got = Vec::new();
        for rx in rxs {
            got.push(rx.await.expect("result"));
        }
        assert_eq!(got, [0, 2, 4, 6, 8, 10]);
        assert!(e.load().0 <= 2);
    }

    #[tokio::test]
    async fn abandoned_calls_are_replaced_until_the_plugin_is_wedged() {
        let e = Executor::new("t", limits(1, 8, 2));
        let release = Arc::new(AtomicBool::new(false));
        let hang = |release: Arc<AtomicBool>| {
            move || {
                while !release.load(Ordering::Acquire) {
                    std::thread::sleep(Duration::from_millis(5));
                }
            }
        };
        let (t1, _rx1) = e.submit(hang(release.clone())).expect("first");
        std::thread::sleep(Duration::from_millis(50));
        t1.abandon();
        // The written-off thread is replaced: a healthy call still runs.
        let (_, rx) = e.submit(|| 7).expect("healthy");
        assert_eq!(rx.await.expect("ran"), 7);
        let (t2, _rx2) = e.submit(hang(release.clone())).expect("second");
        std::thread::sleep(Duration::from_millis(50));
        t2.abandon();
        assert_eq!(e.submit(|| 1).err(), Some(SubmitError::Wedged { stuck: 2 }));
        // When they return, the plugin recovers.
        release.store(true, Ordering::Release);
        for _ in 0..100 {
            if e.load().1 == 0 {
                break;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        let (_, rx) = e.submit(|| 9).expect("recovered");
        assert_eq!(rx.await.expect("ran"), 9);
    }

    #[tokio::test]
    async fn a_queued_call_can_be_abandoned_before_it_starts() {
        let e = Executor::new("t", limits(1, 8, 8));
        let release = Arc::new(AtomicBool::new(false));
        let r = release.clone();
        let (_t, _rx) = e
            .submit(move || {
                while !r.load(Ordering::Acquire) {
                    std::thread::sleep(Duration::from_millis(5));
                }
            })
            .expect("busy");
        let (queued, rx) = e.submit(|| 1).expect("queued");
        queued.abandon();
        release.store(true, Ordering::Release);
        assert!(rx.await.is_err(), "the abandoned call never ran");
        assert_eq!(
            e.submit(|| ()).map(|_| ()).err(),
            None,
            "the queue is usable"
        );
    }

    #[test]
    fn a_full_queue_refuses() {
        let e = Executor::new("t", limits(1, 1, 8));
        let release = Arc::new(AtomicBool::new(false));
        let r = release.clone();
        let _busy = e
            .submit(move || {
                while !r.load(Ordering::Acquire) {
                    std::thread::sleep(Duration::from_millis(5));
                }
            })
            .expect("busy");
        std::thread::sleep(Duration::from_millis(50));
        let _queued = e.submit(|| ()).expect("queued");
        assert!(matches!(
            e.submit(|| ()).err(),
            Some(SubmitError::QueueFull { queued: 1 })
        ));
        release.store(true, Ordering::Release);
    }
}
