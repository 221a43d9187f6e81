"""`devicerail mcp` driven by the official MCP Python SDK (`mcp` on PyPI).

The SDK validates every tool result's structuredContent against the tool's
output schema (it raises when one does not conform); this suite checks each
result with `jsonschema` as well, then runs a scripted agent loop: observe,
pick refs from the outline, act, wait, observe again, until it has signed
in, on the mock device and (with DEVICERAIL_BROWSER_PLUGINS_DIR) on a local
page in real Chromium. The password is typed as a named secret; its value
must never appear in a tool result, the Session's recorded events or the
server's log.

Run by `host/cli/tests/mcp.rs`:

    DEVICERAIL_BIN=... DEVICERAIL_PLUGINS_DIR=... python mcp_agent.py -v
"""

from __future__ import annotations

import asyncio
import base64
import http.server
import io
import json
import os
import re
import shutil
import struct
import subprocess
import tarfile
import tempfile
import threading
import time
import unittest
import urllib.parse
from contextlib import asynccontextmanager
from typing import Any, AsyncIterator

import jsonschema
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

SECRET_NAME = "LOGIN_PASSWORD"
SECRET = "s3cr3t-Pa55-" + os.urandom(6).hex()
TOOLS = {"devices", "observe", "act", "wait_for", "session"}
WAIT = 120.0
MAX_SIDE = 1280


# Temporary roots (data directories, logs), removed when the module ends.
ROOTS: list[str] = []


def tearDownModule() -> None:  # noqa: N802
    for root in ROOTS:
        shutil.rmtree(root, ignore_errors=True)


def jpeg_size(data: bytes) -> tuple[int, int]:
    """(width, height) from a JPEG's SOF marker."""
    assert data[:2] == b"\xff\xd8", "not a JPEG"
    i = 2
    while i < len(data):
        assert data[i] == 0xFF, "bad JPEG marker"
        marker = data[i + 1]
        length = struct.unpack(">H", data[i + 2 : i + 4])[0]
        if marker in (0xC0, 0xC1, 0xC2):
            h, w = struct.unpack(">HH", data[i + 5 : i + 9])
            return w, h
        i += 2 + length
    raise AssertionError("no SOF in JPEG")


def png_size(data: bytes) -> tuple[int, int]:
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    return struct.unpack(">II", data[16:24])


class Agent:
    """One MCP session with `devicerail mcp`; every result is checked."""

    def __init__(self, session: ClientSession, test: unittest.TestCase):
        self.session = session
        self.test = test
        self.schemas: dict[str, dict[str, Any]] = {}
        self.transcript: list[str] = []
        self.image_bytes: list[int] = []

    async def load_tools(self) -> list[Any]:
        listed = await self.session.list_tools()
        for t in listed.tools:
            self.schemas[t.name] = t.output_schema
        return listed.tools

    def _texts(self, result: Any) -> list[str]:
        out = []
        for c in result.content:
            if getattr(c, "type", None) == "text":
                out.append(c.text)
        return out

    async def call(self, name: str, args: dict[str, Any], ok: bool = True) -> Any:
        result = await asyncio.wait_for(self.session.call_tool(name, args), WAIT)
        blob = json.dumps(result.model_dump(mode="json", by_alias=True))
        self.test.assertNotIn(SECRET, blob, f"the secret leaked in a {name} result")
        for text in self._texts(result):
            self.transcript.append(f"{name} {json.dumps(args)} -> {text[:200]}")
        if ok:
            self.test.assertFalse(result.is_error, f"{name} {args}: {self._texts(result)}")
            schema = self.schemas[name]
            self.test.assertIsNotNone(result.structured_content, name)
            jsonschema.validate(result.structured_content, schema)
            return result
        self.test.assertTrue(result.is_error, f"{name} {args} should fail")
        return result

    async def observe(self, device: str, **kw: Any) -> tuple[dict[str, Any], Any]:
        """The structured result (with the text as `outline`, which the
        structured result itself never repeats) and the image blocks."""
        result = await self.call("observe", {"device": device, **kw})
        self.test.assertNotIn("outline", result.structured_content)
        s = dict(result.structured_content)
        text = "\n".join(self._texts(result))
        s["header"], _, s["outline"] = text.partition("\n")
        images = [c for c in result.content if getattr(c, "type", None) == "image"]
        if s["image"] is not None:
            self.test.assertEqual(len(images), 1)
            img = images[0]
            data = base64.b64decode(img.data)
            self.test.assertEqual(len(data), s["image"]["bytes"])
            if img.mime_type == "image/jpeg":
                w, h = jpeg_size(data)
            else:
                w, h = png_size(data)
            self.test.assertEqual((w, h), (s["image"]["width"], s["image"]["height"]))
            self.test.assertLessEqual(max(w, h), kw.get("maxSide", MAX_SIDE))
            self.test.assertLess(len(data), 400_000, "a bounded image stays small")
            self.image_bytes.append(len(data))
        return s, images


def ref_of(outline: str, pattern: str) -> str:
    """The ref of the first outline line matching `pattern`."""
    for line in outline.splitlines():
        if re.search(pattern, line):
            m = re.match(r"\s*(e\d+) ", line)
            if m:
                return m.group(1)
    raise AssertionError(f"no line matches {pattern!r} in:\n{outline}")


