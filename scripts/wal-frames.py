#!/usr/bin/env python3
"""Counts the pages each durable commit of `device.observe` writes, by table.

Starts `devicerail serve` with the mock plugin (process isolation) in a
temporary data directory, records N observations (screenshot + UI
snapshot) one at a time, stops the host with SIGKILL (so the write-ahead
log is left as the commits wrote it), then reads the log: frames per
commit, and for the last commits which b-tree each written page belongs
to (SQLite's `dbstat`). Every frame is a 4 KiB write the commit's fsync
waits for.

Usage: wal-frames.py DEVICERAIL_BINARY MOCK_PLUGIN_SO [N]
e.g.   scripts/wal-frames.py target/release/devicerail \
           target/release/libdevicerail_plugin_mock.so 3000
"""

import collections
import json
import os
import shutil
import signal
import sqlite3
import struct
import subprocess
import sys
import tempfile

FEATURES = [
    "events.snapshot.v1",
    "request.control.v1",
    "device.routing.v1",
    "observation.uiSnapshot.v1",
]


def record(binary, plugin, n, root):
    plugins = os.path.join(root, "plugins")
    data = os.path.join(root, "data")
    os.makedirs(plugins)
    shutil.copy(plugin, plugins)
    config = os.path.join(root, "config.toml")
    with open(config, "w") as f:
        f.write('[plugins.mock]\nisolation = "process"\n')
    host = subprocess.Popen(
        [binary, "serve", "--config", config, "--plugins-dir", plugins, "--data-dir", data],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )

    def call(method, params=None, rid="x"):
        msg = {"jsonrpc": "2.0", "id": rid, "method": method}
        if params:
            msg["params"] = params
        host.stdin.write((json.dumps(msg) + "\n").encode())
        host.stdin.flush()
        answer = json.loads(host.stdout.readline())
        if "error" in answer:
            sys.exit(f"{method}: {answer['error']}")
        return answer

    call("system.hello", {
        "client": {"name": "wal-frames", "version": "0"},
        "protocol": {"ranges": [{"major": 1, "minMinor": 0, "maxMinor": 5}]},
        "features": {"optional": FEATURES},
    })
    call("device.connect")
    call("session.start")
    for i in range(n):
        call("device.observe", rid=f"o{i}")
    os.kill(host.pid, signal.SIGKILL)
    host.wait()
    # Copy before reading: opening the store would fold the log into it.
    copy = os.path.join(root, "copy")
    os.makedirs(copy)
    for name in ("events.sqlite3", "events.sqlite3-wal"):
        shutil.copy(os.path.join(data, name), copy)
    return copy


def commits_of(wal_path):
    wal = open(wal_path, "rb").read()
    _magic, _version, page_size, _ckpt, salt1, salt2, _c1, _c2 = struct.unpack(">IIIIIIII", wal[:32])
    off, commits, current = 32, [], []
    while off + 24 + page_size <= len(wal):
        page, commit, s1, s2 = struct.unpack(">IIII", wal[off:off + 16])
        if (s1, s2) != (salt1, salt2):
            break
        current.append(page)
        if commit:
            commits.append(current)
            current = []
        off += 24 + page_size
    return page_size, commits


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    binary, plugin = sys.argv[1], sys.argv[2]
    n = int(sys.argv[3]) if len(sys.argv) > 3 else 3000
    with tempfile.TemporaryDirectory() as root:
        copy = record(binary, plugin, n, root)
        page_size, commits = commits_of(os.path.join(copy, "events.sqlite3-wal"))
        db = sqlite3.connect(os.path.join(copy, "events.sqlite3"))
        owner = {page: (name, kind) for name, page, kind in
                 db.execute("SELECT name, pageno, pagetype FROM dbstat")}
        frames = sum(len(c) for c in commits)
        print(f"page size {page_size}; {len(commits)} commits in the log, "
              f"{frames / max(len(commits), 1):.2f} frames per commit")
        hist = collections.Counter(len(c) for c in commits)
        print("frames per commit (frames: commits):", dict(sorted(hist.items())))
        last = commits[-500:]
        kinds = collections.Counter()
        for c in last:
            for page in c:
                kinds[owner.get(page, ("?", "?"))] += 1
        print(f"pages written per commit, last {len(last)} commits:")
        for (name, kind), count in kinds.most_common():
            print(f"  {count / len(last):5.2f}  {name} ({kind})")
        (avg_event,) = db.execute("SELECT avg(length(json)) FROM events").fetchone()
        print(f"event JSON: {avg_event:.0f} bytes on average")


if __name__ == "__main__":
    main()
