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

Tasks (the same scripted decisions in both modes, regexes over outline
lines): sign in; edit row 500 of a 1,000-row table; follow link 57 of a long
article; tap a button that moves after an animation; and, in `new` mode, a
screen that changes under a ref (removed, replaced, duplicated: `stale_ref`
expected; moved: the same element tapped where it is now). Every task ends
with a tap on an empty spot, which must be flagged `no visible change`.

Per task it reports characters returned to the agent (text, structured,
base64 image), tool calls, success, wrong-element actions, no-op taps
flagged, settle time and wall time; then the totals and the reduction of
`new` against `baseline`. Output: a Markdown table on stdout and, with
`--json PATH`, the raw figures.

    DEVICERAIL_BIN=... DEVICERAIL_PLUGINS_DIR=... python agent_bench.py \
        [--platforms mock,chromium] [--json out.json]

`scripts/bench-agent` builds the binary and plugins and runs it;
`host/cli/tests/mcp.rs` runs it once and checks the issue's targets.
"""

from __future__ import annotations

import argparse
import asyncio
import html
import http.server
import json
import os
import re
import sys
import threading
import time
import urllib.parse
from dataclasses import asdict, dataclass, field
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mcp_agent import SECRET, SECRET_NAME, mcp_server  # noqa: E402

WAIT = 120.0
# Print every call and its answer to stderr.
TRANSCRIPT = bool(os.environ.get("AGENT_BENCH_TRANSCRIPT"))
LINE = re.compile(r"^\s*(?:([~+\-↕=])\s+)?(e\d+) (.*)$")


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
        result = await asyncio.wait_for(self.session.call_tool(name, {"device": self.device, **args}), WAIT)
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
        r = await self.a.call("act", {"action": "tap", "x": x, "y": y}, baseline_act=self.mode == "baseline")
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


async def run_one(platform: str, task: str, mode: str, plugins: str, web: str | None) -> Figures:
    f = Figures(platform, task, mode)
    env = {"DEVICERAIL_BROWSER_VIEWPORT": "1280x800"} if platform == "chromium" else {}
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
    mine = [f for f in rows]
    out["all_succeeded"] = all(f.success for f in mine)
    out["wrong_element"] = sum(f.wrong_element for f in mine)
    out["no_op_taps"] = sum(f.no_op_taps for f in mine if f.mode == "new")
    out["no_op_flagged"] = sum(f.no_op_flagged for f in mine if f.mode == "new")
    out["stale_refs"] = sum(f.stale_refs for f in mine)
    return out


async def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--platforms", default="mock,chromium")
    ap.add_argument("--json", help="write the raw figures here")
    ap.add_argument("--tasks", default=",".join(TASKS), help="comma-separated task names")
    args = ap.parse_args()
    plugins = os.environ["DEVICERAIL_PLUGINS_DIR"]
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Pages)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    web = f"http://127.0.0.1:{server.server_address[1]}"
    rows: list[Figures] = []
    try:
        for platform in args.platforms.split(","):
            for task in args.tasks.split(","):
                for mode in ("new", "baseline") if task in COMPARED else ("new",):
                    f = await run_one(platform, task, mode, plugins, web if platform == "chromium" else None)
                    print(f"{platform} / {task} / {mode}: {f.chars:,} chars in {f.calls} calls, "
                          f"success={f.success} {f.note}", file=sys.stderr, flush=True)
                    rows.append(f)
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
    if args.json:
        with open(args.json, "w") as fh:
            json.dump({"rows": [asdict(f) | {"chars": f.chars} for f in rows], "summary": s}, fh, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
