"""Issue 29's agent benchmark: a scripted agent loop through `devicerail mcp`
and the official MCP Python SDK, on the mock device and on local pages in
real Chromium, in two modes:

* `new`: the server's defaults. The agent reads refs from outlines, diffs
  and each act's effect, and observes again only when it needs something it
  has not seen (a `filter` for a row or a link off screen).
* `baseline`: full re-observation. After every act the agent observes the
  whole outline with the screenshot (`full=true, screenshot=always`), as an
  agent does with a tool that answers `done; observe to see the effect`.
  Its act results are counted as that tool's answer: the first line of the
  text and the structured result without `effect`.

With `--peer playwright-mcp`, on Chromium only, the compared tasks also run
through playwright-mcp (`@playwright/mcp`, pinned in
host/cli/benches/playwright-mcp; its cli.js named by PLAYWRIGHT_MCP_CLI,
else the pairing is skipped with a word on stderr), as a third mode:

* `playwright-mcp`: one `node cli.js --headless --isolated` server per task
  on the same pages from the same HTTP server, with the same scripted
  decisions (regexes over its snapshot lines). Its element tools take
  `{target: ref, element: description}`; the password is typed as the
  secret's name, which its `--secrets` file substitutes. After a navigate
  or a click it writes the page's snapshot to a file and only links it: the
  agent reads that file (an extra read, not a tool call), and its
  characters count as text the agent reads. `browser_type` (a fill)
  returns no snapshot; the row edit is checked with a `browser_snapshot`.
  Its tasks end without the no-op tap: it has no tap at a point without
  `--caps vision`.

Tasks (the same scripted decisions in every mode, regexes over outline
lines): sign in; edit row 500 of a 1,000-row table; follow link 57 of a long
article; tap a button that moves after an animation; and, in `new` mode, a
screen that changes under a ref (removed, replaced, duplicated: `stale_ref`
expected; moved: the same element tapped where it is now). Every task of
ours ends with a tap on an empty spot, which must be flagged `no visible
change`.

Per task it reports characters returned to the agent (text, structured,
base64 image), tool calls, success, wrong-element actions, no-op taps
flagged, settle time and wall time (server start to server exit); then the
totals and the reduction of `new` against `baseline`. With `--peer` it adds
a comparison of `new` (without its closing no-op tap) against
`playwright-mcp` per task (calls, text characters, wall time, success) and
the median time of one "type into a field by ref" call (ours: `act` with
`type` and a ref; theirs: `browser_type`) and of one "tap by ref" call
(ours: `act` with `tap` and a ref; theirs: `browser_click`), each measured
from the request to the answer on the client. Output: a Markdown table on
stdout and, with `--json PATH`, the raw figures (the pairing under `peer`).

    DEVICERAIL_BIN=... DEVICERAIL_PLUGINS_DIR=... [PLAYWRIGHT_MCP_CLI=...] \
        python agent_bench.py [--platforms mock,chromium] [--json out.json] \
        [--peer playwright-mcp]

`scripts/bench-agent` builds the binary and plugins, installs playwright-mcp
(`npm ci`, when node and npm exist) and runs it;
`host/cli/tests/mcp.rs` runs it once (without `--peer`) and checks the
issue's targets.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import html
import http.server
import json
import os
import re
import shutil
import statistics
import sys
import tempfile
import threading
import time
import urllib.parse
from dataclasses import asdict, dataclass, field
from typing import Any, AsyncIterator

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mcp_agent import SECRET, SECRET_NAME, mcp_server  # noqa: E402

WAIT = 120.0
# Print every call and its answer to stderr.
TRANSCRIPT = bool(os.environ.get("AGENT_BENCH_TRANSCRIPT"))
LINE = re.compile(r"^\s*(?:([~+\-↕=])\s+)?(e\d+) (.*)$")
# The paired server's mode name, and its snapshot lines' refs (`[ref=e4]`,
# `[ref=f1e4]` after a navigation) and snapshot-file links.
PEER = "playwright-mcp"
PEER_REF = re.compile(r" ?\[ref=([a-z0-9]+)\]")
PEER_SNAPSHOT_LINK = re.compile(r"^- \[Snapshot\]\(([^)]+)\)$", re.M)
PEER_INLINE_SNAPSHOT = re.compile(r"^```yaml\n(.*?)^```", re.M | re.S)


# --------------------------------------------------------------------------
# Local pages for Chromium (the mock has the same screens behind launchApp).

PEOPLE_FIRST = ["Ada", "Alan", "Grace", "Edsger", "Barbara", "Donald", "Frances", "John", "Margaret", "Dennis"]


def page(title: str, body: str, script: str = "") -> str:
    return (
        f"<!doctype html><html><head><meta charset='utf-8'><title>{html.escape(title)}</title>"
        "<style>body{font:16px sans-serif;margin:20px}</style></head>"
        f"<body>{body}<script>{script}</script></body></html>"
    )


LOGIN = page(
    "Sign in",
    "<h1>Sign in</h1><form method='post' action='/login'>"
    "<label for='username'>Username</label> <input id='username' name='username' autocomplete='off'>"
    "<label for='password'>Password</label> <input id='password' name='password' type='password'>"
    "<button id='sign-in' type='submit'>Sign in</button></form>"
    "<p id='status'>Please sign in</p>",
)


def table_page() -> str:
    rows = "".join(
        f"<tr aria-label='Person {i:04}'><th>Person {i:04}</th>"
        f"<td class='who'>{PEOPLE_FIRST[i % 10]} Hopper, {PEOPLE_FIRST[i % 10].lower()}.hopper.{i}@example.com</td>"
        f"<td><button onclick='edit({i})'>Edit</button></td></tr>"
        for i in range(1000)
    )
    # The dialog comes first in the document: the browser driver's
    # snapshot is bounded and keeps a prefix of a tree this large.
    body = (
        "<div id='dialog' role='dialog' aria-label='Edit person' hidden style='position:fixed;top:100px;left:100px;"
        "background:#eef;padding:20px'><label for='name'>Name</label> <input id='name'>"
        "<button onclick='save()'>Save</button><button onclick='cancel()'>Cancel</button></div>"
        "<h1>People</h1><table aria-label='People'><tbody>" + rows + "</tbody></table>"
    )
    script = (
        "let editing=null;"
        "function edit(i){editing=i;const d=document.getElementById('dialog');d.hidden=false;"
        "document.getElementById('name').value=document.querySelectorAll('td.who')[i].textContent.split(',')[0];}"
        "function save(){const c=document.querySelectorAll('td.who')[editing];"
        "c.textContent=document.getElementById('name').value+','+c.textContent.split(',')[1];cancel();}"
        "function cancel(){document.getElementById('dialog').hidden=true;editing=null;}"
    )
    return page("People", body, script)


def article_page() -> str:
    words = "lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod tempor".split()
    parts = ["<h1>The Long Article</h1>"]
    link = 1
    for p in range(40):
        text = " ".join(words[(p + k) % len(words)] for k in range(75))
        links = 2 if p < 30 else 1
        anchors = " ".join(f"<a href='/ref/{link + k}'>Reference {link + k}</a>" for k in range(links))
        link += links
        parts.append(f"<p>{text}.</p><p>{anchors}</p>")
    return page("The Long Article", "".join(parts))


def reference_page(n: int) -> str:
    return page(f"Reference {n}", f"<h1>Reference {n}</h1><p>What reference {n} says.</p><a href='/article'>Back</a>")


MOVING = page(
    "Moving",
    "<h1>Almost there</h1><p id='status'>Waiting</p>"
    "<button id='continue' style='position:absolute;left:60px;top:700px;width:300px;height:50px;"
    "transition:top 600ms linear' onclick=\"document.getElementById('status').textContent='Done'\">Continue</button>",
    "requestAnimationFrame(()=>requestAnimationFrame(()=>{document.getElementById('continue').style.top='300px';}));"
    "setTimeout(()=>{const b=document.createElement('button');b.id='cancel';b.textContent='Cancel';"
    "b.style.cssText='position:absolute;left:60px;top:700px;width:300px;height:50px';"
    "b.onclick=()=>{document.getElementById('status').textContent='Cancelled'};document.body.appendChild(b);},700);",
)

CHANGES = page(
    "Changes",
    "<p id='status'>Nothing pressed</p><div id='area'></div>"
    "<button id='remove-save' onclick='op(\"remove\")'>Remove Save</button>"
    "<button id='insert-banner' onclick='op(\"banner\")'>Insert banner</button>"
    "<button id='replace-save' onclick='op(\"replace\")'>Replace Save</button>"
    "<button id='duplicate-save' onclick='op(\"duplicate\")'>Duplicate Save</button>"
    "<button id='reset' onclick='op(\"reset\")'>Reset</button>",
    "const st=s=>document.getElementById('status').textContent=s;"
    "function btn(name,said){const b=document.createElement('button');b.textContent=name;b.onclick=()=>st(said);return b;}"
    "function draw(o){const a=document.getElementById('area');a.replaceChildren();"
    "if(o.banner){const p=document.createElement('p');p.textContent='New: a banner pushed everything down';"
    "p.style.height='120px';a.append(p);}"
    "if(o.replace)a.append(btn('Discard','Discarded'));else if(!o.remove)a.append(btn('Save','Saved'));"
    "a.append(btn('Delete','Deleted'));if(o.duplicate)a.append(btn('Save','Saved twice'));}"
    "let o={};draw(o);"
    "function op(k){if(k==='reset'){o={};st('Nothing pressed');}else o[k]=true;draw(o);}",
)


class Pages(http.server.BaseHTTPRequestHandler):
    def _send(self, body: str) -> None:
        data = body.encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:  # noqa: N802
        path = urllib.parse.urlparse(self.path).path
        if path == "/table":
            self._send(table_page())
        elif path == "/article":
            self._send(article_page())
        elif path.startswith("/ref/"):
            self._send(reference_page(int(path[5:] or "0")))
        elif path == "/moving":
            self._send(MOVING)
        elif path == "/changes":
            self._send(CHANGES)
        else:
            self._send(LOGIN)

    def do_POST(self) -> None:  # noqa: N802
        length = int(self.headers.get("Content-Length", "0"))
        form = urllib.parse.parse_qs(self.rfile.read(length).decode())
        user = form.get("username", [""])[0]
        if form.get("password", [""])[0] == SECRET and user:
            self._send(page("Home", f"<h1 id='welcome'>Welcome, {html.escape(user)}</h1><button>Sign out</button>"))
        else:
            self._send(page("Denied", "<h1 id='denied'>Wrong password</h1>"))

    def log_message(self, *args: Any) -> None:
        pass


# --------------------------------------------------------------------------
# The counting agent.


@dataclass
class Figures:
    platform: str
    task: str
    mode: str
    calls: int = 0
    text: int = 0
    structured: int = 0
    image_b64: int = 0
    success: bool = False
    wrong_element: int = 0
    stale_refs: int = 0
    no_op_taps: int = 0
    no_op_flagged: int = 0
    settle_ms: int = 0
    wall_ms: int = 0
    note: str = ""
    # playwright-mcp: the snapshot files its results link and the agent
    # reads (not tool calls), and their characters (counted in `text`).
    file_reads: int = 0
    file_text: int = 0
    # Client-side time of each "type into a field by ref" call (ours: act
    # `type` with a ref; theirs: browser_type) and "tap by ref" call (ours:
    # act `tap` with a ref; theirs: browser_click), request to answer.
    type_ms: list[int] = field(default_factory=list)
    tap_ms: list[int] = field(default_factory=list)
    # The closing no-op tap's share of ours (the act call only): what the
    # pairing leaves out, as playwright-mcp's tasks end without it.
    no_op_ms: int = 0
    no_op_text: int = 0
    no_op_structured: int = 0

    @property
    def chars(self) -> int:
        return self.text + self.structured


class Failed(Exception):
    pass


def texts(result: Any) -> str:
    return "\n".join(c.text for c in result.content if getattr(c, "type", None) == "text")


class BenchAgent:
    """Calls tools, counts what comes back, and remembers outline lines by
    ref (a diff or an effect updates what it knows)."""

    def __init__(self, session: Any, device: str, figures: Figures):
        self.session = session
        self.device = device
        self.f = figures
        self.known: dict[str, str] = {}
        self.last_text = ""

    def _count(self, result: Any, baseline_act: bool) -> None:
        self.f.calls += 1
        text = texts(result)
        sc = result.structured_content
        if baseline_act and not result.is_error:
            # The answer of a tool without effects: its header line, and no
            # structured effect.
            text = text.split("\n", 1)[0]
            sc = {k: v for k, v in (sc or {}).items() if k not in ("effect", "settle", "target", "image")}
        else:
            for c in result.content:
                if getattr(c, "type", None) == "image":
                    self.f.image_b64 += len(c.data)
        self.f.text += len(text)
        if sc is not None:
            self.f.structured += len(json.dumps(sc, ensure_ascii=False, separators=(",", ":")))
        settle = (result.structured_content or {}).get("settle") or {}
        self.f.settle_ms += int(settle.get("ms") or 0)

    def learn(self, text: str, replace: bool) -> None:
        if replace:
            self.known = {}
        for line in text.splitlines():
            m = LINE.match(line)
            if not m:
                continue
            mark, ref, rest = m.groups()
            if mark == "-":
                self.known.pop(ref, None)
            elif mark != "=":
                self.known[ref] = rest

    async def call(self, name: str, args: dict[str, Any], *, baseline_act: bool = False) -> Any:
        t0 = time.monotonic()
        result = await asyncio.wait_for(self.session.call_tool(name, {"device": self.device, **args}), WAIT)
        ms = int((time.monotonic() - t0) * 1000)
        if name == "act" and "ref" in args:
            if args.get("action") == "type":
                self.f.type_ms.append(ms)
            elif args.get("action") == "tap":
                self.f.tap_ms.append(ms)
        blob = json.dumps(result.model_dump(mode="json", by_alias=True))
        if SECRET in blob:
            raise Failed(f"the secret leaked in a {name} result")
        self._count(result, baseline_act)
        self.last_text = texts(result)
        if TRANSCRIPT:
            print(f"--- {name} {json.dumps(args)}\n{self.last_text}\n{json.dumps(result.structured_content)}", file=sys.stderr)
        return result

    async def observe(self, **kw: Any) -> Any:
        r = await self.call("observe", kw)
        if r.is_error:
            raise Failed(f"observe {kw}: {texts(r)}")
        mode = r.structured_content["mode"]
        body = texts(r).partition("\n")[2]
        # A filtered or partial look adds to what the agent knows.
        self.learn(body, replace=mode in ("full", "newScreen") and not kw.get("filter") and not kw.get("subtree"))
        return r

    def find(self, pattern: str) -> str | None:
        for ref, line in self.known.items():
            if re.search(pattern, line):
                return ref
        return None


class Loop:
    """One task in one mode: the scripted decisions, shared by both modes."""

    def __init__(self, agent: BenchAgent, mode: str, noop_point: tuple[int, int]):
        self.a = agent
        self.mode = mode
        self.noop_point = noop_point

    async def start(self) -> None:
        """The first look, unless an act's answer already showed the screen."""
        if self.a.known:
            return
        if self.mode == "baseline":
            await self.a.observe(full=True, screenshot="always")
        else:
            await self.a.observe()

    async def act(self, args: dict[str, Any], ok: bool = True) -> Any:
        baseline = self.mode == "baseline"
        r = await self.a.call("act", args, baseline_act=baseline)
        if ok and r.is_error:
            raise Failed(f"act {args}: {texts(r)}")
        if not r.is_error:
            if baseline:
                await self.a.observe(full=True, screenshot="always")
            else:
                effect = texts(r).split("\n", 1)
                body = effect[1] if len(effect) > 1 else ""
                new_screen = bool((r.structured_content.get("effect") or {}).get("newScreen"))
                self.a.learn(body, replace=new_screen)
        return r

    async def ref(self, pattern: str, search: str) -> str:
        """The ref of the first known line matching `pattern`; else observe
        with `filter=search` (and, in baseline, the screenshot) and look again."""
        found = self.a.find(pattern)
        if found:
            return found
        kw: dict[str, Any] = {"filter": search}
        if self.mode == "baseline":
            kw.update(full=True, screenshot="always")
        await self.a.observe(**kw)
        found = self.a.find(pattern)
        if not found:
            raise Failed(f"no line matches {pattern!r}")
        return found

    def seen(self, text: str) -> bool:
        return text in self.a.last_text or any(text in line for line in self.a.known.values())

    async def no_op(self) -> None:
        x, y = self.noop_point
        text, structured, t0 = self.a.f.text, self.a.f.structured, time.monotonic()
        r = await self.a.call("act", {"action": "tap", "x": x, "y": y}, baseline_act=self.mode == "baseline")
        self.a.f.no_op_ms += int((time.monotonic() - t0) * 1000)
        self.a.f.no_op_text += self.a.f.text - text
        self.a.f.no_op_structured += self.a.f.structured - structured
        self.a.f.no_op_taps += 1
        eff = (r.structured_content or {}).get("effect") or {}
        if self.mode == "new" and eff.get("verdict") == "noVisibleChange" and "no visible change" in texts(r):
            self.a.f.no_op_flagged += 1
        if self.mode == "baseline":
            await self.a.observe(full=True, screenshot="always")