@asynccontextmanager
async def mcp_server(
    plugins: str,
    env: dict[str, str] | None = None,
    data: str | None = None,
    socket: str | None = None,
) -> AsyncIterator[tuple[ClientSession, str, str]]:
    """`devicerail mcp` on a fresh data directory, with no shared host
    unless `socket` names one (then `data` must be that host's)."""
    root = tempfile.mkdtemp(prefix="devicerail-mcp-")
    ROOTS.append(root)
    data = data or os.path.join(root, "data")
    log_path = os.path.join(root, "stderr.log")
    full_env = {
        "PATH": os.environ.get("PATH", ""),
        # A private home: no configuration file of the user's is read.
        "HOME": root,
        "XDG_DATA_HOME": os.path.join(root, "xdg-data"),
        # No shared host unless asked: the server runs its own.
        "DEVICERAIL_SOCKET": socket or os.path.join(root, "no-host.sock"),
        "RUST_LOG": "debug",
        "DEVICERAIL_SECRET_" + SECRET_NAME: SECRET,
        **(env or {}),
    }
    for k in ("CHROME_PATH", "DEVICERAIL_BROWSER_ARGS"):
        if k in os.environ:
            full_env[k] = os.environ[k]
    params = StdioServerParameters(
        command=os.environ["DEVICERAIL_BIN"],
        args=["mcp", "--plugins-dir", plugins, "--data-dir", data],
        env=full_env,
    )
    with open(log_path, "w") as log:
        async with stdio_client(params, errlog=log) as (read, write):
            async with ClientSession(read, write) as session:
                await asyncio.wait_for(session.initialize(), WAIT)
                yield session, data, log_path


def recorded_bytes(data: str, session_id: str, root: str) -> bytes:
    """Every byte of the Session's bundle (events as stored and blobs)."""
    out = os.path.join(root, "bundle.tar")
    subprocess.run(
        [os.environ["DEVICERAIL_BIN"], "bundle", "export", session_id, "--data-dir", data, "--out", out],
        check=True, capture_output=True, timeout=60,
    )
    chunks = []
    with tarfile.open(out) as tar:
        for member in tar.getmembers():
            f = tar.extractfile(member)
            if f is not None:
                chunks.append(f.read())
    return b"".join(chunks)


def assert_no_secret_recorded(test: unittest.TestCase, data: str, session_id: str, log_path: str) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        recorded = recorded_bytes(data, session_id, tmp)
        test.assertIn(b"inputSecret", recorded, "the protected Action is recorded")
        test.assertNotIn(SECRET.encode(), recorded, "the secret is in the recorded Session")
        report = os.path.join(tmp, "report.html")
        subprocess.run(
            [os.environ["DEVICERAIL_BIN"], "report", session_id, "--data-dir", data, "--out", report],
            check=True, capture_output=True, timeout=60,
        )
        with open(report, "rb") as f:
            test.assertNotIn(SECRET.encode(), f.read(), "the secret is in the report")
    with open(log_path, "rb") as f:
        log = f.read()
    test.assertIn(b"MCP client", log, "the server logged (to stderr)")
    test.assertNotIn(SECRET.encode(), log, "the secret is in the server's log")


class McpTools(unittest.IsolatedAsyncioTestCase):
    async def test_tools_are_listed_with_input_and_output_schemas(self) -> None:
        async with mcp_server(os.environ["DEVICERAIL_PLUGINS_DIR"]) as (session, _, _):
            agent = Agent(session, self)
            tools = await agent.load_tools()
            self.assertEqual({t.name for t in tools}, TOOLS)
            for t in tools:
                self.assertEqual(t.input_schema["type"], "object", t.name)
                self.assertIsNotNone(t.output_schema, t.name)
                jsonschema.Draft202012Validator.check_schema(t.input_schema)
                jsonschema.Draft202012Validator.check_schema(t.output_schema)
                self.assertTrue(t.description, t.name)
            devices = (await agent.call("devices", {})).structured_content
            self.assertEqual(devices["mode"], "in-process")
            self.assertEqual([d["id"] for d in devices["devices"]], ["mock-1"])
            self.assertEqual(devices["devices"][0]["leased"], False)
            # Bad calls are tool errors the agent can read.
            bad = await agent.call("act", {"device": "mock-1", "action": "tap", "ref": "e999999"}, ok=False)
            self.assertIn("unknown ref", bad.content[0].text)
            bad = await agent.call("act", {"device": "mock-1", "action": "type", "secret": "NOPE"}, ok=False)
            self.assertIn("DEVICERAIL_SECRET_NOPE", bad.content[0].text)
            bad = await agent.call("observe", {"device": "no-such-device"}, ok=False)
            self.assertIn("error", bad.content[0].text)


