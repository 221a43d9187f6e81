"""Smoke suite: the host driven by the official Python client from PyPI.

`devicerail-client` validates every request and every response against the
protocol's bundled JSON Schemas (always on; it has no switch), and any frame
it finds invalid fails the whole connection, so every passing call here is
also a schema check of what the host sent.

Run by `host/cli/tests/python_client.rs` with the venv that `.ci/run` creates:

    DEVICERAIL_BIN=... DEVICERAIL_PLUGINS_DIR=... python smoke_session.py -v

DEVICERAIL_PLUGINS_DIR must hold the mock plugin (not group- or
world-writable). Each test starts its own host on a fresh data directory.
"""

from __future__ import annotations

import asyncio
import os
import tempfile
import unittest
import uuid
from typing import Any

import devicerail
from devicerail import (
    DeviceRailClient,
    FeatureNotNegotiatedError,
    RpcRemoteError,
    default_hello,
)

EXPECTED_CLIENT_VERSION = "0.3.8"
ALL_FEATURES = sorted(default_hello()["features"]["optional"])
WAIT = 60.0


def selector(**fields: Any) -> dict[str, Any]:
    return {"kind": "selector", "selector": fields}


def action(name: str, arguments: Any, **extra: Any) -> dict[str, Any]:
    return {"id": str(uuid.uuid4()), "name": name, "arguments": arguments, **extra}


class Host:
    """A host spawned over stdio, with the HelloResult the client returned."""

    def __init__(self, client: DeviceRailClient, hello_result: dict[str, Any], data: tempfile.TemporaryDirectory[str]):
        self.client = client
        self.hello = hello_result
        self._data = data

    async def call(self, method: str, params: Any = None, **kw: Any) -> Any:
        return await asyncio.wait_for(self.client.call(method, params, **kw), WAIT)

    async def error(self, method: str, params: Any = None, **kw: Any) -> dict[str, Any]:
        """The `error` object of a call that must fail remotely."""
        try:
            result = await self.call(method, params, **kw)
        except RpcRemoteError as e:
            assert self.client.state == "ready", "a remote error keeps the connection"
            return e.rpc_error
        raise AssertionError(f"{method} succeeded: {result!r}")

    async def close(self) -> int | None:
        process = self.client._process  # the exit status, to check a clean EOF shutdown
        await self.client.close()
        self._data.cleanup()
        return process.returncode


async def start(hello: dict[str, Any] | None = None, faults: bool = False) -> Host:
    binary = os.environ["DEVICERAIL_BIN"]
    plugins = os.environ["DEVICERAIL_PLUGINS_DIR"]
    data = tempfile.TemporaryDirectory(prefix="devicerail-py-")
    env = dict(os.environ)
    env.setdefault("RUST_LOG", "info")
    env.pop("DEVICERAIL_MOCK_FAULTS", None)
    if faults:
        env["DEVICERAIL_MOCK_FAULTS"] = "1"
    process = await asyncio.create_subprocess_exec(
        binary, "serve", "--plugins-dir", plugins, "--data-dir", os.path.join(data.name, "data"),
        stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE, env=env, limit=1024 * 1024 + 2,
    )
    client = DeviceRailClient(process, max_frame_bytes=1024 * 1024, max_pending_requests=256,
                              close_grace_seconds=7.0, stderr_tail_bytes=64 * 1024)
    try:
        result = await asyncio.wait_for(client.hello(hello or default_hello()), WAIT)
    except BaseException:
        await client.close()
        data.cleanup()
        raise
    return Host(client, result, data)


async def events_of(host: Host, session_id: str) -> list[dict[str, Any]]:
    events: list[dict[str, Any]] = []
    params: dict[str, Any] = {"sessionId": session_id, "limit": 50}
    while True:
        batch = await host.call("events.list", params)
        events.extend(batch)
        if len(batch) < 50:
            return events
        params = {**params, "afterSequence": batch[-1]["sequence"]}


def outcome_of(events: list[dict[str, Any]], call_id: str) -> dict[str, Any]:
    for e in events:
        p = e["payload"]
        if p["type"] == "actionCompleted" and p["callId"] == call_id:
            return p["outcome"]
    raise AssertionError(f"no actionCompleted for {call_id}")


