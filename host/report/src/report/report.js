(() => {
  'use strict';
  // Everything shown comes from the embedded data; every text reaches the
  // DOM through textContent. Images are decoded only when shown.
  const data = JSON.parse(document.getElementById('report-data').textContent);
  const events = data.events;
  const snapshots = data.snapshots || {};
  const effects = data.effects || {};
  const t0 = events.length ? events[0].atMs : data.session.startedAtMs;

  function el(tag, cls, text) {
    const e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined && text !== null) e.textContent = String(text);
    return e;
  }
  function fmtMs(ms) {
    if (ms === null || ms === undefined || isNaN(ms)) return '?';
    if (Math.abs(ms) < 1000) return ms + ' ms';
    return (ms / 1000).toFixed(ms < 60000 ? 2 : 0) + ' s';
  }
  function fmtOffset(ms) { return '+' + (ms / 1000).toFixed(3) + 's'; }
  function fmtTime(ms) { return ms ? new Date(ms).toISOString().replace('T', ' ').replace('Z', ' UTC') : '-'; }
  function pretty(v) { return JSON.stringify(v, null, 2); }

  // --- images, decoded lazily from their embedded base64 ---
  const urls = new Map();
  function blobUrl(sha) {
    if (urls.has(sha)) return urls.get(sha);
    const node = document.getElementById('blob-' + sha);
    if (!node) return null;
    const bin = atob(node.textContent.trim());
    const bytes = new Uint8Array(bin.length);
    for (let i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i);
    const url = URL.createObjectURL(new Blob([bytes], { type: node.dataset.mediaType }));
    urls.set(sha, url);
    document.body.dataset.decodedImages = urls.size;
    return url;
  }

  // --- index: calls, failures ---
  const calls = new Map();
  for (const e of events) {
    const p = e.payload;
    if (p.type === 'actionStarted') calls.set(p.call.id, { start: e, done: null });
    else if (p.type === 'actionCompleted') {
      const c = calls.get(p.callId);
      if (c) c.done = e; else calls.set(p.callId, { start: null, done: e });
    }
  }
  // Observations with a screenshot, in log order (for the "latest
  // screenshot before an action").
  const shots = [];
  for (const e of events) {
    const p = e.payload;
    const found = [];
    if (p.type === 'observationCaptured') found.push(p.observation);
    if (p.type === 'actionCompleted' && p.outcome.outcome === 'succeeded') found.push(p.outcome.result.before, p.outcome.result.after);
    for (const o of found) if (o && o.screenshot) shots.push({ seq: e.sequence, obs: o });
  }
  function latestShotBefore(seq) {
    let best = null;
    for (const s of shots) { if (s.seq < seq) best = s.obs; else break; }
    return best;
  }
  function callOf(e) {
    const p = e.payload;
    if (p.type === 'actionStarted') return calls.get(p.call.id);
    if (p.type === 'actionCompleted') return calls.get(p.callId);
    return null;
  }
  function callName(c) { return c && c.start ? c.start.payload.call.name : '(unknown action)'; }
  function outcomeOf(c) { return c && c.done ? c.done.payload.outcome : null; }
  function isFailed(e) {
    const p = e.payload;
    if (p.type === 'error') return true;
    if (p.type === 'verdictRecorded') return p.verdict.status === 'fail';
    if (p.type === 'sessionEnded') return p.outcome !== 'completed';
    const c = callOf(e);
    if (!c) return false;
    const o = outcomeOf(c);
    return !!o && o.outcome !== 'succeeded';
  }
  function duration(c) {
    const o = outcomeOf(c);
    if (o && o.outcome === 'succeeded') return o.result.finishedAtMs - o.result.startedAtMs;
    if (c && c.start && c.done) return c.done.atMs - c.start.atMs;
    return null;
  }
  function executionText(x) {
    if (!x) return null;
    if (x.mode === 'nativeSemantic') return 'native';
    if (x.mode === 'webSemantic') return 'web';
    if (x.mode === 'coordinateFallback') return 'coordinate fallback (' + x.fallbackReason + ')';
    return x.mode;
  }
  function summary(e) {
    const p = e.payload;
    switch (p.type) {
      case 'sessionStarted': return ['\u25CF', 'Session started'];
      case 'sessionEnded': return ['\u25A0', 'Session ended: ' + p.outcome + (p.reason ? ' \u2014 ' + p.reason : '')];
      case 'observationCaptured': {
        const o = p.observation;
        const what = o.screenshot ? 'screenshot' : 'no screenshot' + (o.screenshotOmission ? ' (' + o.screenshotOmission + ')' : '');
        const tree = o.uiSnapshot ? ', UI tree of ' + o.uiSnapshot.nodeCount + ' nodes' : '';
        return ['\u25A3', 'Observation: ' + what + tree];
      }
      case 'actionStarted':
        return ['\u25B6', p.call.name + (p.call.argumentsRedacted ? ' (arguments redacted)' : '')];
      case 'actionCompleted': {
        const c = calls.get(p.callId);
        const o = p.outcome;
        let s = callName(c) + ' \u2014 ' + o.outcome + ' in ' + fmtMs(duration(c));
        if (o.error) s += ': ' + o.error.code;
        const fx = effects[p.callId];
        if (fx && fx.verdict === 'noVisibleChange') s += ' \u2014 \u26A0 no visible change';
        return [o.outcome === 'succeeded' ? '\u2714' : '\u2718', s];
      }
      case 'verdictRecorded': return ['\u2691', 'Verdict ' + p.verdict.status.toUpperCase() + ': ' + p.verdict.summary];
      case 'error': return ['\u26A0', 'Error ' + p.error.code + ': ' + p.error.message];
      case 'mediaStreamStarted': return ['\u25B7', 'Media stream started'];
      case 'mediaFrameCaptured': return ['\u25AB', 'Media frame'];
      case 'mediaStreamEnded': return ['\u25A1', 'Media stream ended (' + p.frameCount + ' frames)'];
      default: return ['?', p.type];
    }
  }

  // --- summary header ---
  const header = document.getElementById('summary');
  const s = data.session;
  const actionCount = [...calls.values()].filter((c) => c.start).length;
  const failedCount = [...calls.values()].filter((c) => { const o = outcomeOf(c); return o && o.outcome !== 'succeeded'; }).length;
  const ended = events.find((e) => e.payload.type === 'sessionEnded');
  const verdicts = events.filter((e) => e.payload.type === 'verdictRecorded');
  header.appendChild(el('h1', null, 'Session ' + s.id));
  const stat = (label, value, id) => {
    const span = el('span', 'stat');
    if (id) span.id = id;
    span.append(label + ': ');
    span.appendChild(el('b', null, value));
    header.appendChild(span);
  };
  stat('state', s.state + (ended ? ' (' + ended.payload.outcome + ')' : ''));
  stat('started', fmtTime(s.startedAtMs));
  stat('duration', s.endedAtMs ? fmtMs(s.endedAtMs - s.startedAtMs) : 'running');
  stat('events', events.length, 'event-count');
  stat('actions', actionCount);
  stat('failed', failedCount, 'failed-count');
  if (verdicts.length) stat('verdict', verdicts[verdicts.length - 1].payload.verdict.status.toUpperCase());
  header.appendChild(el('span', 'stat producer', data.producer));

  // --- a replay: both sides, step by step ---
  if (data.replay) {
    const r = data.replay;
    const box = document.getElementById('replay');
    box.hidden = false;
    const counts = {};
    for (const st of r.steps) counts[st.verdict] = (counts[st.verdict] || 0) + 1;
    box.querySelector('summary').textContent = 'Replay of Session ' + r.replays + ': ' +
      ['matched', 'healed', 'diverged', 'skipped'].map((v) => (counts[v] || 0) + ' ' + v).join(', ') +
      (r.recordedAvailable ? '' : ' (the recorded Session is not in this data directory: its side is not shown)');
    const table = el('table');
    const head = el('tr');
    for (const h of ['step', 'action', 'verdict', 'note', 'recorded before', 'recorded after', 'replayed after']) head.appendChild(el('th', null, h));
    table.appendChild(head);
    const thumb = (sha) => {
      const td = el('td');
      const url = sha ? blobUrl(sha) : null;
      if (!url) { td.appendChild(el('span', 'none', sha ? 'not embedded' : 'none')); return td; }
      const span = el('span', 'thumb');
      const img = document.createElement('img');
      img.alt = 'screenshot ' + sha.slice(0, 12);
      img.loading = 'lazy';
      img.src = url;
      span.appendChild(img);
      td.appendChild(span);
      return td;
    };
    for (const st of r.steps) {
      const tr = el('tr', 'replay-step ' + st.verdict);
      tr.dataset.step = st.number;
      tr.appendChild(el('td', null, st.number));
      tr.appendChild(el('td', null, st.action));
      const v = el('td');
      v.appendChild(el('span', 'badge ' + st.verdict, st.verdict));
      tr.appendChild(v);
      tr.appendChild(el('td', null, st.note));
      tr.appendChild(thumb(st.recordedBefore));
      tr.appendChild(thumb(st.recordedAfter));
      tr.appendChild(thumb(st.replayedAfter));
      table.appendChild(tr);
    }
    document.getElementById('replay-steps').appendChild(table);
  }

  // --- timeline ---
  const timeline = document.getElementById('timeline');
  const rows = [];
  const bySeq = new Map();
  const names = new Set();
  for (const e of events) {
    const li = el('li');
    const [icon, text] = summary(e);
    li.id = 'event-' + e.sequence;
    li.dataset.seq = e.sequence;
    li.dataset.type = e.payload.type;
    const c = callOf(e);
    if (c) { li.dataset.action = callName(c); names.add(callName(c)); }
    if (isFailed(e)) li.classList.add('failed');
    li.append(el('span', 'seq', '#' + e.sequence), el('span', 'at', fmtOffset(e.atMs - t0)), el('span', 'icon', icon), el('span', 'what', text));
    li.title = text;
    li.addEventListener('click', () => select(e.sequence));
    const row = { li, e, text: text.toLowerCase() };
    rows.push(row);
    bySeq.set(e.sequence, row);
  }
  timeline.append(...rows.map((r) => r.li));
  if (!events.length) timeline.appendChild(el('li', 'empty', 'This session has no events.'));

  // --- filters ---
  const fFailed = document.getElementById('filter-failed');
  const fAction = document.getElementById('filter-action');
  const fText = document.getElementById('filter-text');
  const shown = document.getElementById('shown-count');
  for (const n of [...names].sort()) fAction.appendChild(el('option', null, n));
  function applyFilters() {
    const failedOnly = fFailed.checked;
    const action = fAction.value;
    const q = fText.value.trim().toLowerCase();
    let n = 0;
    for (const r of rows) {
      const ok = (!failedOnly || r.li.classList.contains('failed'))
        && (!action || r.li.dataset.action === action)
        && (!q || r.text.includes(q) || String(r.e.sequence) === q);
      r.li.hidden = !ok;
      if (ok) n++;
    }
    shown.textContent = n + ' of ' + rows.length + ' events';
    shown.dataset.shown = n;
  }
  fFailed.addEventListener('change', applyFilters);
  fAction.addEventListener('change', applyFilters);
  fText.addEventListener('input', applyFilters);

  // --- detail pane ---
  const detail = document.getElementById('detail');
  function props(pairs) {
    const dl = el('dl', 'props');
    for (const [k, v] of pairs) {
      if (v === undefined || v === null || v === '') continue;
      dl.append(el('dt', null, k));
      const dd = el('dd');
      if (v instanceof Node) dd.appendChild(v); else dd.textContent = String(v);
      dl.append(dd);
    }
    return dl;
  }
  function errorBox(err) {
    const box = el('div', 'error-box error');
    box.appendChild(props([['code', err.code], ['message', err.message], ['retryable', String(err.retryable)]]));
    if (err.details !== null && err.details !== undefined) box.appendChild(el('pre', null, pretty(err.details)));
    return box;
  }
  function findNode(tree, id) {
    return tree ? tree.nodes.find((n) => n.stableNodeId === id) || null : null;
  }
  function placeBox(box, bounds, vp) {
    box.style.left = (bounds.x / vp.width * 100) + '%';
    box.style.top = (bounds.y / vp.height * 100) + '%';
    box.style.width = (bounds.width / vp.width * 100) + '%';
    box.style.height = (bounds.height / vp.height * 100) + '%';
  }
  // A screenshot figure; `mark` is a node whose bounds are drawn on it.
  // `shotObs` lends its screenshot when `obs` has none (drivers resolve
  // semantic Actions on a UI tree alone); bounds are in `obs`'s viewport.
  function shotFigure(caption, obs, mark, shotObs) {
    const fig = el('figure');
    fig.appendChild(el('figcaption', null, caption));
    const shot = obs.screenshot ? obs : shotObs;
    if (!shot || !shot.screenshot) {
      fig.appendChild(el('div', 'omitted', 'No screenshot' + (obs.screenshotOmission ? ' (' + obs.screenshotOmission + ')' : '')));
      return { fig, frame: null };
    }
    const frame = el('div', 'shot');
    const img = el('img');
    img.alt = caption;
    img.decoding = 'async';
    img.loading = 'lazy';
    const url = blobUrl(shot.screenshot.sha256);
    if (url) img.src = url;
    else fig.appendChild(el('div', 'omitted missing', 'The screenshot ' + shot.screenshot.sha256 + ' is missing from the store.'));
    frame.appendChild(img);
    if (shot !== obs) fig.appendChild(el('div', 'omitted borrowed', 'Screenshot of observation ' + shot.id + ' (the latest before this action); the tree is the one the action resolved against.'));
    if (mark && mark.bounds) {
      const box = el('div', 'box element-box');
      box.title = 'resolved element ' + mark.stableNodeId;
      placeBox(box, mark.bounds, obs.viewport);
      frame.appendChild(box);
    }
    const hover = el('div', 'box hover-box');
    hover.hidden = true;
    frame.appendChild(hover);
    frame.hoverBox = hover;
    frame.viewport = obs.viewport;
    fig.appendChild(frame);
    return { fig, frame };
  }
  function snapshotOf(obs) {
    const ref = obs && obs.uiSnapshot && obs.uiSnapshot.evidence;
    return ref ? snapshots[ref.sha256] || null : null;
  }
  function nodeLabel(n) {
    const bits = [];
    if (n.name) bits.push('"' + n.name + '"');
    if (n.identifier) bits.push('#' + n.identifier);
    if (n.text && n.text !== n.name) bits.push('text="' + n.text + '"');
    if (n.value) bits.push('value="' + n.value + '"');
    if (n.enabled === false) bits.push('disabled');
    return bits.join(' ');
  }
  // The UI tree as nested lists; hovering a node outlines it on `frame`.
  function treeView(tree, frame, resolvedId) {
    const box = el('div', 'tree');
    const children = new Map();
    for (const n of tree.nodes) {
      const p = n.parentStableNodeId || '';
      if (!children.has(p)) children.set(p, []);
      children.get(p).push(n);
    }
    function build(list) {
      const ul = el('ul');
      for (const n of list) {
        const li = el('li');
        const row = el('div', 'tree-node');
        row.dataset.nodeId = n.stableNodeId;
        row.append(el('span', 'role', n.role), ' ', el('span', 'label', nodeLabel(n)), ' ', el('span', 'nid', n.stableNodeId));
        if (n.stableNodeId === resolvedId) row.classList.add('resolved');
        row.title = n.bounds ? 'bounds ' + n.bounds.x + ',' + n.bounds.y + ' ' + n.bounds.width + '\u00D7' + n.bounds.height : 'no bounds';
        row.addEventListener('mouseenter', () => {
          row.classList.add('hovered');
          if (frame && n.bounds) { placeBox(frame.hoverBox, n.bounds, frame.viewport); frame.hoverBox.hidden = false; frame.hoverBox.dataset.nodeId = n.stableNodeId; }
        });
        row.addEventListener('mouseleave', () => {
          row.classList.remove('hovered');
          if (frame) frame.hoverBox.hidden = true;
        });
        li.appendChild(row);
        const kids = children.get(n.stableNodeId);
        if (kids) li.appendChild(build(kids));
        ul.appendChild(li);
      }
      return ul;
    }
    const roots = tree.rootStableNodeIds.map((id) => findNode(tree, id)).filter(Boolean);
    box.appendChild(build(roots));
    return box;
  }
  function observationSection(title, obs, mark, shotObs) {
    const sec = el('section', 'observation');
    sec.appendChild(el('h3', null, title));
    sec.appendChild(props([['observation', obs.id], ['device', obs.deviceId], ['captured', fmtTime(obs.capturedAtMs)],
      ['viewport', obs.viewport.width + '\u00D7' + obs.viewport.height + ' @' + obs.viewport.scaleFactor]]));
    const wrap = el('div', 'with-tree');
    const { fig, frame } = shotFigure(title, obs, mark, shotObs);
    wrap.appendChild(fig);
    const tree = snapshotOf(obs);
    if (tree) wrap.appendChild(treeView(tree, frame, mark ? mark.stableNodeId : null));
    else if (obs.uiSnapshotOmission) wrap.appendChild(el('div', 'omitted', 'No UI tree (' + obs.uiSnapshotOmission + ')'));
    sec.appendChild(wrap);
    return sec;
  }
  function evidenceList(list) {
    const wrap = el('div', 'shots evidence');
    for (const a of list) {
      if (a.mediaType && a.mediaType.startsWith('image/') && a.sha256) {
        const fig = el('figure');
        fig.appendChild(el('figcaption', null, a.id));
        const frame = el('div', 'shot');
        const img = el('img');
        img.loading = 'lazy';
        img.alt = a.id;
        const url = blobUrl(a.sha256);
        if (url) img.src = url;
        frame.appendChild(img);
        fig.appendChild(frame);
        wrap.appendChild(fig);
      } else {
        wrap.appendChild(el('div', null, a.id + ' (' + a.mediaType + ')'));
      }
    }
    return wrap;
  }
  function actionDetail(c, e) {
    const frag = document.createDocumentFragment();
    const start = c && c.start;
    const o = outcomeOf(c);
    const title = el('h2', null, callName(c) + ' ');
    if (o) title.appendChild(el('span', 'badge ' + o.outcome, o.outcome));
    else title.appendChild(el('span', 'badge', 'no terminal event'));
    frag.appendChild(title);
    const x = o && o.outcome === 'succeeded' ? o.result.execution : null;
    frag.appendChild(props([
      ['event', '#' + e.sequence + ' ' + e.payload.type],
      ['call id', start ? start.payload.call.id : e.payload.callId],
      ['started', start ? '#' + start.sequence + ' at ' + fmtTime(start.atMs) : null],
      ['completed', c && c.done ? '#' + c.done.sequence + ' at ' + fmtTime(c.done.atMs) : null],
      ['duration', fmtMs(duration(c))],
      ['execution', executionText(x)],
      ['device', e.deviceId],
      ['request', e.requestId !== undefined ? JSON.stringify(e.requestId) : null],
    ]));
    frag.appendChild(el('h3', null, 'Arguments'));
    if (start && start.payload.call.argumentsRedacted) {
      frag.appendChild(el('div', 'redacted arguments', 'Redacted: a protected action\u2019s arguments are never recorded.'));
    } else if (start) {
      frag.appendChild(el('pre', 'arguments', pretty(start.payload.call.arguments)));
    }
    if (o && o.error) {
      frag.appendChild(el('h3', null, o.outcome === 'timedOut' ? 'Timed out after ' + fmtMs(o.timeoutMs) : 'Error'));
      frag.appendChild(errorBox(o.error));
    }
    if (o && o.outcome === 'succeeded') {
      const r = o.result;
      if (x) {
        frag.appendChild(el('h3', null, 'Execution'));
        frag.appendChild(props([['mode', executionText(x)], ['context', x.context.contextKind + ' ' + x.context.contextId],
          ['document epoch', x.context.documentEpoch], ['fallback reason', x.fallbackReason]]));
      }
      frag.appendChild(el('h3', null, 'Output'));
      frag.appendChild(el('pre', 'output', pretty(r.output)));
      const fx = effects[r.callId];
      if (fx) {
        frag.appendChild(el('h3', null, 'Effect'));
        const box = el('div', 'effect ' + fx.verdict);
        box.appendChild(el('p', 'effect-summary', fx.summary));
        box.appendChild(props([['before', fx.before], ['after', fx.after]]));
        if (fx.lines) box.appendChild(el('pre', 'effect-lines', fx.lines));
        frag.appendChild(box);
      }
      const ref = r.output && r.output.element;
      let mark = null;
      if (ref && r.before && ref.observationId === r.before.id) {
        mark = findNode(snapshotOf(r.before), ref.stableNodeId);
        if (mark) mark = Object.assign({}, mark);
      }
      const lend = r.before && !r.before.screenshot && start ? latestShotBefore(start.sequence) : null;
      if (r.before) frag.appendChild(observationSection(mark ? 'Before (resolved element outlined)' : 'Before', r.before, mark, lend));
      if (r.after) frag.appendChild(observationSection('After', r.after, null));
      if (r.evidence && r.evidence.length) {
        frag.appendChild(el('h3', null, 'Evidence'));
        frag.appendChild(evidenceList(r.evidence));
      }
    }
    return frag;
  }
  function render(e) {
    detail.textContent = '';
    const p = e.payload;
    const c = callOf(e);
    if (c) detail.appendChild(actionDetail(c, e));
    else if (p.type === 'observationCaptured') {
      detail.appendChild(el('h2', null, 'Observation'));
      detail.appendChild(observationSection('Screenshot', p.observation, null));
    } else if (p.type === 'verdictRecorded') {
      const h = el('h2', null, 'Verdict ');
      h.appendChild(el('span', 'badge ' + p.verdict.status, p.verdict.status));
      detail.appendChild(h);
      detail.appendChild(el('p', 'verdict-summary', p.verdict.summary));
      if (p.verdict.evidence && p.verdict.evidence.length) {
        detail.appendChild(el('h3', null, 'Evidence'));
        detail.appendChild(evidenceList(p.verdict.evidence));
      }
    } else if (p.type === 'error') {
      detail.appendChild(el('h2', null, 'Error'));
      detail.appendChild(errorBox(p.error));
    } else {
      detail.appendChild(el('h2', null, summary(e)[1]));
    }
    detail.appendChild(el('h3', null, 'Event'));
    detail.appendChild(props([['sequence', e.sequence], ['type', p.type], ['at', fmtTime(e.atMs)], ['event id', e.eventId]]));
    const raw = el('details');
    raw.appendChild(el('summary', null, 'Recorded JSON'));
    raw.appendChild(el('pre', 'raw', pretty(e)));
    detail.appendChild(raw);
  }
  let selected = null;
  function select(seq, scroll) {
    const r = bySeq.get(seq);
    if (!r) return;
    if (selected) selected.li.classList.remove('selected');
    selected = r;
    r.li.classList.add('selected');
    r.li.setAttribute('aria-selected', 'true');
    if (scroll) r.li.scrollIntoView({ block: 'nearest' });
    render(r.e);
    try {
      if (location.hash !== '#' + seq) history.replaceState(null, '', '#' + seq);
    } catch (_) { /* an opaque origin may refuse; the selection stands */ }
  }
  function visible() { return rows.filter((r) => !r.li.hidden); }
  function move(step) {
    const vis = visible();
    if (!vis.length) return;
    let i = selected ? vis.indexOf(selected) : -1;
    if (i < 0) i = step > 0 ? -1 : vis.length;
    const next = vis[Math.max(0, Math.min(vis.length - 1, i + step))];
    select(next.e.sequence, true);
  }
  function nextFailure() {
    const vis = visible().filter((r) => r.li.classList.contains('failed'));
    if (!vis.length) return;
    const after = vis.find((r) => selected && r.e.sequence > selected.e.sequence) || vis[0];
    select(after.e.sequence, true);
  }
  document.addEventListener('keydown', (ev) => {
    if (ev.target === fText) {
      if (ev.key === 'Escape' || ev.key === 'Enter') { fText.blur(); timeline.focus(); }
      return;
    }
    if (ev.target instanceof HTMLSelectElement || ev.ctrlKey || ev.metaKey || ev.altKey) return;
    switch (ev.key) {
      case 'ArrowDown': case 'j': move(1); break;
      case 'ArrowUp': case 'k': move(-1); break;
      case 'Home': move(-rows.length); break;
      case 'End': move(rows.length); break;
      case 'n': nextFailure(); break;
      case 'f': fFailed.checked = !fFailed.checked; applyFilters(); break;
      case '/': fText.focus(); break;
      default: return;
    }
    ev.preventDefault();
  });
  applyFilters();
  const fromHash = parseInt(location.hash.slice(1), 10);
  if (bySeq.has(fromHash)) select(fromHash, true);
  else if (rows.length) select(rows[0].e.sequence, false);
  document.body.dataset.ready = 'true';
})();