class McpMock(unittest.IsolatedAsyncioTestCase):
    async def test_an_agent_signs_in_on_the_mock_through_refs(self) -> None:
        async with mcp_server(os.environ["DEVICERAIL_PLUGINS_DIR"]) as (session, data, log_path):
            agent = Agent(session, self)
            await agent.load_tools()
            dev = "mock-1"
            obs, images = await agent.observe(dev)
            self.assertEqual(images[0].mime_type, "image/jpeg")
            self.assertFalse(obs["truncated"])
            outline = obs["outline"]
            user = ref_of(outline, r'"Username"')
            password = ref_of(outline, r'"Password"')
            sign_in = ref_of(outline, r'button "Sign in"')
            await agent.call("act", {"device": dev, "action": "type", "ref": user, "text": "ada"})
            typed = await agent.call("act", {"device": dev, "action": "type", "ref": password, "secret": SECRET_NAME})
            self.assertEqual([s["name"] for s in typed.structured_content["steps"]], ["tapElement", "inputSecret"])
            self.assertIsNone(typed.structured_content["steps"][1]["output"])
            await agent.call("act", {"device": dev, "action": "tap", "ref": sign_in})
            waited = await agent.call("wait_for", {"device": dev, "selector": {"text": "Welcome"}, "timeoutMs": 5000})
            self.assertTrue(waited.structured_content["matched"])
            after, _ = await agent.observe(dev, full=True, screenshot="always", format="png", maxSide=640)
            self.assertIn('"Welcome, ada"', after["outline"])
            self.assertEqual(after["image"]["mimeType"], "image/png")
            self.assertEqual((after["image"]["width"], after["image"]["height"]), (360, 640))
            # A ref of the old screen is refused as stale, and nothing is done.
            stale = await agent.call("act", {"device": dev, "action": "tap", "ref": sign_in}, ok=False)
            self.assertIn("error stale_ref", stale.content[0].text)
            self.assertEqual(stale.structured_content["error"]["reason"], "gone")
            gone = await agent.call("wait_for", {"device": dev, "selector": {"text": "Nobody"}, "timeoutMs": 300})
            self.assertFalse(gone.structured_content["matched"])
            info = (await agent.call("session", {"device": dev, "op": "info"})).structured_content
            self.assertEqual(info["state"], "active")
            sid = info["sessionId"]
            self.assertEqual(obs["sessionId"], sid)
            ended = (await agent.call("session", {"device": dev, "op": "end", "verdict": "pass", "summary": "signed in as ada"})).structured_content
            self.assertEqual((ended["sessionId"], ended["state"], ended["verdict"]), (sid, "ended", "pass"))
            self.assertIn(f"devicerail report {sid}", ended["reportCommand"])
            print(f"mock: JPEG {agent.image_bytes[0]} bytes ({obs['image']['width']}x{obs['image']['height']}), "
                  f"PNG {agent.image_bytes[1]} bytes; outline {len(outline)} chars")
            print("transcript:\n  " + "\n  ".join(agent.transcript))
        assert_no_secret_recorded(self, data, sid, log_path)

    async def test_a_thousand_rows_stay_under_the_outline_budget(self) -> None:
        env = {"DEVICERAIL_MOCK_FEED_ROWS": "1000"}
        async with mcp_server(os.environ["DEVICERAIL_PLUGINS_DIR"], env) as (session, _, _):
            agent = Agent(session, self)
            await agent.load_tools()
            dev = "mock-1"
            tapped = await agent.call("act", {"device": dev, "action": "tap", "x": 360, "y": 328})
            self.assertEqual(tapped.structured_content["steps"][0]["output"]["hit"], "username")
            await agent.call("act", {"device": dev, "action": "setValue", "selector": {"identifier": "username"}, "text": "ada"})
            await agent.call("act", {"device": dev, "action": "type", "selector": {"identifier": "password"}, "secret": SECRET_NAME})
            await agent.call("act", {"device": dev, "action": "tap", "selector": {"role": "button", "name": "Sign in"}})
            scrolled = await agent.call("act", {"device": dev, "action": "scroll", "deltaY": 400})
            self.assertEqual(scrolled.structured_content["steps"][0]["name"], "scroll")
            unknown = await agent.call("act", {"device": dev, "action": "key", "key": "Enter"}, ok=False)
            self.assertIn("pressKey", unknown.content[0].text)
            obs, _ = await agent.observe(dev, screenshot=False, full=True)
            self.assertGreaterEqual(obs["nodes"], 1000)
            self.assertTrue(obs["truncated"])
            self.assertLessEqual(len(obs["outline"]), 6000)
            lines = obs["outline"].rstrip("\n").splitlines()
            footer = [l for l in lines if l.startswith("… not shown: ")]
            self.assertEqual(len(footer), 1, obs["outline"])
            self.assertRegex(footer[0], r"^… not shown: [\d,]+ text\.$")
            omitted = int(footer[0].split()[3].replace(",", ""))
            self.assertEqual(omitted, obs["omitted"]["text"])
            self.assertEqual(obs["shown"] + omitted, obs["nodes"])
            self.assertRegex(lines[-1], r"^   e\d+ list #feed: [\d,]+ of 1,000 staticTexts not shown → subtree=e\d+ or filter=")
            last = lines[-1]
            print(f"1,000 rows: outline {len(obs['outline'])} chars, {obs['shown']} of {obs['nodes']} nodes shown; last line: {last}")
            narrowed, _ = await agent.observe(dev, screenshot=False, filter="Item 999:")
            self.assertFalse(narrowed["truncated"])
            self.assertIn('"Item 999: nothing new"', narrowed["outline"])
            feed = ref_of(obs["outline"], r" list")
            sub, _ = await agent.observe(dev, screenshot=False, subtree=feed, maxChars=300)
            self.assertLessEqual(len(sub["outline"]), 300)
            self.assertTrue(sub["truncated"])
            self.assertTrue(sub["outline"].lstrip().startswith(feed + " list"), sub["outline"])


def effect_of(result: Any) -> tuple[dict[str, Any], str]:
    """An act result's structured effect and its text."""
    text = "\n".join(c.text for c in result.content if getattr(c, "type", None) == "text")
    return result.structured_content["effect"], text