async def task_sign_in(loop: Loop, web: str | None) -> None:
    if web:
        await loop.act({"action": "navigate", "url": web + "/"})
    await loop.start()
    user = await loop.ref(r'"Username"', "Username")
    await loop.act({"action": "type", "ref": user, "text": "ada"})
    password = await loop.ref(r'"Password"', "Password")
    await loop.act({"action": "type", "ref": password, "secret": SECRET_NAME})
    sign_in = await loop.ref(r'button "Sign in"', "Sign in")
    await loop.act({"action": "tap", "ref": sign_in})
    loop.a.f.success = loop.seen("Welcome, ada")


async def task_table(loop: Loop, web: str | None) -> None:
    if web:
        await loop.act({"action": "navigate", "url": web + "/table"})
    else:
        await loop.act({"action": "launchApp", "appId": "table"})
    # The row's Edit button: filter by the row's name, then the Edit line
    # that follows the row line in the filtered outline.
    kw: dict[str, Any] = {"filter": "Person 0500"}
    if loop.mode == "baseline":
        kw.update(full=True, screenshot="always")
    r = await loop.a.observe(**kw)
    lines = texts(r).splitlines()
    row = next((i for i, l in enumerate(lines) if '"Person 0500"' in l), None)
    if row is None:
        raise Failed("row 500 not found")
    edit = next((LINE.match(l).group(2) for l in lines[row:] if 'button "Edit"' in l and LINE.match(l)), None)
    if edit is None:
        raise Failed("no Edit button in row 500")
    await loop.act({"action": "tap", "ref": edit})
    name = await loop.ref(r'(textField|textbox) "Name"', "Name")
    await loop.act({"action": "setValue", "ref": name, "text": "Ada Lovelace"})
    save = await loop.ref(r'button "Save"', "Save")
    r = await loop.act({"action": "tap", "ref": save})
    if loop.mode == "new":
        eff = r.structured_content["effect"]
        # Only row 500 changed: any other row named on a `~` (changed)
        # line is a wrong element. (Rows may come and go at the end of a
        # bounded browser snapshot as the dialog closes: `+`/`-` lines.)
        changed_rows = re.findall(r"^~ .*hopper\.(\d+)@", texts(r), re.M)
        loop.a.f.success = "Ada Lovelace" in texts(r) and changed_rows == ["500"]
        if any(n != "500" for n in changed_rows) or eff.get("changed", 0) > 2:
            loop.a.f.wrong_element += 1
    else:
        check = await loop.a.observe(filter="Person 0500", full=True, screenshot="always")
        loop.a.f.success = "Ada Lovelace" in texts(check)