class SmokeSession(unittest.IsolatedAsyncioTestCase):
    def test_client_is_the_pinned_release(self) -> None:
        self.assertEqual(devicerail.__version__, EXPECTED_CLIENT_VERSION)

    async def test_a_whole_session_with_semantic_actions(self) -> None:
        host = await start()
        c = host
        self.assertEqual(host.hello["protocol"]["selected"], {"major": 1, "minor": 5})
        self.assertEqual(host.hello["transport"], {"kind": "stdio", "framing": "ndjson"})
        self.assertEqual(sorted(host.hello["features"]["enabled"]), ALL_FEATURES)
        described = await c.call("system.describe")
        self.assertEqual(described["connection"], host.hello)
        self.assertEqual(described["client"]["name"], "devicerail-python")

        listed = await c.call("devices.list")
        self.assertEqual([d["id"] for d in listed["devices"]], ["mock-1"])
        await c.call("device.select", {"deviceId": "mock-1"})
        device = await c.call("device.connect", timeout_ms=30_000)
        self.assertTrue(device["connected"])
        caps = await c.call("device.capabilities", timeout_ms=30_000)
        names = {a["name"] for a in caps}
        self.assertTrue({"tap", "setElementValue", "tapElement", "waitForElement"} <= names, names)

        session = await c.call("session.start")
        sid = session["id"]
        self.assertEqual((await c.call("session.current"))["sessionId"], sid)
        observation = await c.call("device.observe", timeout_ms=30_000)
        self.assertIn("uiSnapshot", observation)

        for name, arguments in [
            ("setElementValue", {"target": selector(identifier="username"), "value": "ada"}),
            ("setElementValue", {"target": selector(identifier="password"), "value": "pw"}),
            ("tapElement", {"target": selector(role="button", name="Sign in")}),
        ]:
            result = await c.call("device.execute", action(name, arguments, actionTimeoutMs=20_000),
                                  timeout_ms=30_000)
            self.assertIn(result["execution"]["mode"], ("nativeSemantic", "webSemantic"), name)
        waited = await c.call("device.execute", action(
            "waitForElement", {"selector": {"identifier": "sign-out"}, "condition": "visible"}))
        self.assertTrue(waited["output"]["matched"])

        tree = await c.call("ui.snapshot.get", {"observationId": observation["id"]})
        self.assertEqual(len(tree["nodes"]), observation["uiSnapshot"]["nodeCount"])

        stream_id = str(uuid.uuid4())
        await c.call("media.stream.start", {"streamId": stream_id, "kind": "screenshot"})
        frame = await c.call("media.stream.capture", {"streamId": stream_id, "frameIndex": 1},
                             timeout_ms=30_000)
        self.assertEqual(frame["frame"]["frameIndex"], 1)
        self.assertEqual((await c.call("media.stream.end", {"streamId": stream_id}))["frameCount"], 1)

        opened = await c.call("events.stream.open", {"sessionId": sid, "originPolicy": {"kind": "absent"}})
        self.assertTrue(opened["endpoint"].startswith("ws://127.0.0.1:"))

        recorded = await c.call("verdict.record", {"verdict": {
            "status": "pass", "summary": "Signed in; sign-out visible.",
            "evidence": [observation["uiSnapshot"]["evidence"]]}})
        self.assertEqual(recorded["event"]["payload"]["type"], "verdictRecorded")

        ended = await c.call("session.end", {"outcome": "completed", "reason": "smoke"})
        self.assertEqual(ended["state"], "ended")
        self.assertIn(sid, [s["id"] for s in await c.call("sessions.list")])

        exported: list[dict[str, Any]] = []
        params: dict[str, Any] = {"sessionId": sid, "limit": 3}
        while True:
            page = await c.call("session.export", params)
            exported.extend(page["events"])
            if page.get("nextAfterSequence") is None:
                break
            params = {**params, "afterSequence": page["nextAfterSequence"]}
        whole = await c.call("session.export", {"sessionId": sid})
        self.assertEqual(exported, whole["events"])
        self.assertEqual(len(exported), ended["eventCount"])
        kinds = [e["payload"]["type"] for e in exported]
        self.assertEqual(kinds[0], "sessionStarted")
        self.assertEqual(kinds[-1], "sessionEnded")
        for kind in ("observationCaptured", "actionStarted", "actionCompleted", "mediaStreamStarted",
                     "mediaFrameCaptured", "mediaStreamEnded", "verdictRecorded"):
            self.assertIn(kind, kinds)
        self.assertEqual(await events_of(host, sid), exported)

        cleared = await c.call("events.clear", {"sessionId": sid})
        self.assertEqual(cleared, {"deleted": True, "sessionId": sid})
        self.assertEqual((await c.call("device.disconnect", timeout_ms=30_000))["disconnected"], True)
        self.assertEqual(await host.close(), 0, "the host exits 0 on stdin EOF")

    async def test_errors_carry_codes_retryable_and_details(self) -> None:
        host = await start()
        e = await host.error("session.current")
        self.assertEqual((e["code"], e["data"]["code"], e["data"]["retryable"]), (-32005, "session_required", True))
        self.assertEqual(e["data"]["details"], {"requiredMethod": "session.start"})
        e = await host.error("device.select", {"deviceId": "mock-9"})
        self.assertEqual((e["code"], e["data"]["code"]), (-32011, "device_not_found"))
        self.assertEqual(e["data"]["details"], {"deviceId": "mock-9"})
        e = await host.error("device.observe")
        self.assertEqual(e["data"]["code"], "session_required")
        await host.call("session.start")
        e = await host.error("device.observe")
        self.assertEqual((e["data"]["code"], e["data"]["details"]), ("device_not_connected", {"deviceId": "mock-1"}))
        await host.call("device.connect")
        e = await host.error("session.start")
        self.assertEqual((e["code"], e["data"]["code"]), (-32006, "session_already_active"))
        e = await host.error("device.execute", action("fly", {}))
        self.assertEqual(e["data"]["details"], {"action": "fly"})
        e = await host.error("device.execute", action("tap", {"x": "left"}))
        self.assertEqual(e["data"]["code"], "invalid_arguments")
        tap = action("tap", {"x": 1, "y": 1})
        await host.call("device.execute", tap)
        e = await host.error("device.execute", tap)
        self.assertEqual((e["data"]["code"], e["data"]["details"]), ("duplicate_action_call", {"callId": tap["id"]}))
        e = await host.error("device.execute", action("findElement", {"selector": {"identifier": "nope"}}))
        self.assertEqual(e["data"]["code"], "element_not_found")
        e = await host.error("ui.snapshot.get", {"observationId": str(uuid.uuid4())})
        self.assertEqual((e["code"], e["data"]["code"]), (-32017, "ui_snapshot_not_found"))
        e = await host.error("session.export", {"limit": 2})
        self.assertEqual(e["data"]["code"], "session_active")
        self.assertEqual(await host.close(), 0)

    async def test_media_streams_record_observations_and_keep_their_limits(self) -> None:
        """The reference daemon's event log and admission limits for media streams."""
        host = await start()
        await host.call("device.connect")
        sid = (await host.call("session.start"))["id"]
        a, b, c = (str(uuid.uuid4()) for _ in range(3))
        await host.call("media.stream.start", {"streamId": a, "kind": "screenshot"})
        frame = (await host.call("media.stream.capture", {"streamId": a, "frameIndex": 1}))["frame"]
        retried = (await host.call("media.stream.capture", {"streamId": a, "frameIndex": 1}))["frame"]
        self.assertEqual(retried, frame, "an exact retry returns the committed frame")
        # A capture right after the previous one: the rate limit (a capture
        # and its commit take a few ms, so one of the next tries lands within
        # 50 ms of the one before, even on a slow disk).
        frames = 1
        while True:
            try:
                await host.call("media.stream.capture", {"streamId": a, "frameIndex": frames + 1})
                frames += 1
                self.assertLess(frames, 100, "no capture was refused for the rate limit")
            except RpcRemoteError as refused:
                e = refused.rpc_error
                break
        self.assertEqual((e["code"], e["data"]["code"], e["data"]["retryable"]),
                         (-32016, "media_capture_rate_limited", True))
        self.assertEqual(set(e["data"]["details"]), {"streamId", "retryAfterMs"})
        self.assertEqual(e["data"]["details"]["streamId"], a)
        self.assertTrue(1 <= e["data"]["details"]["retryAfterMs"] <= 50, e)
        # A third open stream: the active limit.
        await host.call("media.stream.start", {"streamId": b, "kind": "screenshot"})
        e = await host.error("media.stream.start", {"streamId": c, "kind": "screenshot"})
        self.assertEqual((e["code"], e["data"]["code"], e["data"]["retryable"], e["data"]["details"]),
                         (-32016, "media_stream_active_limit", True, {"limit": 2}))
        self.assertEqual(await host.call("media.stream.end", {"streamId": a}), {"streamId": a, "frameCount": frames})
        await host.call("media.stream.end", {"streamId": b})
        events = await events_of(host, sid)
        self.assertEqual([e["payload"]["type"] for e in events],
                         ["sessionStarted", "mediaStreamStarted"]
                         + ["observationCaptured", "mediaFrameCaptured"] * frames
                         + ["mediaStreamStarted", "mediaStreamEnded", "mediaStreamEnded"])
        observation = events[2]["payload"]["observation"]
        self.assertEqual(observation["screenshot"], frame["evidence"])
        self.assertIn("uiSnapshot", observation, "the frame's Observation carries the negotiated UI tree")
        self.assertEqual(events[2]["requestId"], events[3]["requestId"])
        # Eight streams a Session, ended ones included.
        for _ in range(6):
            s = str(uuid.uuid4())
            await host.call("media.stream.start", {"streamId": s, "kind": "screenshot"})
            await host.call("media.stream.end", {"streamId": s})
        e = await host.error("media.stream.start", {"streamId": c, "kind": "screenshot"})
        self.assertEqual((e["code"], e["data"]["code"], e["data"]["retryable"], e["data"]["details"]),
                         (-32016, "media_stream_session_limit", False, {"limit": 8}))
        self.assertEqual(await host.close(), 0)

    async def test_features_the_client_checks_itself(self) -> None:
        hello = default_hello()
        hello["protocol"]["ranges"] = [{"major": 1, "minMinor": 0, "maxMinor": 0}]
        hello["features"]["optional"] = []
        host = await start(hello)
        self.assertEqual(host.hello["protocol"]["selected"], {"major": 1, "minor": 0})
        self.assertEqual(host.hello["features"]["enabled"], [])
        with self.assertRaises(FeatureNotNegotiatedError):
            await host.call("devices.list")
        await host.call("device.connect")
        await host.call("session.start")
        observation = await host.call("device.observe")
        self.assertNotIn("uiSnapshot", observation, "no 1.5 fields at 1.0")
        self.assertEqual(await host.close(), 0)

    async def test_concurrent_calls_on_one_connection(self) -> None:
        host = await start(faults=True)
        await host.call("device.connect")
        await host.call("session.start")
        calls = []
        for i in range(6):
            calls.append(host.call("device.execute", action("sleep", {"ms": 200})))
            calls.append(host.call("system.describe"))
            calls.append(host.call("device.observe", timeout_ms=30_000))
        results = await asyncio.gather(*calls)
        self.assertEqual(len(results), 18)
        self.assertEqual(host.client.pending_requests, 0)
        self.assertEqual(await host.close(), 0)

    async def test_cancellation_and_deadlines(self) -> None:
        host = await start(faults=True)
        await host.call("device.connect")
        sid = (await host.call("session.start"))["id"]

        # Cancelling the awaiting task: the client sends request.cancel.
        dropped = action("sleep", {"ms": 20_000})
        task = asyncio.ensure_future(host.client.call("device.execute", dropped, timeout_ms=60_000))
        await asyncio.sleep(0.3)
        task.cancel()
        with self.assertRaises(asyncio.CancelledError):
            await task
        # Explicit request.cancel through a handle.
        explicit = action("sleep", {"ms": 20_000})
        handle = await host.client.begin_call("device.execute", explicit, timeout_ms=60_000)
        await asyncio.sleep(0.1)
        status = await handle.cancel()
        self.assertIn(status["status"], ("requested", "alreadyRequested"))
        with self.assertRaises(RpcRemoteError) as caught:
            await asyncio.wait_for(handle.result, WAIT)
        data = caught.exception.rpc_error["data"]
        self.assertEqual((data["code"], data["details"]), ("request_cancelled", {"reason": "requested"}))

        # timeoutMs and actionTimeoutMs.
        by_request = action("sleep", {"ms": 20_000})
        e = await host.error("device.execute", by_request, timeout_ms=100)
        self.assertEqual((e["data"]["code"], e["data"]["details"]),
                         ("request_timed_out", {"scope": "request", "timeoutMs": 100}))
        by_action = action("sleep", {"ms": 20_000}, actionTimeoutMs=80)
        e = await host.error("device.execute", by_action, timeout_ms=30_000)
        self.assertEqual((e["data"]["code"], e["data"]["details"]),
                         ("action_timed_out", {"scope": "action", "timeoutMs": 80}))

        for _ in range(200):
            try:
                await host.call("session.end")
                break
            except RpcRemoteError as busy:
                self.assertEqual(busy.rpc_error["data"]["code"], "session_busy")
                await asyncio.sleep(0.05)
        events = await events_of(host, sid)
        self.assertEqual(outcome_of(events, dropped["id"])["outcome"], "cancelled")
        self.assertEqual(outcome_of(events, explicit["id"])["error"]["code"], "action_cancelled")
        self.assertEqual(outcome_of(events, by_request["id"])["timeoutMs"], 100)
        self.assertEqual(outcome_of(events, by_action["id"])["timeoutMs"], 80)
        self.assertEqual(await host.close(), 0)


if __name__ == "__main__":
    unittest.main()