class McpAgent(unittest.IsolatedAsyncioTestCase):
    """Refs, diffs, effects and settling on the mock, as issue 29 asks."""

    async def test_refs_are_stable_and_diffs_are_smaller_than_outlines(self) -> None:
        async with mcp_server(os.environ["DEVICERAIL_PLUGINS_DIR"]) as (session, _, _):
            agent = Agent(session, self)
            await agent.load_tools()
            dev = "mock-1"
            first, images = await agent.observe(dev)
            self.assertEqual((first["mode"], len(images)), ("full", 1))
            # The unchanged screen again: nothing new, no image, same refs.
            second, images = await agent.observe(dev)
            self.assertEqual((second["mode"], second["counts"]["added"], second["counts"]["changed"]), ("diff", 0, 0))
            self.assertEqual(images, [], "an unchanged screen sends no image")
            self.assertIn("no change", second["header"])
            full, _ = await agent.observe(dev, full=True, screenshot="never")
            self.assertEqual(full["outline"], first["outline"], "the same refs for the same elements")
            user = ref_of(first["outline"], r'"Username"')
            typed = await agent.call("act", {"device": dev, "action": "type", "ref": user, "text": "ada"})
            eff, text = effect_of(typed)
            self.assertEqual(eff["verdict"], "changed")
            self.assertIn(f'~ {user} textField "Username" #username value: "" → "ada"', text)
            again, _ = await agent.observe(dev, full=True, screenshot="never")
            self.assertEqual(ref_of(again["outline"], r'"Username"'), user)
            # A diff is smaller than the outline it stands for.
            sign_in = ref_of(again["outline"], r'button "Sign in"')
            await agent.call("act", {"device": dev, "action": "type", "selector": {"identifier": "password"}, "text": "pw"})
            diff, _ = await agent.observe(dev, since=again["observationId"], screenshot="never")
            whole, _ = await agent.observe(dev, full=True, screenshot="never")
            self.assertEqual(diff["mode"], "diff")
            self.assertEqual(diff["counts"]["changed"], 1, diff["outline"])
            self.assertLess(len(diff["outline"]), len(whole["outline"]) / 2, (diff["outline"], whole["outline"]))
            signed = await agent.call("act", {"device": dev, "action": "tap", "ref": sign_in})
            eff, text = effect_of(signed)
            self.assertTrue(eff["newScreen"], text)
            self.assertIn('"Welcome, ada"', text)
            self.assertIn("Sign out", text, "settling waited for the delayed button")
            self.assertTrue(signed.structured_content["settle"]["settled"])
            print(f"diffs: outline {len(whole['outline'])} chars, diff {len(diff['outline'])} chars; "
                  f"unchanged re-look {len(second['outline'])} chars")

    async def test_a_changed_screen_gets_stale_ref_never_a_wrong_element(self) -> None:
        async with mcp_server(os.environ["DEVICERAIL_PLUGINS_DIR"]) as (session, _, _):
            agent = Agent(session, self)
            await agent.load_tools()
            dev = "mock-1"
            launched = await agent.call("act", {"device": dev, "action": "launchApp", "appId": "changes"})
            _, text = effect_of(launched)
            save = ref_of(text, r'button "Save"')
            controls = {name: ref_of(text, rf'button "{name}"') for name in ("Remove Save", "Insert banner", "Replace Save", "Duplicate Save", "Reset")}
            wrong = 0

            async def status() -> str:
                obs, _ = await agent.observe(dev, full=True, screenshot="never")
                m = re.search(r'staticText "([^"]*)"', obs["outline"])
                assert m, obs["outline"]
                return m.group(1)

            async def reset() -> None:
                await agent.call("act", {"device": dev, "action": "tap", "ref": controls["Reset"]})
                self.assertEqual(await status(), "Nothing pressed")

            # Removed: stale, gone; nothing pressed.
            await agent.call("act", {"device": dev, "action": "tap", "ref": controls["Remove Save"]})
            r = await agent.call("act", {"device": dev, "action": "tap", "ref": save}, ok=False)
            self.assertEqual(r.structured_content["error"]["code"], "stale_ref")
            self.assertEqual(r.structured_content["error"]["reason"], "gone")
            self.assertIn("nothing was done", r.content[0].text)
            wrong += await status() != "Nothing pressed"
            await reset()
            # Replaced in place by Discard: stale, and Discard is not pressed.
            await agent.call("act", {"device": dev, "action": "tap", "ref": controls["Replace Save"]})
            r = await agent.call("act", {"device": dev, "action": "tap", "ref": save}, ok=False)
            self.assertEqual(r.structured_content["error"]["reason"], "gone")
            self.assertTrue(any("Discard" in c["line"] or "Save" in c["line"] for c in r.structured_content["error"]["candidates"]), r.structured_content)
            wrong += await status() != "Nothing pressed"
            await reset()
            # Duplicated: no longer unique, stale (ambiguous).
            await agent.call("act", {"device": dev, "action": "tap", "ref": controls["Duplicate Save"]})
            r = await agent.call("act", {"device": dev, "action": "tap", "ref": save}, ok=False)
            self.assertEqual(r.structured_content["error"]["reason"], "ambiguous")
            wrong += await status() != "Nothing pressed"
            await reset()
            # Moved down by a banner: the effect says so, and the ref still
            # names the same element, tapped where it is now.
            banner = await agent.call("act", {"device": dev, "action": "tap", "ref": controls["Insert banner"]})
            _, text = effect_of(banner)
            self.assertIn(f'↕ {save} button "Save" moved (60, 300) → (60, 420)', text)
            r = await agent.call("act", {"device": dev, "action": "tap", "ref": save})
            self.assertEqual(r.structured_content["target"]["ref"], save)
            _, text = effect_of(r)
            self.assertIn('"Saved"', text)
            self.assertEqual(await status(), "Saved")
            # The moving button: a ref taken mid-animation taps the button
            # where it is now, never the Cancel button that took its place.
            moving = await agent.call("act", {"device": dev, "action": "launchApp", "appId": "moving", "settle": False})
            _, text = effect_of(moving)
            cont = ref_of(text, r'button "Continue"')
            settled = await agent.call("wait_for", {"device": dev, "condition": "settled", "timeoutMs": 5000})
            self.assertTrue(settled.structured_content["matched"])
            self.assertGreaterEqual(settled.structured_content["samples"], 1)
            r = await agent.call("act", {"device": dev, "action": "tap", "ref": cont})
            self.assertIsNotNone(r.structured_content["target"]["movedFrom"])
            _, text = effect_of(r)
            self.assertIn('"Done"', text)
            self.assertNotIn("Cancelled", text)
            self.assertEqual(wrong, 0)
            print(f"stale refs: 3 changes refused with stale_ref, 2 moves followed, {wrong} wrong-element actions")

    async def test_every_no_op_tap_is_flagged(self) -> None:
        async with mcp_server(os.environ["DEVICERAIL_PLUGINS_DIR"]) as (session, data, _):
            agent = Agent(session, self)
            await agent.load_tools()
            dev = "mock-1"
            obs, _ = await agent.observe(dev)
            help_ref = ref_of(obs["outline"], r'button "Help"')
            no_ops = [
                {"x": 700, "y": 1250},  # an empty spot
                {"x": 100, "y": 150},   # the title label
                {"x": 100, "y": 750},   # the disabled Help button
                {"x": 10, "y": 10},     # the corner
            ]
            flagged = 0
            for point in no_ops:
                r = await agent.call("act", {"device": dev, "action": "tap", **point})
                eff, text = effect_of(r)
                flagged += eff["verdict"] == "noVisibleChange" and "⚠ no visible change" in text
            refused = await agent.call("act", {"device": dev, "action": "tap", "ref": help_ref}, ok=False)
            self.assertIn("element_not_interactable", refused.content[0].text)
            self.assertEqual(flagged, len(no_ops), agent.transcript)
            # A tap that does something is not flagged.
            r = await agent.call("act", {"device": dev, "action": "tap", "x": 360, "y": 328})
            eff, text = effect_of(r)
            self.assertNotEqual(eff["verdict"], "noVisibleChange", text)
            ended = (await agent.call("session", {"device": dev, "op": "end", "verdict": "pass", "summary": "no-op taps"})).structured_content
            print(f"no-op taps: {flagged} of {len(no_ops)} flagged")
        # The report shows the same effects, read from the record.
        with tempfile.TemporaryDirectory() as tmp:
            report = os.path.join(tmp, "report.html")
            subprocess.run(
                [os.environ["DEVICERAIL_BIN"], "report", ended["sessionId"], "--data-dir", data, "--out", report],
                check=True, capture_output=True, timeout=60,
            )
            with open(report, encoding="utf-8") as f:
                html = f.read()
            self.assertEqual(html.count('"verdict":"noVisibleChange"'), len(no_ops), "one per no-op tap")
            self.assertIn("no visible change", html)