async def task_article(loop: Loop, web: str | None) -> None:
    if web:
        await loop.act({"action": "navigate", "url": web + "/article"})
    else:
        await loop.act({"action": "launchApp", "appId": "article"})
    link = await loop.ref(r'link "Reference 57"', "Reference 57")
    await loop.act({"action": "tap", "ref": link})
    loop.a.f.success = loop.seen('heading "Reference 57"')
    if loop.seen('heading "Reference 5') and not loop.a.f.success:
        loop.a.f.wrong_element += 1


async def task_moving(loop: Loop, web: str | None) -> None:
    if web:
        await loop.act({"action": "navigate", "url": web + "/moving"})
    else:
        await loop.act({"action": "launchApp", "appId": "moving"})
    cont = await loop.ref(r'button "Continue"', "Continue")
    await loop.act({"action": "tap", "ref": cont})
    loop.a.f.success = loop.seen('"Done"')
    if loop.seen('"Cancelled"'):
        loop.a.f.wrong_element += 1


async def task_changes(loop: Loop, web: str | None) -> None:
    """The screen changes between observe and act: removed, replaced and
    duplicated must answer stale_ref (nothing pressed); moved must press the
    same element where it is now."""
    if web:
        await loop.act({"action": "navigate", "url": web + "/changes"})
    else:
        await loop.act({"action": "launchApp", "appId": "changes"})
    await loop.start()
    save = await loop.ref(r'button "Save"', "Save")
    controls = {}
    for name in ("Remove Save", "Replace Save", "Duplicate Save", "Insert banner", "Reset"):
        controls[name] = await loop.ref(rf'button "{name}"', name)
    ok = 0
    for change, reason in (("Remove Save", "gone"), ("Replace Save", "gone"), ("Duplicate Save", "ambiguous")):
        await loop.act({"action": "tap", "ref": controls[change]})
        r = await loop.act({"action": "tap", "ref": save}, ok=False)
        err = (r.structured_content or {}).get("error") or {}
        if r.is_error and err.get("code") == "stale_ref":
            loop.a.f.stale_refs += 1
            ok += err.get("reason") == reason
        else:
            # The tap went through on a changed screen: a wrong element.
            loop.a.f.wrong_element += 1
        await loop.act({"action": "tap", "ref": controls["Reset"]})
    await loop.act({"action": "tap", "ref": controls["Insert banner"]})
    r = await loop.act({"action": "tap", "ref": save})
    pressed = '"Saved"' in texts(r)
    if not pressed:
        loop.a.f.wrong_element += 1
    loop.a.f.success = ok == 3 and pressed


