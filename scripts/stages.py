#!/usr/bin/env python3
"""Splits a `perf script` of the serve bench's `profile=N` run into stages.

Reads `perf script -F comm,pid,tid,ip,sym` output (with call chains) on
stdin; the host's and its worker's pids and the observation count are
arguments. Every sample of the host or the worker is put in one stage, by
the first rule below that its call chain matches; the table gives each
stage's share of host + worker CPU and its microseconds per observation
(samples x sampling period / observations).

Usage: stages.py HOST_PID WORKER_PID OBSERVATIONS PERIOD_US < perf.script
"""

import collections
import re
import sys

# (stage, where to look: "any" frame of the chain or the "leaf", pattern).
# Order matters: a commit's fsync owns its kernel work (its I/O waits too);
# a thread parked or woken is a handoff whatever the thread does.
RULES = [
    ("durable commit: fsync and the block device (kernel)", "any",
     r"fsync|fdatasync|sync_file|jbd2|blk_|virtio|submit_bio|io_schedule|folio_wait"),
    ("handoffs: waking and switching threads (kernel scheduler, futex, eventfd)", "leaf",
     r"finish_task_switch|try_to_wake_up|__schedule|futex|eventfd|ep_poll|epoll|"
     r"_raw_spin_unlock_irq|hrtimer|irqentry_exit|do_syscall_64$|entry_SYSCALL"),
    ("event store: SQLite statements and WAL writes", "any",
     r"sqlite3|rusqlite|^wal[A-Z]|pager|[Bb]tree|event_store::writer"),
    ("sha256 of Evidence", "any", r"sha2::|sha256"),
    ("UI snapshot compression", "any", r"zstd|snapshot_codec|ZSTD"),
    ("mock driver: drawing and encoding its PNG", "any",
     r"png::|fdeflate|miniz|deflate|crc32|image::|tiny_skia|plugin_mock::screen"),
    ("worker IPC: socket send and receive (kernel)", "any",
     r"unix_dgram|unix_stream|sock_|skb|__sys_sendmsg|__sys_recvmsg|recvmsg|sendmsg"),
    ("client pipe: stdin read, stdout write (kernel)", "any",
     r"pipe_read|pipe_write|anon_pipe"),
    ("JSON decode", "any", r"serde_json::de|Deserialize|::deserialize|from_slice|from_str|from_value"),
    ("JSON encode", "any", r"serde_json::ser|Serialize|::serialize|to_vec|to_writer|zmij|ryu|itoa"),
    ("memory: allocation and copies", "leaf",
     r"malloc|free|realloc|_int_|unlink_chunk|memmove|memcpy|memset|memcmp|page_fault|clear_page"),
]
COMPILED = [(n, w, re.compile(p)) for n, w, p in RULES]
OTHER = "other: runtime, dispatch, leases, bookkeeping"


def stacks(lines):
    cur = None
    for raw in lines:
        line = raw.rstrip("\n")
        if not line.strip():
            if cur:
                yield cur
            cur = None
            continue
        if cur is None:
            parts = line.split()
            pid = parts[1].split("/")[0] if len(parts) > 1 else ""
            cur = (parts[0], pid, [])
            continue
        fields = line.strip().split(None, 1)
        cur[2].append(fields[1] if len(fields) > 1 else "?")
    if cur:
        yield cur


def stage(frames):
    for name, where, pat in COMPILED:
        if where == "leaf":
            if frames and pat.search(frames[0]):
                return name
        elif any(pat.search(f) for f in frames):
            return name
    return OTHER


def main():
    host, worker, n, period = sys.argv[1], sys.argv[2], int(sys.argv[3]), float(sys.argv[4])
    count = collections.Counter()
    for comm, pid, frames in stacks(sys.stdin):
        side = {host: "host", worker: "worker"}.get(pid)
        if side is None:
            continue
        count[(stage(frames), side)] += 1
    total = sum(count.values())
    if total == 0:
        sys.exit("no samples of the host or its worker")
    names = [r[0] for r in RULES] + [OTHER]
    print("| stage | host us/obs | worker us/obs | share |")
    print("| --- | ---: | ---: | ---: |")
    for name in sorted(names, key=lambda s: -(count[(s, "host")] + count[(s, "worker")])):
        h, w = count[(name, "host")], count[(name, "worker")]
        if h + w == 0:
            continue
        print(f"| {name} | {h * period / n:.0f} | {w * period / n:.0f} | {100 * (h + w) / total:.0f} % |")
    h = sum(v for (s, side), v in count.items() if side == "host")
    w = total - h
    print(f"| **total** | {h * period / n:.0f} | {w * period / n:.0f} | 100 % |")


if __name__ == "__main__":
    main()