class McpReplay(unittest.IsolatedAsyncioTestCase):
    async def test_an_agent_replays_a_session_and_a_bundle(self) -> None:
        async with mcp_server(os.environ["DEVICERAIL_PLUGINS_DIR"]) as (session, data, _):
            agent = Agent(session, self)
            await agent.load_tools()
            dev = "mock-1"
            # The recording opens the sign-in screen first, so a replay
            # starts where the recording did.
            await agent.call("act", {"device": dev, "action": "launchApp", "appId": "login"})
            obs, _ = await agent.observe(dev, full=True)
            outline = obs["outline"]
            # setValue (not type, which appends): the mock's sign-in screen
            # keeps what was typed across launches, and a replay that typed
            # again would rightly diverge ("adaada").
            await agent.call("act", {"device": dev, "action": "setValue", "ref": ref_of(outline, r'"Username"'), "text": "ada"})
            await agent.call("act", {"device": dev, "action": "setValue", "ref": ref_of(outline, r'"Password"'), "text": "pw"})
            await agent.call("act", {"device": dev, "action": "tap", "ref": ref_of(outline, r'button "Sign in"')})
            # Replaying while the device's Session is active is refused.
            busy = await agent.call("session", {"device": dev, "op": "replay", "source": obs["sessionId"]}, ok=False)
            self.assertIn("end it (op=end)", busy.content[0].text)
            ended = (await agent.call("session", {"device": dev, "op": "end", "verdict": "pass", "summary": "signed in"})).structured_content
            sid = ended["sessionId"]
            # The recording replays step for step, as a new Session.
            r = await agent.call("session", {"device": dev, "op": "replay", "source": sid})
            out = r.structured_content
            self.assertNotEqual(out["sessionId"], sid)
            self.assertEqual((out["state"], out["verdict"]), ("ended", "pass"), json.dumps(out["replay"], indent=1)[:3000])
            rep = out["replay"]
            self.assertEqual(rep["replays"], sid)
            self.assertEqual(rep["diverged"], 0, rep)
            self.assertGreaterEqual(rep["matched"] + rep["healed"], 3, rep)
            self.assertTrue(all(st["verdict"] in ("matched", "healed") for st in rep["steps"]), rep)
            self.assertIn(f"replayed {sid} on {dev}", r.content[0].text)
            info = (await agent.call("session", {"device": dev, "op": "info"})).structured_content
            self.assertEqual((info["sessionId"], info["state"], info["verdict"]), (out["sessionId"], "ended", "pass"))
            # The same from a bundle file.
            with tempfile.TemporaryDirectory() as tmp:
                bundle = os.path.join(tmp, "signin.tar")
                subprocess.run(
                    [os.environ["DEVICERAIL_BIN"], "bundle", "export", sid, "--data-dir", data, "--out", bundle],
                    check=True, capture_output=True, timeout=60,
                )
                again = (await agent.call("session", {"device": dev, "op": "replay", "source": bundle})).structured_content
                self.assertEqual((again["verdict"], again["replay"]["diverged"]), ("pass", 0), again)
            # Neither a Session nor a file: a clear error, nothing run.
            bad = await agent.call("session", {"device": dev, "op": "replay", "source": "no-such-thing"}, ok=False)
            self.assertIn("neither a Session id nor a bundle file", bad.content[0].text)
            print(f"mcp replay: {rep['matched']} matched, {rep['healed']} healed, {rep['diverged']} diverged")