TASKS = {
    "sign in": task_sign_in,
    "edit row 500": task_table,
    "follow link 57": task_article,
    "moving button": task_moving,
    "changed under a ref": task_changes,
}
# Tasks compared against full re-observation (the last one only checks
# refs, so it runs in `new` mode only).
COMPARED = ["sign in", "edit row 500", "follow link 57", "moving button"]


# --------------------------------------------------------------------------
# The pairing: the same tasks through playwright-mcp.


class PeerAgent:
    """One playwright-mcp session: calls its tools, counts what comes back,
    and reads the snapshot file a result links (relative to the server's
    working directory). That read is an extra step for the agent, not a
    tool call; its characters count as text the agent reads. Remembers the
    last snapshot it saw (linked or inline) for the next decision."""

    def __init__(self, session: Any, workdir: str, figures: Figures):
        self.session = session
        self.workdir = workdir
        self.f = figures
        self.snapshot = ""

    async def call(self, name: str, args: dict[str, Any]) -> Any:
        t0 = time.monotonic()
        result = await asyncio.wait_for(self.session.call_tool(name, args), WAIT)
        ms = int((time.monotonic() - t0) * 1000)
        if name == "browser_type":
            self.f.type_ms.append(ms)
        elif name == "browser_click":
            self.f.tap_ms.append(ms)
        self.f.calls += 1
        text = texts(result)
        self.f.text += len(text)
        for c in result.content:
            if getattr(c, "type", None) == "image":
                self.f.image_b64 += len(c.data)
        if result.structured_content is not None:
            self.f.structured += len(json.dumps(result.structured_content, ensure_ascii=False, separators=(",", ":")))
        linked = PEER_SNAPSHOT_LINK.search(text)
        read = ""
        if linked:
            with open(os.path.join(self.workdir, linked.group(1)), encoding="utf-8") as fh:
                read = fh.read()
            self.f.file_reads += 1
            self.f.file_text += len(read)
            self.f.text += len(read)
        if SECRET in json.dumps(result.model_dump(mode="json", by_alias=True)) + read:
            raise Failed(f"the secret leaked in a {name} result")
        if TRANSCRIPT:
            print(f"--- {PEER} {name} {json.dumps(args)} ({ms} ms)\n{text}"
                  + (f"\n--- read {linked.group(1)}\n{read}" if linked else ""), file=sys.stderr)
        if result.is_error:
            raise Failed(f"{name} {args}: {text[:200]}")
        inline = PEER_INLINE_SNAPSHOT.search(text)
        if linked:
            self.snapshot = read
        elif inline:
            self.snapshot = inline.group(1)
        return result

    def target(self, pattern: str, after: str | None = None) -> dict[str, str]:
        """`{target, element}` for the first snapshot line matching
        `pattern` (after the first line matching `after`, if given); the
        element's description is the line without its ref."""
        lines = self.snapshot.splitlines()
        if after is not None:
            start = next((i for i, l in enumerate(lines) if re.search(after, l)), None)
            if start is None:
                raise Failed(f"no snapshot line matches {after!r}")
            lines = lines[start + 1:]
        for line in lines:
            ref = PEER_REF.search(line)
            if ref and re.search(pattern, line):
                return {"target": ref.group(1), "element": PEER_REF.sub("", line).strip(" -:")}
        raise Failed(f"no snapshot line matches {pattern!r}")