class McpShared(unittest.IsolatedAsyncioTestCase):
    async def test_two_agents_share_a_host_under_leases(self) -> None:
        root = tempfile.mkdtemp(prefix="devicerail-shared-")
        ROOTS.append(root)
        sock = os.path.join(root, "host.sock")
        data = os.path.join(root, "data")
        plugins = os.environ["DEVICERAIL_PLUGINS_DIR"]
        host = await asyncio.create_subprocess_exec(
            os.environ["DEVICERAIL_BIN"], "serve", "--listen", f"unix:{sock}",
            "--plugins-dir", plugins, "--data-dir", data,
            stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.DEVNULL,
            stderr=asyncio.subprocess.DEVNULL,
            env={**os.environ, "HOME": root, "XDG_DATA_HOME": os.path.join(root, "xdg"), "DEVICERAIL_MOCK_DEVICES": "2"},
        )
        try:
            for _ in range(300):
                if os.path.exists(sock):
                    break
                await asyncio.sleep(0.05)
            async with mcp_server(plugins, data=data, socket=sock) as (a_session, _, _):
                a = Agent(a_session, self)
                await a.load_tools()
                obs, images = await a.observe("mock-1")
                self.assertEqual(len(images), 1, "the screenshot is read from the shared host's data directory")
                async with mcp_server(plugins, data=data, socket=sock) as (b_session, _, _):
                    b = Agent(b_session, self)
                    await b.load_tools()
                    listed = (await b.call("devices", {})).structured_content
                    self.assertEqual(listed["mode"], "shared")
                    by_id = {d["id"]: d for d in listed["devices"]}
                    self.assertEqual((by_id["mock-1"]["leased"], by_id["mock-1"]["leaseHolder"]), (True, "anotherClient"))
                    self.assertEqual(by_id["mock-2"]["leased"], False)
                    refused = await b.call("observe", {"device": "mock-1"}, ok=False)
                    self.assertIn("device_in_use", refused.content[0].text)
                    self.assertIn("another client or agent holds this device", refused.content[0].text)
                    other, _ = await b.observe("mock-2")
                    self.assertNotEqual(other["sessionId"], obs["sessionId"])
                    mine = (await a.call("devices", {})).structured_content
                    self.assertEqual({d["id"]: d["leaseHolder"] for d in mine["devices"]},
                                     {"mock-1": "thisServer", "mock-2": "anotherClient"})
                    await a.call("session", {"device": "mock-1", "op": "end", "verdict": "unknown"})
                    taken, _ = await b.observe("mock-1")
                    self.assertNotEqual(taken["sessionId"], obs["sessionId"])
        finally:
            if host.stdin is not None:
                host.stdin.close()
            host.terminate()
            await asyncio.wait_for(host.wait(), 30)


LOGIN_PAGE = """<!doctype html><html><head><title>Sign in</title></head><body>
<h1>Sign in</h1>
<form method="post" action="/login">
<label for="username">Username</label> <input id="username" name="username" autocomplete="off">
<label for="password">Password</label> <input id="password" name="password" type="password">
<button id="sign-in" type="submit">Sign in</button>
</form></body></html>"""


# A table larger than a UI snapshot holds (a row says who was opened
# when clicked) and an article whose footer's last link comes after 3,000 words.
TABLE_PAGE = ("<!doctype html><html><head><title>People</title></head><body>"
              "<p id='status'>Nobody opened</p><table><tbody>"
              + "".join(f"<tr onclick=\"document.getElementById('status').textContent='Opened '+this.cells[1].textContent\">"
                        f"<td>{i}</td><td>Person {i:04d}</td><td>person{i}@example.com</td><td><button>Edit</button></td></tr>"
                        for i in range(1000))
              + "</tbody></table></body></html>")