def peer_rows(snapshot: str) -> dict[str, list[str]]:
    """Each table row's lines (the row and its cells), refs left out."""
    rows: dict[str, list[str]] = {}
    current: list[str] | None = None
    indent = 0
    for line in snapshot.splitlines():
        depth = len(line) - len(line.lstrip())
        m = re.match(r'\s*- row "([^"]*)"', line)
        if m:
            current, indent = rows.setdefault(m.group(1), []), depth
        elif depth <= indent:
            current = None
        if current is not None:
            current.append(PEER_REF.sub("", line).strip())
    return rows


async def peer_sign_in(p: PeerAgent, web: str) -> None:
    await p.call("browser_navigate", {"url": web + "/"})
    await p.call("browser_type", {**p.target(r'textbox "Username"'), "text": "ada"})
    # The secret's name: browser_type looks it up among --secrets and fills
    # the value (and redacts the value in its answers).
    await p.call("browser_type", {**p.target(r'textbox "Password"'), "text": SECRET_NAME})
    await p.call("browser_click", p.target(r'button "Sign in"'))
    p.f.success = "Welcome, ada" in p.snapshot


async def peer_table(p: PeerAgent, web: str) -> None:
    await p.call("browser_navigate", {"url": web + "/table"})
    before = peer_rows(p.snapshot)
    # The Edit button that follows the row's line.
    await p.call("browser_click", p.target(r'button "Edit"', after=r'row "Person 0500"'))
    await p.call("browser_type", {**p.target(r'textbox "Name"'), "text": "Ada Lovelace"})
    await p.call("browser_click", p.target(r'button "Save"'))
    # Row 500 shows the new name and no other row changed.
    await p.call("browser_snapshot", {})
    after = peer_rows(p.snapshot)
    changed = sorted(n for n in before.keys() | after.keys() if before.get(n) != after.get(n))
    p.f.success = changed == ["Person 0500"] and any("Ada Lovelace" in l for l in after["Person 0500"])
    if any(n != "Person 0500" for n in changed):
        p.f.wrong_element += 1


async def peer_article(p: PeerAgent, web: str) -> None:
    await p.call("browser_navigate", {"url": web + "/article"})
    await p.call("browser_click", p.target(r'link "Reference 57"'))
    p.f.success = 'heading "Reference 57"' in p.snapshot
    if 'heading "Reference 5' in p.snapshot and not p.f.success:
        p.f.wrong_element += 1


async def peer_moving(p: PeerAgent, web: str) -> None:
    await p.call("browser_navigate", {"url": web + "/moving"})
    # Its click waits for the element to be stable: the button's ref is
    # tapped where the animation leaves it.
    await p.call("browser_click", p.target(r'button "Continue"'))
    p.f.success = re.search(r"^\s*- paragraph.*: Done$", p.snapshot, re.M) is not None
    if re.search(r"^\s*- paragraph.*: Cancelled$", p.snapshot, re.M):
        p.f.wrong_element += 1