ARTICLE_PAGE = ("<!doctype html><html><head><title>Article</title></head><body><article>"
                + "".join(f"<h2>Section {s}</h2><p>{'Words of the section. ' * 25}</p>" for s in range(40))
                + "</article><footer>"
                + "".join(f"<a href='/footer/{i}'>Footer link {i}</a> " for i in range(30))
                + "</footer></body></html>")

# A button whose effect comes with the answer to a slow request.
FETCH_PAGE = ("<!doctype html><html><head><title>Fetches</title></head><body>"
              "<p id='status'>Nothing loaded</p>"
              "<button id='load' onclick=\"fetch('/slow').then(r => r.text())"
              ".then(t => { document.getElementById('status').textContent = 'Loaded ' + t; })\">Load</button>"
              "</body></html>")
SLOW_S = 0.7

# A button named by its id, and controls that remove it, give its id to a
# second button, or move it, CHANGE_S after they were pressed (after act
# settled: the agent does not see the change).
IDS_PAGE = ("<!doctype html><html><head><title>Ids</title></head><body>"
            "<p id='status'>Nothing pressed</p><div id='area'></div>"
            "<button id='remove' onclick=\"later('remove')\">Remove</button>"
            "<button id='duplicate' onclick=\"later('duplicate')\">Duplicate</button>"
            "<button id='push' onclick=\"later('push')\">Push down</button>"
            "<button id='reset' onclick=\"op('reset')\">Reset</button>"
            "<script>const st=s=>document.getElementById('status').textContent=s;"
            "function save(said){const b=document.createElement('button');b.id='save';b.textContent='Save';"
            "b.onclick=()=>st(said);return b;}"
            "function op(k){const a=document.getElementById('area');a.replaceChildren();"
            "if(k==='push'){const p=document.createElement('p');p.style.height='120px';p.textContent='Pushed';a.append(p);}"
            "if(k!=='remove')a.append(save('Saved'));if(k==='duplicate')a.append(save('Saved twice'));"
            "if(k==='reset')st('Nothing pressed');}"
            "function later(k){setTimeout(()=>op(k),800);}"
            "op('reset');</script></body></html>")
CHANGE_S = 0.8


class LoginHandler(http.server.BaseHTTPRequestHandler):
    def _send(self, body: str, status: int = 200) -> None:
        data = body.encode()
        self.send_response(status)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:  # noqa: N802
        if self.path == "/slow":
            time.sleep(SLOW_S)
            self._send("the data")
            return
        pages = {"/table": TABLE_PAGE, "/article": ARTICLE_PAGE, "/fetches": FETCH_PAGE, "/ids": IDS_PAGE}
        self._send(pages.get(self.path, LOGIN_PAGE))

    def do_POST(self) -> None:  # noqa: N802
        length = int(self.headers.get("Content-Length", "0"))
        form = urllib.parse.parse_qs(self.rfile.read(length).decode())
        user = form.get("username", [""])[0]
        ok = form.get("password", [""])[0] == SECRET and user
        if ok:
            self._send(f"<!doctype html><title>Home</title><h1 id='welcome'>Welcome, {user}</h1>")
        else:
            self._send("<!doctype html><title>Denied</title><h1 id='denied'>Wrong password</h1>")

    def log_message(self, *args: Any) -> None:
        pass