PEER_TASKS = {
    "sign in": peer_sign_in,
    "edit row 500": peer_table,
    "follow link 57": peer_article,
    "moving button": peer_moving,
}
assert set(PEER_TASKS) == set(COMPARED)


def peer_cli(args: argparse.Namespace) -> str | None:
    """playwright-mcp's cli.js when `--peer playwright-mcp` can run; else
    None, with the reason on stderr."""
    if args.peer != PEER:
        return None
    cli = os.environ.get("PLAYWRIGHT_MCP_CLI")
    why = None
    if not cli:
        why = "PLAYWRIGHT_MCP_CLI is unset"
    elif not os.path.isfile(cli):
        why = f"PLAYWRIGHT_MCP_CLI names no file ({cli})"
    elif not shutil.which("node"):
        why = "no `node` on PATH"
    elif "chromium" not in args.platforms.split(","):
        why = "it runs on chromium only, which is not among --platforms"
    if why:
        print(f"agent_bench: skipping the {PEER} pairing: {why}", file=sys.stderr, flush=True)
        return None
    return cli


@contextlib.asynccontextmanager
async def peer_server(cli: str) -> AsyncIterator[tuple[ClientSession, str]]:
    """A fresh playwright-mcp server (its browser starts on the first
    call) in a temporary working directory that takes its `.playwright-mcp/`
    output files and the secrets file; the session and that directory."""
    work = tempfile.mkdtemp(prefix="agent-bench-playwright-mcp-")
    try:
        secrets = os.path.join(work, "secrets.env")
        with open(secrets, "w") as fh:
            fh.write(f"{SECRET_NAME}={SECRET}\n")
        params = StdioServerParameters(
            command="node",
            args=[
                cli, "--headless", "--isolated", "--no-sandbox",
                "--executable-path", os.environ.get("CHROME_PATH") or "/usr/bin/chromium",
                "--viewport-size", "1280x800", "--image-responses", "omit", "--secrets", secrets,
            ],
            # A private home, like ours.
            env={"PATH": os.environ.get("PATH", ""), "HOME": work},
            cwd=work,
        )
        with open(os.path.join(work, "stderr.log"), "w") as log:
            async with stdio_client(params, errlog=log) as (read, write):
                async with ClientSession(read, write) as session:
                    await asyncio.wait_for(session.initialize(), WAIT)
                    yield session, work
    finally:
        shutil.rmtree(work, ignore_errors=True)


async def run_peer(task: str, web: str, cli: str) -> Figures:
    """One task through a fresh playwright-mcp server."""
    f = Figures("chromium", task, PEER)
    t0 = time.monotonic()
    async with peer_server(cli) as (session, work):
        try:
            await PEER_TASKS[task](PeerAgent(session, work, f), web)
        except Failed as e:
            f.success = False
            f.note = str(e)[:300]
    f.wall_ms = int((time.monotonic() - t0) * 1000)
    return f


# Times "type into a field by ref" is repeated in one server each.
TYPE_REPEATS = 15


async def repeat_type(web: str, cli: str, plugins: str) -> dict[str, Any]:
    """`type` by ref into the sign-in page's Username field, TYPE_REPEATS
    times in one server each, the page loaded afresh and looked at before
    every try (not timed): ours `act type` (its answer says what changed:
    the field's value), with its screenshot evidence (the default) and
    without (screenshot policy omit: what changed read from the tree
    alone, as browser_snapshot reads it), theirs `browser_type` alone (a fill; its answer
    shows nothing of the page) and `browser_type` + `browser_snapshot`
    (what changed, read from the page). Every try is checked: the field
    holds "ada" afterwards. Medians in ms, request to answer on the
    client."""
    async def ours_with(policy: str) -> list[float]:
        times: list[float] = []
        env = {"DEVICERAIL_BROWSER_VIEWPORT": "1280x800", "RUST_LOG": "warn",
               "DEVICERAIL_SCREENSHOT_POLICY": policy}
        async with mcp_server(plugins, env) as (session, _, _):
            listed = (await session.call_tool("devices", {})).structured_content["devices"]
            device = next(d["id"] for d in listed if d["platform"] == "web")
            for _ in range(TYPE_REPEATS):
                await session.call_tool("act", {"device": device, "action": "navigate", "url": web + "/"})
                r = await session.call_tool("observe", {"device": device, "full": True})
                ref = next((m.group(2) for m in map(LINE.match, texts(r).splitlines())
                            if m and 'textbox "Username"' in m.group(3)), None)
                if ref is None:
                    raise Failed("no Username field in the outline")
                t0 = time.monotonic()
                r = await session.call_tool("act", {"device": device, "action": "type", "ref": ref, "text": "ada"})
                times.append((time.monotonic() - t0) * 1000)
                if r.is_error or '"ada"' not in texts(r):
                    raise Failed(f"type did not show the value: {texts(r)[:300]}")
        return times

    # With its screenshot evidence (the default), and without (the same
    # work as browser_type + browser_snapshot: the tree read after).
    ours = await ours_with("capture")
    ours_tree_only = await ours_with("omit")
    fill: list[float] = []
    fill_and_look: list[float] = []
    async with peer_server(cli) as (session, work):
        p = PeerAgent(session, work, Figures("chromium", "type", PEER))
        for _ in range(TYPE_REPEATS):
            await p.call("browser_navigate", {"url": web + "/"})
            field_ = p.target(r'textbox "Username"')
            t0 = time.monotonic()
            await p.call("browser_type", {**field_, "text": "ada"})
            t1 = time.monotonic()
            await p.call("browser_snapshot", {})
            t2 = time.monotonic()
            fill.append((t1 - t0) * 1000)
            fill_and_look.append((t2 - t0) * 1000)
            if not re.search(r'textbox "Username".*: ada$', p.snapshot, re.M):
                raise Failed("browser_type did not fill the field")
    med = statistics.median
    return {
        "repeats": TYPE_REPEATS,
        "ours_ms": med(ours),
        "ours_tree_only_ms": med(ours_tree_only),
        "theirs_type_ms": med(fill),
        "theirs_type_snapshot_ms": med(fill_and_look),
        "ratio_type": med(ours) / med(fill),
        "ratio_type_snapshot": med(ours) / med(fill_and_look),
        "ratio_tree_only_type_snapshot": med(ours_tree_only) / med(fill_and_look),
    }


async def run_one(platform: str, task: str, mode: str, plugins: str, web: str | None, paired: bool = False) -> Figures:
    f = Figures(platform, task, mode)
    env = {"DEVICERAIL_BROWSER_VIEWPORT": "1280x800"} if platform == "chromium" else {}
    if paired:
        # Timed against another server: mcp_server's RUST_LOG=debug would
        # slow ours down (the browser worker logs every step), so warn only.
        env["RUST_LOG"] = "warn"
    t0 = time.monotonic()
    try:
        async with mcp_server(plugins, env) as (session, _, _):
            listed = (await session.call_tool("devices", {})).structured_content["devices"]
            want = "web" if platform == "chromium" else None
            devices = [d["id"] for d in listed if (d["platform"] == "web") == (want == "web")]
            if not devices:
                raise Failed(f"no {platform} device in {listed}")
            agent = BenchAgent(session, devices[0], f)
            loop = Loop(agent, mode, (1250, 780) if platform == "chromium" else (700, 1250))
            try:
                await TASKS[task](loop, web)
                await loop.no_op()
            except Failed as e:
                f.success = False
                f.note = str(e)[:300]
    except Failed as e:
        f.success = False
        f.note = str(e)[:300]
    f.wall_ms = int((time.monotonic() - t0) * 1000)
    return f


def table(rows: list[Figures]) -> str:
    out = [
        "| platform | task | mode | calls | text | structured | total chars | image b64 | success | wrong element | stale_ref | no-op flagged | settle ms |",
        "|---|---|---|---:|---:|---:|---:|---:|---|---:|---:|---|---:|",
    ]
    for f in rows:
        flagged = f"{f.no_op_flagged}/{f.no_op_taps}" if f.mode == "new" else "n/a"
        out.append(
            f"| {f.platform} | {f.task} | {f.mode} | {f.calls} | {f.text:,} | {f.structured:,} | {f.chars:,} | "
            f"{f.image_b64:,} | {'yes' if f.success else 'NO ' + f.note} | {f.wrong_element} | {f.stale_refs} | {flagged} | {f.settle_ms:,} |"
        )
    return "\n".join(out)