class McpChromium(unittest.IsolatedAsyncioTestCase):
    async def refs_by_id_are_resolved_by_the_driver(self, agent: Any, dev: str, url: str, log_path: str) -> None:
        """Refs named by their id skip act's fresh look (the driver resolves
        the id on the live page) and still never reach another element: a
        removed element answers stale_ref gone, an id given to a second
        element stale_ref ambiguous, both with nothing pressed; a moved one
        is pressed where it is now."""
        await agent.call("act", {"device": dev, "action": "navigate", "url": url})
        page, _ = await agent.observe(dev, screenshot=False, full=True)
        save = ref_of(page["outline"], r'button "Save"')
        controls = {n: ref_of(page["outline"], rf'button "{n}"') for n in ("Remove", "Duplicate", "Push down", "Reset")}

        async def status() -> str:
            seen, _ = await agent.observe(dev, screenshot=False, full=True)
            m = re.search(r'staticText "([^"]*)"', seen["outline"])
            return m.group(1) if m else ""

        looks = lambda: open(log_path).read().count("looked=false")  # noqa: E731
        quick = looks()
        for change, reason in (("Remove", "gone"), ("Duplicate", "ambiguous")):
            await agent.call("act", {"device": dev, "action": "tap", "ref": controls[change]})
            await asyncio.sleep(CHANGE_S + 0.4)
            r = await agent.call("act", {"device": dev, "action": "tap", "ref": save}, ok=False)
            self.assertTrue(r.is_error, agent.transcript)
            self.assertEqual(r.structured_content["error"]["code"], "stale_ref", agent.transcript)
            self.assertEqual(r.structured_content["error"]["reason"], reason, agent.transcript)
            self.assertEqual(await status(), "Nothing pressed")
            await agent.call("act", {"device": dev, "action": "tap", "ref": controls["Reset"]})
        await agent.call("act", {"device": dev, "action": "tap", "ref": controls["Push down"]})
        await asyncio.sleep(CHANGE_S + 0.4)
        r = await agent.call("act", {"device": dev, "action": "tap", "ref": save})
        self.assertIn('"Saved"', r.content[0].text, agent.transcript)
        self.assertIsNotNone(r.structured_content["target"]["movedFrom"], agent.transcript)
        self.assertEqual(await status(), "Saved")
        # Every tap that went through went by the driver's resolution of
        # the id (the refused ones log nothing).
        self.assertGreaterEqual(looks() - quick, 6, "taps by id took a fresh look first")

    async def test_an_agent_signs_in_on_a_local_page_in_chromium(self) -> None:
        plugins = os.environ.get("DEVICERAIL_BROWSER_PLUGINS_DIR")
        if not plugins:
            self.skipTest("no DEVICERAIL_BROWSER_PLUGINS_DIR (browser plugin and Chromium)")
        server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), LoginHandler)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        url = f"http://127.0.0.1:{server.server_address[1]}/"
        # Device pixels at twice the CSS viewport: 2560x1600 screenshots,
        # which observe must bound to 1280 on the long side.
        env = {"DEVICERAIL_BROWSER_VIEWPORT": "1280x800", "DEVICERAIL_BROWSER_SCALE": "2"}
        try:
            async with mcp_server(plugins, env) as (session, data, log_path):
                agent = Agent(session, self)
                await agent.load_tools()
                listed = (await agent.call("devices", {})).structured_content["devices"]
                web = [d for d in listed if d["platform"] == "web"]
                self.assertEqual(len(web), 1, listed)
                dev = web[0]["id"]
                await agent.call("act", {"device": dev, "action": "navigate", "url": url})
                await agent.call("wait_for", {"device": dev, "selector": {"identifier": "username"}, "condition": "visible"})
                obs, images = await agent.observe(dev, full=True)
                self.assertEqual(images[0].mime_type, "image/jpeg")
                self.assertEqual(obs["image"]["sourceWidth"], 2560)
                self.assertEqual((obs["image"]["width"], obs["image"]["height"]), (1280, 800))
                outline = obs["outline"]
                user = ref_of(outline, r"#username\b")
                password = ref_of(outline, r"#password\b")
                sign_in = ref_of(outline, r"#sign-in\b")
                await agent.call("act", {"device": dev, "action": "type", "ref": user, "text": "ada"})
                await agent.call("act", {"device": dev, "action": "type", "ref": password, "secret": SECRET_NAME})
                await agent.call("act", {"device": dev, "action": "tap", "ref": sign_in})
                waited = await agent.call("wait_for", {"device": dev, "selector": {"identifier": "welcome"}, "timeoutMs": 15000})
                self.assertTrue(waited.structured_content["matched"], agent.transcript)
                after, _ = await agent.observe(dev, full=True)
                self.assertIn("Welcome, ada", after["outline"])
                # Every element within reach: a row far beyond the snapshot
                # and the article's last link, each found by one filtered
                # observe (the live page is searched), and the row tapped
                # through the ref that observe gave.
                await agent.call("act", {"device": dev, "action": "navigate", "url": url + "table"})
                whole, _ = await agent.observe(dev, screenshot=False, full=True)
                self.assertNotIn("Person 0999", whole["outline"])
                found, _ = await agent.observe(dev, screenshot=False, filter="Person 0999")
                self.assertIn("searched the live page", found["header"], found["header"])
                row = ref_of(found["outline"], r'cell "Person 0999"')
                await agent.call("act", {"device": dev, "action": "tap", "ref": row})
                opened = await agent.call("wait_for", {"device": dev, "selector": {"text": "Opened Person 0999"},
                                                       "condition": "present", "timeoutMs": 10000})
                self.assertTrue(opened.structured_content["matched"], agent.transcript)
                await agent.call("act", {"device": dev, "action": "navigate", "url": url + "article"})
                last, _ = await agent.observe(dev, screenshot=False, filter="Footer link 29")
                self.assertIn('link "Footer link 29"', last["outline"], last["outline"])
                print(f"chromium: filter found row 999 ({len(found['outline'])} chars) and the last footer link "
                      f"({len(last['outline'])} chars) in one observe each")
                # A tap whose effect arrives with a slow answer: act settles
                # until the request it started has ended, and shows it.
                await agent.call("act", {"device": dev, "action": "navigate", "url": url + "fetches"})
                page, _ = await agent.observe(dev, screenshot=False, full=True)
                load = ref_of(page["outline"], r'button "Load"')
                tapped = await agent.call("act", {"device": dev, "action": "tap", "ref": load})
                effect = tapped.content[0].text
                self.assertIn("Loaded the data", effect, agent.transcript)
                self.assertGreaterEqual(tapped.structured_content["settle"]["ms"], int(SLOW_S * 1000) - 200, effect)
                await self.refs_by_id_are_resolved_by_the_driver(agent, dev, url + "ids", log_path)
                ended = (await agent.call("session", {"device": dev, "op": "end", "verdict": "pass", "summary": "signed in"})).structured_content
                sid = ended["sessionId"]
                print(f"chromium: JPEG {agent.image_bytes[0]} bytes ({obs['image']['width']}x{obs['image']['height']} from "
                      f"{obs['image']['sourceWidth']}x{obs['image']['sourceHeight']}); outline {len(outline)} chars")
                print("transcript:\n  " + "\n  ".join(agent.transcript))
            assert_no_secret_recorded(self, data, sid, log_path)
        finally:
            server.shutdown()
            server.server_close()


if __name__ == "__main__":
    unittest.main()