def summary(rows: list[Figures]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for platform in sorted({f.platform for f in rows}):
        per = {}
        for mode in ("new", "baseline"):
            sel = [f for f in rows if f.platform == platform and f.mode == mode and f.task in COMPARED]
            per[mode] = {
                "text": sum(f.text for f in sel),
                "chars": sum(f.chars for f in sel),
                "with_images": sum(f.chars + f.image_b64 for f in sel),
                "calls": sum(f.calls for f in sel),
            }
        new, base = per["new"], per["baseline"]
        per["reduction_text"] = 1 - new["text"] / base["text"] if base["text"] else 0.0
        per["reduction_chars"] = 1 - new["chars"] / base["chars"] if base["chars"] else 0.0
        per["reduction_with_images"] = 1 - new["with_images"] / base["with_images"] if base["with_images"] else 0.0
        per["per_task_reduction"] = {
            t: 1 - sum(f.chars for f in rows if f.platform == platform and f.mode == "new" and f.task == t)
            / max(1, sum(f.chars for f in rows if f.platform == platform and f.mode == "baseline" and f.task == t))
            for t in COMPARED
        }
        out[platform] = per
    mine = [f for f in rows if f.mode != PEER]
    out["all_succeeded"] = all(f.success for f in mine)
    out["wrong_element"] = sum(f.wrong_element for f in mine)
    out["no_op_taps"] = sum(f.no_op_taps for f in mine if f.mode == "new")
    out["no_op_flagged"] = sum(f.no_op_flagged for f in mine if f.mode == "new")
    out["stale_refs"] = sum(f.stale_refs for f in mine)
    return out


def peer_summary(rows: list[Figures]) -> dict[str, Any]:
    """Ours (`new` on chromium, without the closing no-op tap) against
    playwright-mcp per compared task, and the median type/tap-by-ref call
    times with the ratio ours/theirs (below 1: ours is faster)."""
    ours = {f.task: f for f in rows if f.platform == "chromium" and f.mode == "new" and f.task in COMPARED}
    theirs = {f.task: f for f in rows if f.mode == PEER}
    both = [t for t in COMPARED if t in ours and t in theirs]

    def side(f: Figures) -> dict[str, Any]:
        return {
            "calls": f.calls - f.no_op_taps,
            "text": f.text - f.no_op_text,
            "structured": f.structured - f.no_op_structured,
            "snapshot_files_read": f.file_reads,
            "snapshot_file_text": f.file_text,
            "wall_ms": f.wall_ms - f.no_op_ms,
            "success": f.success,
        }

    def timing(attr: str) -> dict[str, Any]:
        mine = [ms for t in both for ms in getattr(ours[t], attr)]
        other = [ms for t in both for ms in getattr(theirs[t], attr)]
        m_ours = statistics.median(mine) if mine else None
        m_theirs = statistics.median(other) if other else None
        return {
            "ours_ms": m_ours, "theirs_ms": m_theirs, "ours_n": len(mine), "theirs_n": len(other),
            "ratio": m_ours / m_theirs if m_ours is not None and m_theirs else None,
        }

    tasks = {t: {"ours": side(ours[t]), "theirs": side(theirs[t])} for t in both}
    total = {
        who: {k: sum(tasks[t][who][k] for t in both) for k in ("calls", "text", "structured", "snapshot_file_text", "wall_ms")}
        | {"success": all(tasks[t][who]["success"] for t in both)}
        for who in ("ours", "theirs")
    }
    return {
        "server": PEER,
        "tasks": tasks,
        "total": total,
        "type_by_ref": timing("type_ms"),
        "tap_by_ref": timing("tap_ms"),
    }


def peer_markdown(p: dict[str, Any]) -> str:
    out = [
        f"Paired with {PEER} on chromium. Ours: `new` mode without its closing no-op tap ({PEER} has no tap at a "
        "point without `--caps vision`). Theirs: text = tool results + the snapshot files they link, which the agent "
        "reads (not counted as calls). Wall ms: server start to exit.",
        "",
        "| task | server | calls | text chars | of which snapshot files | structured | wall ms | success |",
        "|---|---|---:|---:|---:|---:|---:|---|",
    ]
    for task, sides in list(p["tasks"].items()) + [("total", p["total"])]:
        for who, name in (("ours", "devicerail"), ("theirs", PEER)):
            d = sides[who]
            out.append(
                f"| {task} | {name} | {d['calls']} | {d['text']:,} | {d['snapshot_file_text']:,} | {d['structured']:,} | "
                f"{d['wall_ms']:,} | {'yes' if d['success'] else 'NO'} |"
            )
    out.append("")
    for key, what in (("type_by_ref", "type into a field by ref"), ("tap_by_ref", "tap by ref")):
        t = p[key]
        ratio = f"{t['ratio']:.2f}" if t["ratio"] is not None else "n/a"
        ours = f"{t['ours_ms']:.0f}" if t["ours_ms"] is not None else "n/a"
        theirs = f"{t['theirs_ms']:.0f}" if t["theirs_ms"] is not None else "n/a"
        out.append(
            f"{what}: median {ours} ms (ours, n={t['ours_n']}) vs {theirs} ms "
            f"({PEER}, n={t['theirs_n']}); ours/theirs {ratio}"
        )
    return "\n".join(out)


async def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--platforms", default="mock,chromium")
    ap.add_argument("--json", help="write the raw figures here")
    ap.add_argument("--tasks", default=",".join(TASKS), help="comma-separated task names")
    ap.add_argument("--peer", choices=[PEER], help="also run the compared tasks on chromium through this server "
                    "(its cli.js in PLAYWRIGHT_MCP_CLI) and compare")
    args = ap.parse_args()
    cli = peer_cli(args)
    plugins = os.environ["DEVICERAIL_PLUGINS_DIR"]
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Pages)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    web = f"http://127.0.0.1:{server.server_address[1]}"
    rows: list[Figures] = []
    try:
        for platform in args.platforms.split(","):
            for task in args.tasks.split(","):
                modes = ["new", "baseline"] if task in COMPARED else ["new"]
                if cli and platform == "chromium" and task in COMPARED:
                    modes.append(PEER)
                for mode in modes:
                    if mode == PEER:
                        assert cli is not None
                        f = await run_peer(task, web, cli)
                    else:
                        f = await run_one(platform, task, mode, plugins, web if platform == "chromium" else None,
                                          paired=args.peer is not None)
                    print(f"{platform} / {task} / {mode}: {f.chars:,} chars in {f.calls} calls, "
                          f"success={f.success} {f.note}", file=sys.stderr, flush=True)
                    rows.append(f)
        repeated = await repeat_type(web, cli, plugins) if cli else None
    finally:
        server.shutdown()
        server.server_close()
    s = summary(rows)
    print(table(rows))
    print()
    for platform in args.platforms.split(","):
        p = s[platform]
        print(f"{platform}: text {p['new']['text']:,} chars (new) vs {p['baseline']['text']:,} (full re-observation): "
              f"{p['reduction_text']:.0%} fewer; text + structured {p['new']['chars']:,} vs {p['baseline']['chars']:,}: "
              f"{p['reduction_chars']:.0%} fewer; with images {p['reduction_with_images']:.0%} fewer; "
              f"tool calls {p['new']['calls']} vs {p['baseline']['calls']}")
    print(f"all tasks succeeded: {s['all_succeeded']}; wrong-element actions: {s['wrong_element']}; "
          f"stale_ref answers: {s['stale_refs']}; no-op taps flagged: {s['no_op_flagged']} of {s['no_op_taps']}")
    out: dict[str, Any] = {"rows": [asdict(f) | {"chars": f.chars} for f in rows], "summary": s}
    if cli:
        out["peer"] = peer_summary(rows)
        print()
        print(peer_markdown(out["peer"]))
    if repeated:
        out["peer"]["type_repeated"] = repeated
        r = repeated
        print(f"type into the sign-in page's Username by ref, {r['repeats']} times each, medians: ours "
              f"{r['ours_ms']:.0f} ms (its answer: the field's new value); {PEER} browser_type {r['theirs_type_ms']:.0f} ms "
              f"(no answer about the page): {r['ratio_type']:.2f}x; browser_type + browser_snapshot "
              f"{r['theirs_type_snapshot_ms']:.0f} ms: {r['ratio_type_snapshot']:.2f}x; ours without screenshot "
              f"evidence (screenshot policy omit: the tree read after, as browser_snapshot) {r['ours_tree_only_ms']:.0f} ms: "
              f"{r['ours_tree_only_ms'] / r['theirs_type_ms']:.2f}x browser_type, "
              f"{r['ratio_tree_only_type_snapshot']:.2f}x browser_type + browser_snapshot")
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(out, fh, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
