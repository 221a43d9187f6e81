// DeviceRail console: the browser side of the host's local web console.
// One WebSocket at /ws carries JSON messages both ways; everything the
// devices say (names, reasons, event texts) is untrusted and only ever
// reaches the page through textContent or attribute setters.
(() => {
  'use strict';

  const TAP_SLOP_PX = 10;
  const TAP_MAX_MS = 500;
  const SWIPE_MIN_MS = 50;
  const SWIPE_MAX_MS = 2000;
  const MARKER_MS = 400;
  const FPS_WINDOW_MS = 2000;
  const LATENCY_SAMPLES = 60;
  const STATS_REFRESH_MS = 500;
  const BACKOFF_MS = [1000, 2000, 4000, 8000, 10000];
  const MAX_EVENTS = 2000;
  const ARGS_MAX_CHARS = 120;
  const HINT_MS = 2500;
  const INFO_MS = 6000;
  const EXPORT_EXT = { python: 'py', typescript: 'mts', rust: 'rs', playwright: 'mjs' };
  const EXPORT_LANGUAGES = ['python', 'typescript', 'rust', 'playwright'];
  const IMAGE_TYPES = new Set(['image/jpeg', 'image/png']);
  const REQUEST_LABELS = {
    take: 'Take control', release: 'Release', text: 'Send text', secret: 'Send secret',
    key: 'Key', tap: 'Tap', swipe: 'Swipe', replay: 'Replay', export: 'Export', invite: 'Invite',
  };

  const $ = (id) => document.getElementById(id);
  const ui = {
    hostMode: $('host-mode'),
    dataDir: $('data-dir'),
    viewerName: $('viewer-name'),
    connection: $('connection'),
    fps: $('fps'),
    latency: $('latency'),
    share: $('share'),
    invite: $('invite'),
    inviteUrl: $('invite-url'),
    copyInvite: $('copy-invite'),
    notice: $('notice'),
    devices: $('devices'),
    devicesEmpty: $('devices-empty'),
    screenDevice: $('screen-device'),
    viewerState: $('viewer-state'),
    take: $('take'),
    release: $('release'),
    stage: $('stage'),
    canvas: $('screen-canvas'),
    screenEmpty: $('screen-empty'),
    textInput: $('text-input'),
    sendText: $('send-text'),
    secretInput: $('secret-input'),
    sendSecret: $('send-secret'),
    keyEnter: $('key-enter'),
    keyBack: $('key-back'),
    keyTab: $('key-tab'),
    sessions: $('sessions'),
    sessionsEmpty: $('sessions-empty'),
    exportPanel: $('export-panel'),
    exportTitle: $('export-title'),
    exportDownload: $('export-download'),
    exportClose: $('export-close'),
    exportText: $('export-text'),
    events: $('events'),
    eventsSession: $('events-session'),
  };
  const ctx2d = ui.canvas.getContext('2d');

  const state = {
    socket: null,
    attempt: 0,
    reconnectTimer: 0,
    nextId: 1,
    pending: new Map(), // request id -> { type, ...context } (never request payloads)
    helloSeen: false,
    devicesSeen: false,
    devices: [],
    watched: null,
    controls: new Map(), // device id -> last `control` message
    sessions: new Map(), // session id -> session summary
    sessionItems: new Map(), // session id -> DOM refs
    followed: null,
    exportUrl: null,
  };

  const frames = {
    decoding: false,
    latest: null, // newest frame that arrived while decoding
    width: 0,
    height: 0,
    painted: 0,
    firstPaintAt: 0,
    paintTimes: [],
    latencies: [],
  };

  const timeline = {
    items: new Map(), // sequence -> li
    lastSeq: -Infinity,
    originMs: null,
    startedAt: new Map(), // callId -> atMs of actionStarted
    names: new Map(), // callId -> action name
    completed: new Map(), // callId -> actionCompleted li
    effects: new Map(), // callId -> effect that arrived before its event
  };

  // ---------------------------------------------------------------- DOM helpers

  /** Creates an element; string children become text nodes, never markup. */
  function h(tag, props = {}, ...children) {
    const node = document.createElement(tag);
    for (const [key, value] of Object.entries(props)) {
      if (value === undefined || value === null || value === false) continue;
      if (key === 'className') node.className = value;
      else if (key === 'text') node.textContent = value;
      else if (key === 'dataset') Object.assign(node.dataset, value);
      else node.setAttribute(key, value === true ? '' : String(value));
    }
    for (const child of children) {
      if (child === null || child === undefined || child === false) continue;
      node.append(typeof child === 'string' ? document.createTextNode(child) : child);
    }
    return node;
  }

  /** A value safe to use inside a class name. */
  function classToken(value) {
    return String(value ?? 'unknown').replace(/[^A-Za-z0-9_-]/g, '') || 'unknown';
  }

  function truncate(text, max) {
    return text.length > max ? `${text.slice(0, max - 1)}…` : text;
  }

  /** The random end of an id (a version 7 UUID starts with its time). */
  function shortId(id) {
    const s = String(id ?? '');
    return s.length > 10 ? s.slice(-8) : s;
  }

  function formatClock(ms) {
    if (!Number.isFinite(ms)) return '–';
    const date = new Date(ms);
    const today = new Date().toDateString() === date.toDateString();
    return today ? date.toLocaleTimeString() : date.toLocaleString();
  }

  function formatOffset(ms) {
    const total = Math.max(0, Number(ms) || 0) / 1000;
    if (total < 60) return `+${total.toFixed(3)}s`;
    const minutes = Math.floor(total / 60);
    const seconds = (total - minutes * 60).toFixed(1).padStart(4, '0');
    return `+${minutes}:${seconds}`;
  }

  /** A same-origin URL, or null (keeps javascript: and foreign links out). */
  function sameOriginUrl(value) {
    if (typeof value !== 'string' || value === '') return null;
    try {
      const url = new URL(value, location.href);
      return url.origin === location.origin ? url.href : null;
    } catch {
      return null;
    }
  }

  // ---------------------------------------------------------------- notices

  let noticeTimer = 0;

  /** Shows `text` in #notice; kind is 'info', 'hint' or 'error'. */
  function showNotice(text, kind = 'info') {
    clearTimeout(noticeTimer);
    ui.notice.textContent = String(text ?? '');
    ui.notice.className = `notice notice-${kind}`;
    const ttl = kind === 'hint' ? HINT_MS : kind === 'info' ? INFO_MS : 0;
    if (ttl) noticeTimer = setTimeout(clearNotice, ttl);
  }

  function clearNotice() {
    ui.notice.textContent = '';
    ui.notice.className = 'notice';
  }

  // ---------------------------------------------------------------- connection

  function socketUrl() {
    const scheme = location.protocol === 'https:' ? 'wss:' : 'ws:';
    return `${scheme}//${location.host}/ws`;
  }

  function connect() {
    state.reconnectTimer = 0;
    let socket;
    try {
      socket = new WebSocket(socketUrl());
    } catch (err) {
      console.warn('console: cannot open the WebSocket', err);
      scheduleReconnect();
      return;
    }
    state.socket = socket;
    socket.addEventListener('open', () => {
      if (state.socket === socket) setConnection('connected');
    });
    socket.addEventListener('message', (event) => {
      if (state.socket === socket) onMessage(event);
    });
    socket.addEventListener('close', () => {
      if (state.socket === socket) onClose();
    });
    // An 'error' is always followed by 'close', which does the work.
  }

  function onClose() {
    state.socket = null;
    setConnection('disconnected');
    state.pending.clear();
    state.controls.clear();
    frames.latest = null;
    renderControl();
    resetReplayButtons();
    scheduleReconnect();
  }

  function scheduleReconnect() {
    if (state.reconnectTimer) return;
    const delay = BACKOFF_MS[Math.min(state.attempt, BACKOFF_MS.length - 1)];
    state.attempt += 1;
    ui.connection.title = `reconnecting in ${Math.round(delay / 1000)} s`;
    state.reconnectTimer = setTimeout(connect, delay);
  }

  function setConnection(status) {
    ui.connection.textContent = status;
    ui.connection.className = `conn conn-${status}`;
    if (status !== 'disconnected') ui.connection.title = '';
    document.body.dataset.connection = status;
  }

  /** Sends one message; false when the socket is not open. */
  function send(message) {
    const socket = state.socket;
    if (!socket || socket.readyState !== WebSocket.OPEN) return false;
    socket.send(JSON.stringify(message));
    return true;
  }

  /**
   * Sends a request with a fresh id and remembers `context` (not the
   * payload, so no secret is kept) for its result. Returns the id or null.
   */
  function request(type, fields = {}, context = {}) {
    const id = state.nextId++;
    if (!send({ type, id, ...fields })) {
      showNotice('Not connected to the host; try again in a moment.', 'error');
      return null;
    }
    state.pending.set(id, { type, ...context });
    return id;
  }

  // ---------------------------------------------------------------- dispatch

  const handlers = {
    hello: onHello,
    devices: onDevices,
    frame: onFrame,
    control: onControl,
    sessions: onSessions,
    event: onEvent,
    effect: onEffect,
    result: onResult,
    notice: (msg) => showNotice(msg.message, 'info'),
  };

  function onMessage(event) {
    if (typeof event.data !== 'string') return;
    let msg;
    try {
      msg = JSON.parse(event.data);
    } catch {
      console.warn('console: ignored a message that is not JSON');
      return;
    }
    if (!msg || typeof msg !== 'object' || !Object.hasOwn(handlers, msg.type)) return;
    handlers[msg.type](msg);
  }

  function onHello(msg) {
    state.attempt = 0;
    const viewer = msg.viewer ?? {};
    const host = msg.host ?? {};
    ui.viewerName.textContent = viewer.name ?? viewer.id ?? '–';
    ui.viewerName.title = viewer.id ? `viewer id ${viewer.id}` : '';
    ui.hostMode.textContent = host.mode ?? '–';
    ui.dataDir.textContent = host.dataDir ?? '';
    document.body.dataset.viewer = String(viewer.id ?? '');
    document.body.dataset.mode = String(host.mode ?? '');
    state.helloSeen = true;
    // After a reconnect, pick up where we were.
    if (state.watched) send({ type: 'watch', device: state.watched });
    if (state.followed) {
      clearEvents();
      send({ type: 'follow', session: state.followed });
    }
    checkReady();
  }

  function checkReady() {
    if (state.helloSeen && state.devicesSeen) document.body.dataset.ready = 'true';
  }

  // ---------------------------------------------------------------- devices

  function onDevices(msg) {
    state.devices = Array.isArray(msg.devices) ? msg.devices : [];
    renderDevices();
    renderControl();
    state.devicesSeen = true;
    checkReady();
  }

  function holderText(holder) {
    const label = holder?.label ?? null;
    switch (holder?.kind) {
      case 'you': return 'you';
      case 'client': return `held by ${label ?? 'another viewer'}`;
      case 'reservation': return `reserved: ${label ?? 'unknown'}`;
      default: return 'free';
    }
  }

  function deviceCard(device) {
    const selected = device.id === state.watched;
    const health = String(device.health ?? 'unavailable');
    const button = h('button', { type: 'button', className: 'device-card', 'aria-pressed': String(selected) },
      h('span', { className: 'name', text: device.name || device.id }),
      h('span', { className: `health health-${classToken(health)}`, text: health }),
      h('span', { className: 'platform', text: device.platform ?? '' }),
      h('span', { className: 'plugin', text: device.plugin ?? '' }),
      health !== 'up' && device.reason ? h('span', { className: 'reason', text: device.reason }) : null,
      h('span', { className: 'holder', text: holderText(device.holder) }),
    );
    return h('li', {
      className: selected ? 'device selected' : 'device',
      dataset: { device: String(device.id) },
      'aria-current': selected ? 'true' : null,
    }, button);
  }

  function renderDevices() {
    // Keep keyboard focus on the same card across re-renders.
    const focused = document.activeElement?.closest?.('li.device')?.dataset.device ?? null;
    ui.devices.replaceChildren(...state.devices.map(deviceCard));
    ui.devicesEmpty.hidden = state.devices.length > 0;
    if (focused !== null) {
      for (const li of ui.devices.children) {
        if (li.dataset.device === focused) li.querySelector('button')?.focus();
      }
    }
  }

  function deviceById(id) {
    return state.devices.find((d) => d.id === id) ?? null;
  }

  function onDeviceClick(event) {
    const li = event.target.closest('li.device');
    if (li && ui.devices.contains(li)) selectDevice(li.dataset.device);
  }

  function selectDevice(id) {
    if (!id || id === state.watched) return;
    const previous = state.watched;
    if (previous) send({ type: 'unwatch', device: previous });
    state.watched = id;
    document.body.dataset.watched = id;
    resetScreen();
    send({ type: 'watch', device: id });
    renderDevices();
    renderControl();
  }

  // ---------------------------------------------------------------- control

  /** The watched device's control state: the last `control`, else its holder. */
  function currentControl() {
    if (!state.watched) return null;
    const known = state.controls.get(state.watched);
    if (known) return known;
    const holder = deviceById(state.watched)?.holder;
    switch (holder?.kind) {
      case 'you': return { state: 'yours', holder: null };
      case 'client':
      case 'reservation': return { state: 'held', holder: holder.label ?? null };
      default: return { state: 'free', holder: null };
    }
  }

  function inControl() {
    return currentControl()?.state === 'yours';
  }

  function onControl(msg) {
    if (!msg.device) return;
    state.controls.set(msg.device, {
      state: msg.state,
      holder: msg.holder ?? null,
      session: msg.session ?? null,
    });
    if (msg.device === state.watched) renderControl();
  }

  function renderControl() {
    const control = currentControl();
    const body = document.body;
    const device = state.watched ? deviceById(state.watched) : null;
    ui.screenDevice.textContent = state.watched ? `· ${device?.name || state.watched}` : '';

    let text = 'no device selected';
    if (control?.state === 'yours') text = 'in control';
    else if (control?.state === 'held') text = `held by ${control.holder ?? 'someone else'} — watching`;
    else if (control) text = 'watching';
    ui.viewerState.textContent = text;
    if (control) body.dataset.control = control.state;
    else delete body.dataset.control;

    const yours = control?.state === 'yours';
    ui.take.hidden = yours;
    ui.take.disabled = !control || control.state !== 'free';
    ui.take.title = control?.state === 'held' ? text : '';
    ui.release.hidden = !yours;
    ui.release.disabled = !yours;
    for (const button of [ui.sendText, ui.sendSecret, ui.keyEnter, ui.keyBack, ui.keyTab]) {
      button.disabled = !yours;
    }
  }

  function takeControl() {
    if (state.watched) request('take', { device: state.watched });
  }

  function releaseControl() {
    request('release');
  }

  function sendText() {
    const text = ui.textInput.value;
    if (text === '') return;
    if (request('text', { text }) !== null) ui.textInput.value = '';
  }

  function sendSecret() {
    // Read and clear at once: the secret lives only in this call's frame.
    const text = ui.secretInput.value;
    ui.secretInput.value = '';
    if (text !== '') request('secret', { text });
  }

  function sendKey(key) {
    request('key', { key });
  }

  // ---------------------------------------------------------------- frames

  function resetScreen() {
    frames.latest = null;
    frames.width = 0;
    frames.height = 0;
    frames.painted = 0;
    frames.firstPaintAt = 0;
    frames.paintTimes = [];
    frames.latencies = [];
    ctx2d.clearRect(0, 0, ui.canvas.width, ui.canvas.height);
    ui.screenEmpty.textContent = 'Waiting for frames…';
    ui.screenEmpty.hidden = false;
    updateStats();
  }

  function onFrame(msg) {
    if (msg.device !== state.watched) return;
    if (frames.decoding) {
      frames.latest = msg; // keep only the newest; never queue
      return;
    }
    decodeAndDraw(msg);
  }

  function base64Bytes(data) {
    const binary = atob(data);
    const bytes = new Uint8Array(binary.length);
    for (let i = 0; i < binary.length; i += 1) bytes[i] = binary.charCodeAt(i);
    return bytes;
  }

  async function decodeAndDraw(msg) {
    frames.decoding = true;
    try {
      const type = IMAGE_TYPES.has(msg.mediaType) ? msg.mediaType : 'image/png';
      const bitmap = await createImageBitmap(new Blob([base64Bytes(String(msg.data ?? ''))], { type }));
      try {
        if (msg.device === state.watched) drawFrame(msg, bitmap);
      } finally {
        bitmap.close();
      }
    } catch (err) {
      console.warn(`console: frame ${msg.seq} could not be decoded`, err?.message ?? err);
    } finally {
      frames.decoding = false;
      const next = frames.latest;
      frames.latest = null;
      if (next && next.device === state.watched) decodeAndDraw(next);
    }
  }

  function drawFrame(msg, bitmap) {
    const width = Number(msg.width) || bitmap.width;
    const height = Number(msg.height) || bitmap.height;
    if (ui.canvas.width !== width || ui.canvas.height !== height) {
      ui.canvas.width = width;
      ui.canvas.height = height;
      fitCanvas();
    }
    frames.width = width;
    frames.height = height;
    ctx2d.drawImage(bitmap, 0, 0, width, height);
    ui.screenEmpty.hidden = true;
    requestAnimationFrame(() => reportPainted(msg));
  }

  function reportPainted(msg) {
    if (msg.device !== state.watched) return;
    const now = Date.now();
    send({ type: 'painted', device: msg.device, seq: msg.seq, capturedAtMs: msg.capturedAtMs, paintedAtMs: now });
    frames.painted += 1;
    if (!frames.firstPaintAt) frames.firstPaintAt = now;
    frames.paintTimes.push(now);
    const captured = Number(msg.capturedAtMs);
    if (Number.isFinite(captured)) {
      frames.latencies.push(Math.max(0, now - captured));
      if (frames.latencies.length > LATENCY_SAMPLES) frames.latencies.shift();
    }
    updateStats(now);
  }

  /** Frames per second over the last two seconds (or since the first paint). */
  function currentFps(now) {
    const cutoff = now - FPS_WINDOW_MS;
    while (frames.paintTimes.length && frames.paintTimes[0] <= cutoff) frames.paintTimes.shift();
    const count = frames.paintTimes.length;
    if (!frames.firstPaintAt || count === 0) return 0;
    const since = now - frames.firstPaintAt;
    if (since < FPS_WINDOW_MS) return since > 0 ? ((count - 1) * 1000) / since : 0;
    return (count * 1000) / FPS_WINDOW_MS;
  }

  function median(values) {
    if (values.length === 0) return null;
    const sorted = [...values].sort((a, b) => a - b);
    const mid = sorted.length >> 1;
    return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
  }

  function updateStats(now = Date.now()) {
    const fps = Math.round(currentFps(now) * 10) / 10;
    const p50 = median(frames.latencies);
    const body = document.body.dataset;
    ui.fps.textContent = `${fps.toFixed(1)} fps`;
    body.fps = String(fps);
    body.frames = String(frames.painted);
    if (p50 === null) {
      ui.latency.textContent = 'p50 – ms';
      delete body.latencyP50;
    } else {
      ui.latency.textContent = `p50 ${Math.round(p50)} ms`;
      body.latencyP50 = String(Math.round(p50));
    }
  }

  /** Scales the canvas (CSS size only) to fit the stage, keeping its ratio. */
  function fitCanvas() {
    const width = ui.canvas.width;
    const height = ui.canvas.height;
    const boxWidth = ui.stage.clientWidth;
    const boxHeight = ui.stage.clientHeight;
    if (!width || !height || !boxWidth || !boxHeight) return;
    const scale = Math.min(boxWidth / width, boxHeight / height);
    ui.canvas.style.width = `${Math.max(1, Math.floor(width * scale))}px`;
    ui.canvas.style.height = `${Math.max(1, Math.floor(height * scale))}px`;
  }

  // ---------------------------------------------------------------- pointer input

  let gesture = null;

  /** A CSS client position in frame pixels, clamped to the frame. */
  function toFramePoint(clientX, clientY) {
    const rect = ui.canvas.getBoundingClientRect();
    const x = ((clientX - rect.left) * frames.width) / rect.width;
    const y = ((clientY - rect.top) * frames.height) / rect.height;
    return {
      x: Math.round(Math.min(Math.max(x, 0), frames.width - 1)),
      y: Math.round(Math.min(Math.max(y, 0), frames.height - 1)),
    };
  }

  function onPointerDown(event) {
    if (event.pointerType === 'mouse' && event.button !== 0) return;
    if (!inControl()) {
      showNotice('Take control to act', 'hint');
      return;
    }
    if (!frames.width || !frames.height) {
      showNotice('No frame yet; wait for the screen to appear.', 'hint');
      return;
    }
    event.preventDefault();
    ui.canvas.setPointerCapture?.(event.pointerId);
    gesture = { pointerId: event.pointerId, x: event.clientX, y: event.clientY, at: performance.now() };
  }

  function onPointerUp(event) {
    if (!gesture || event.pointerId !== gesture.pointerId) return;
    const start = gesture;
    gesture = null;
    if (!inControl()) {
      showNotice('Take control to act', 'hint');
      return;
    }
    const elapsed = performance.now() - start.at;
    const moved = Math.hypot(event.clientX - start.x, event.clientY - start.y);
    if (moved > TAP_SLOP_PX) {
      sendSwipe(start, event, elapsed);
    } else if (elapsed <= TAP_MAX_MS) {
      sendTap(start);
    } else {
      showNotice('Long press is not supported: tap or drag.', 'hint');
    }
  }

  function onPointerCancel(event) {
    if (gesture && event.pointerId === gesture.pointerId) gesture = null;
  }

  function sendTap(start) {
    const point = toFramePoint(start.x, start.y);
    if (request('tap', { x: point.x, y: point.y }) !== null) showTapMarker(start.x, start.y);
  }

  function sendSwipe(start, end, elapsed) {
    const from = toFramePoint(start.x, start.y);
    const to = toFramePoint(end.clientX, end.clientY);
    const durationMs = Math.round(Math.min(Math.max(elapsed, SWIPE_MIN_MS), SWIPE_MAX_MS));
    request('swipe', { fromX: from.x, fromY: from.y, toX: to.x, toY: to.y, durationMs });
  }

  function showTapMarker(clientX, clientY) {
    const box = ui.stage.getBoundingClientRect();
    const marker = h('span', { className: 'tap-marker', 'aria-hidden': 'true' });
    marker.style.left = `${clientX - box.left}px`;
    marker.style.top = `${clientY - box.top}px`;
    ui.stage.append(marker);
    setTimeout(() => marker.remove(), MARKER_MS);
  }

  // ---------------------------------------------------------------- sessions

  function onSessions(msg) {
    const list = Array.isArray(msg.sessions) ? msg.sessions : [];
    const sorted = [...list].sort((a, b) => (Number(b.startedAtMs) || 0) - (Number(a.startedAtMs) || 0));
    const seen = new Set();
    state.sessions = new Map();
    sorted.forEach((session, index) => {
      const id = String(session.id);
      seen.add(id);
      state.sessions.set(id, session);
      const refs = state.sessionItems.get(id) ?? createSessionItem(id);
      state.sessionItems.set(id, refs);
      updateSessionItem(refs, session);
      // Move only what is out of place, so focus and <select> values survive.
      const current = ui.sessions.children[index] ?? null;
      if (current !== refs.li) ui.sessions.insertBefore(refs.li, current);
    });
    for (const [id, refs] of state.sessionItems) {
      if (!seen.has(id)) {
        refs.li.remove();
        state.sessionItems.delete(id);
      }
    }
    ui.sessionsEmpty.hidden = sorted.length > 0;
    if (state.followed && timeline.originMs === null) {
      timeline.originMs = numberOrNull(state.sessions.get(state.followed)?.startedAtMs);
    }
  }

  function numberOrNull(value) {
    const n = Number(value);
    return value === null || value === undefined || !Number.isFinite(n) ? null : n;
  }

  function createSessionItem(id) {
    const refs = {
      id: h('span', { className: 'session-id', title: id, text: shortId(id) }),
      device: h('span', { className: 'session-device' }),
      state: h('span', { className: 'session-state' }),
      start: h('span', { className: 'session-start' }),
      count: h('span', { className: 'session-events' }),
      follow: h('button', { type: 'button', className: 'follow', dataset: { action: 'follow' }, text: 'Follow' }),
      report: h('a', {
        className: 'report', href: `/sessions/${encodeURIComponent(id)}/report`,
        target: '_blank', rel: 'noopener', text: 'Report',
      }),
      replay: h('button', { type: 'button', className: 'replay', dataset: { action: 'replay' }, text: 'Replay' }),
      script: h('select', { className: 'export-script' },
        ...EXPORT_LANGUAGES.map((lang) => h('option', { value: lang, text: lang }))),
      exportButton: h('button', { type: 'button', className: 'export', dataset: { action: 'export' }, text: 'Export' }),
      replayResult: h('div', { className: 'replay-result', hidden: true }),
    };
    refs.li = h('li', { dataset: { session: id } },
      h('div', { className: 'session-info' }, refs.id, refs.device, refs.state, refs.start, refs.count),
      h('div', { className: 'session-actions' },
        refs.follow, refs.report, refs.replay,
        h('label', {}, h('span', { className: 'sr-only', text: 'Export script language' }), refs.script),
        refs.exportButton),
      refs.replayResult,
    );
    return refs;
  }

  function updateSessionItem(refs, session) {
    const active = session.state === 'active';
    const followed = state.followed === String(session.id);
    refs.device.textContent = String(session.device ?? '');
    refs.state.textContent = String(session.state ?? '');
    refs.state.className = `session-state state-${classToken(session.state)}`;
    const started = numberOrNull(session.startedAtMs);
    refs.start.textContent = started === null ? '' : formatClock(started);
    refs.start.title = started === null ? '' : new Date(started).toISOString();
    const count = Number(session.events) || 0;
    refs.count.textContent = `${count} event${count === 1 ? '' : 's'}`;
    refs.follow.hidden = !active;
    refs.follow.textContent = followed ? 'Following' : 'Follow';
    refs.follow.setAttribute('aria-pressed', String(followed));
    refs.li.classList.toggle('followed', followed);
    refs.li.dataset.state = String(session.state ?? '');
  }

  function onSessionClick(event) {
    const button = event.target.closest('button[data-action]');
    const li = button?.closest('li[data-session]');
    if (!button || !li) return;
    const id = li.dataset.session;
    const refs = state.sessionItems.get(id);
    if (!refs) return;
    switch (button.dataset.action) {
      case 'follow': followSession(id); break;
      case 'replay': replaySession(id, refs); break;
      case 'export': exportSession(id, refs.script.value); break;
      default: break;
    }
  }

  function followSession(id) {
    if (state.followed === id) return;
    state.followed = id;
    document.body.dataset.followed = id;
    clearEvents();
    ui.eventsSession.textContent = `of ${shortId(id)}`;
    ui.eventsSession.title = id;
    for (const [sessionId, refs] of state.sessionItems) {
      const session = state.sessions.get(sessionId);
      if (session) updateSessionItem(refs, session);
    }
    send({ type: 'follow', session: id });
  }

  function replaySession(id, refs) {
    if (request('replay', { session: id }, { session: id }) === null) return;
    refs.replay.disabled = true;
    refs.replay.textContent = 'Replaying…';
    refs.replayResult.hidden = false;
    refs.replayResult.textContent = 'replay running…';
  }

  function resetReplayButtons() {
    for (const refs of state.sessionItems.values()) {
      if (!refs.replay.disabled) continue;
      refs.replay.disabled = false;
      refs.replay.textContent = 'Replay';
      refs.replayResult.textContent = 'replay interrupted: the connection closed';
    }
  }

  function exportSession(id, script) {
    const language = EXPORT_LANGUAGES.includes(script) ? script : 'python';
    request('export', { session: id, script: language }, { session: id, script: language });
  }

  function countsText(counts) {
    if (typeof counts === 'string') return counts;
    if (counts && typeof counts === 'object') {
      return Object.entries(counts).map(([key, value]) => `${value} ${key}`).join(', ');
    }
    return 'replay finished';
  }

  function showReplayResult(id, data) {
    const refs = state.sessionItems.get(id);
    if (!refs) return;
    refs.replay.disabled = false;
    refs.replay.textContent = 'Replay';
    const report = sameOriginUrl(data?.report);
    refs.replayResult.replaceChildren(
      h('span', { className: 'replay-counts', text: countsText(data?.counts) }),
      report ? ' · ' : null,
      report ? h('a', { className: 'replay-report', href: report, target: '_blank', rel: 'noopener', text: 'replay report' }) : null,
    );
    refs.replayResult.hidden = false;
  }

  function replayFailed(id, message) {
    const refs = state.sessionItems.get(id);
    if (!refs) return;
    refs.replay.disabled = false;
    refs.replay.textContent = 'Replay';
    refs.replayResult.hidden = false;
    refs.replayResult.textContent = `replay failed: ${message}`;
  }

  /** The script text out of an export result, whatever its exact shape. */
  function scriptText(data, language) {
    if (typeof data === 'string') return data;
    if (!data || typeof data !== 'object') return '';
    for (const key of ['text', 'source', 'content', 'code']) {
      if (typeof data[key] === 'string') return data[key];
    }
    if (typeof data.script === 'string' && data.script !== language) return data.script;
    return JSON.stringify(data, null, 2);
  }

  function showExport(context, data) {
    const text = scriptText(data, context.script);
    const ext = EXPORT_EXT[context.script] ?? 'txt';
    const fileName = `replay-${context.session}.${ext}`;
    if (state.exportUrl) URL.revokeObjectURL(state.exportUrl);
    state.exportUrl = URL.createObjectURL(new Blob([text], { type: 'text/plain;charset=utf-8' }));
    ui.exportDownload.href = state.exportUrl;
    ui.exportDownload.download = fileName;
    ui.exportDownload.textContent = `Download ${fileName}`;
    ui.exportTitle.textContent = `Export (${context.script}) of ${shortId(context.session)}`;
    ui.exportText.textContent = text;
    ui.exportPanel.hidden = false;
  }

  function closeExport() {
    ui.exportPanel.hidden = true;
    ui.exportText.textContent = '';
    if (state.exportUrl) URL.revokeObjectURL(state.exportUrl);
    state.exportUrl = null;
    ui.exportDownload.removeAttribute('href');
  }

  // ---------------------------------------------------------------- events

  function clearEvents() {
    ui.events.replaceChildren();
    timeline.items.clear();
    timeline.lastSeq = -Infinity;
    timeline.startedAt.clear();
    timeline.names.clear();
    timeline.completed.clear();
    timeline.effects.clear();
    timeline.originMs = numberOrNull(state.sessions.get(state.followed)?.startedAtMs);
  }

  function onEvent(msg) {
    if (!state.followed || msg.session !== state.followed) return;
    const event = msg.event;
    if (!event || typeof event !== 'object') return;
    const seq = Number(event.sequence);
    if (!Number.isFinite(seq) || timeline.items.has(seq)) return;
    if (timeline.originMs === null) timeline.originMs = numberOrNull(event.atMs);

    const stick = isNearBottom(ui.events);
    const li = eventItem(event, seq);
    insertBySequence(li, seq);
    trimEvents();
    if (stick) ui.events.scrollTop = ui.events.scrollHeight;
  }

  function isNearBottom(list) {
    return list.scrollHeight - list.scrollTop - list.clientHeight < 40;
  }

  function insertBySequence(li, seq) {
    timeline.items.set(seq, li);
    if (seq > timeline.lastSeq) {
      ui.events.append(li);
      timeline.lastSeq = seq;
      return;
    }
    const after = [...ui.events.children].find((item) => Number(item.dataset.seq) > seq) ?? null;
    ui.events.insertBefore(li, after);
  }

  function trimEvents() {
    while (ui.events.children.length > MAX_EVENTS) {
      const first = ui.events.firstElementChild;
      timeline.items.delete(Number(first.dataset.seq));
      first.remove();
    }
  }

  function eventItem(event, seq) {
    const payload = event.payload && typeof event.payload === 'object' ? event.payload : {};
    const type = String(payload.type ?? 'unknown');
    const atMs = numberOrNull(event.atMs);
    const summary = summarize(payload, atMs);
    const offset = atMs !== null && timeline.originMs !== null ? formatOffset(atMs - timeline.originMs) : '';
    const li = h('li', { dataset: { type, seq: String(seq) } },
      h('span', { className: 'ev-seq', text: `#${seq}` }),
      h('span', { className: 'ev-time', text: offset, title: atMs === null ? null : new Date(atMs).toISOString() }),
      h('span', { className: 'ev-text', text: truncate(summary.text, 400), title: summary.text.length > 400 ? summary.text : null }),
    );
    if (summary.callId !== undefined) li.dataset.callId = summary.callId;
    if (summary.failed) li.classList.add('failed');
    if (type === 'actionCompleted' && summary.callId !== undefined) {
      timeline.completed.set(summary.callId, li);
      const early = timeline.effects.get(summary.callId);
      if (early) {
        timeline.effects.delete(summary.callId);
        attachEffect(li, early);
      }
    }
    return li;
  }

  /** One line describing an event payload: { text, callId?, failed? }. */
  function summarize(payload, atMs) {
    switch (payload.type) {
      case 'actionStarted': return summarizeStarted(payload.call ?? {}, atMs);
      case 'actionCompleted': return summarizeCompleted(payload, atMs);
      case 'observationCaptured': return { text: 'observation' };
      case 'verdictRecorded': {
        const verdict = payload.verdict ?? {};
        return { text: `verdict ${verdict.status ?? '?'}: ${verdict.summary ?? ''}` };
      }
      case 'sessionStarted': return { text: 'session started' };
      case 'sessionEnded': {
        const reason = payload.reason ? ` (${payload.reason})` : '';
        return { text: `session ended: ${payload.outcome ?? 'ended'}${reason}` };
      }
      case 'mediaFrameCaptured': return { text: `frame ${payload.frame?.frameIndex ?? '?'}` };
      case 'mediaStreamStarted': return { text: 'media stream started' };
      case 'mediaStreamEnded': return { text: `media stream ended (${payload.frameCount ?? 0} frames)` };
      case 'error': return { text: `error: ${payload.error?.code ?? '?'}: ${payload.error?.message ?? ''}`, failed: true };
      default: return { text: String(payload.type ?? 'unknown event') };
    }
  }

  function summarizeStarted(call, atMs) {
    const callId = call.id === undefined ? undefined : String(call.id);
    if (callId !== undefined) {
      if (atMs !== null) timeline.startedAt.set(callId, atMs);
      timeline.names.set(callId, String(call.name ?? ''));
    }
    let args = '';
    if (call.argumentsRedacted) args = '(protected)';
    else if (call.arguments !== undefined) args = truncate(JSON.stringify(call.arguments), ARGS_MAX_CHARS);
    return { text: `▶ ${call.name ?? '?'}${args ? ` ${args}` : ''}`, callId };
  }

  function summarizeCompleted(payload, atMs) {
    const callId = payload.callId === undefined ? undefined : String(payload.callId);
    const outcome = typeof payload.outcome === 'string' ? { outcome: payload.outcome } : (payload.outcome ?? {});
    const kind = outcome.outcome ?? 'unknown';
    let duration = null;
    const result = outcome.result;
    if (result && Number.isFinite(Number(result.finishedAtMs)) && Number.isFinite(Number(result.startedAtMs))) {
      duration = Number(result.finishedAtMs) - Number(result.startedAtMs);
    } else if (callId !== undefined && atMs !== null && timeline.startedAt.has(callId)) {
      duration = atMs - timeline.startedAt.get(callId);
    }
    const name = callId !== undefined ? timeline.names.get(callId) : undefined;
    const details = [name, duration === null ? null : `${Math.max(0, Math.round(duration))} ms`].filter(Boolean);
    const tail = details.length ? ` · ${details.join(' · ')}` : '';
    if (kind === 'succeeded') return { text: `✓ succeeded${tail}`, callId };
    const code = outcome.error?.code ?? kind;
    return { text: `✗ ${kind}: ${code}${tail}`, callId, failed: true };
  }

  function onEffect(msg) {
    if (!state.followed || msg.session !== state.followed || msg.callId === undefined) return;
    const callId = String(msg.callId);
    const li = timeline.completed.get(callId);
    if (li) attachEffect(li, msg);
    else timeline.effects.set(callId, msg);
  }

  function evidenceImage(sha, label) {
    if (typeof sha !== 'string' || !/^[A-Za-z0-9._:-]{1,200}$/.test(sha)) return null;
    return h('img', {
      className: 'thumb', width: 160, alt: `${label} screenshot`, title: label,
      src: `/evidence/${sha}`, loading: 'lazy', decoding: 'async', dataset: { role: label },
    });
  }

  function attachEffect(li, effect) {
    li.querySelector('.effect')?.remove();
    const verdict = String(effect.verdict ?? '');
    const images = [evidenceImage(effect.before, 'before'), evidenceImage(effect.after, 'after')].filter(Boolean);
    const block = h('div', { className: `effect effect-${classToken(verdict)}`, dataset: { verdict } },
      h('span', { className: 'effect-summary', text: String(effect.summary ?? verdict) }),
      images.length ? h('div', { className: 'thumbs' }, ...images) : null,
    );
    const stick = isNearBottom(ui.events);
    li.append(block);
    if (stick) ui.events.scrollTop = ui.events.scrollHeight;
  }

  // ---------------------------------------------------------------- results

  function onResult(msg) {
    const context = state.pending.get(msg.id);
    state.pending.delete(msg.id);
    if (!msg.ok) {
      const code = msg.error?.code ?? 'error';
      const message = msg.error?.message ?? 'request failed';
      const label = REQUEST_LABELS[context?.type] ?? 'Request';
      showNotice(`${label} failed: ${message} (${code})`, 'error');
      if (context?.type === 'replay') replayFailed(context.session, message);
      return;
    }
    switch (context?.type) {
      case 'invite': showInvite(msg.data); break;
      case 'replay': showReplayResult(context.session, msg.data); break;
      case 'export': showExport(context, msg.data); break;
      case 'take': showNotice('You are in control.', 'info'); break;
      case 'release': showNotice('Control released.', 'info'); break;
      default: break;
    }
  }

  function showInvite(data) {
    const url = typeof data === 'string' ? data : data?.url;
    if (typeof url !== 'string' || url === '') {
      showNotice('The host returned no invite link.', 'error');
      return;
    }
    ui.inviteUrl.value = url;
    ui.invite.hidden = false;
    ui.inviteUrl.focus();
    ui.inviteUrl.select();
  }

  async function copyInvite() {
    ui.inviteUrl.select();
    try {
      await navigator.clipboard.writeText(ui.inviteUrl.value);
      showNotice('Invite link copied.', 'info');
    } catch {
      showNotice('Copy the selected link with Ctrl+C / ⌘C.', 'hint');
    }
  }

  // ---------------------------------------------------------------- wiring

  function onEnter(input, action) {
    input.addEventListener('keydown', (event) => {
      if (event.key === 'Enter' && !event.isComposing) {
        event.preventDefault();
        if (inControl()) action();
        else showNotice('Take control to act', 'hint');
      }
    });
  }

  function wire() {
    ui.devices.addEventListener('click', onDeviceClick);
    ui.sessions.addEventListener('click', onSessionClick);
    ui.take.addEventListener('click', takeControl);
    ui.release.addEventListener('click', releaseControl);
    ui.sendText.addEventListener('click', sendText);
    ui.sendSecret.addEventListener('click', sendSecret);
    onEnter(ui.textInput, sendText);
    onEnter(ui.secretInput, sendSecret);
    ui.keyEnter.addEventListener('click', () => sendKey('Enter'));
    ui.keyBack.addEventListener('click', () => sendKey('Back'));
    ui.keyTab.addEventListener('click', () => sendKey('Tab'));
    ui.share.addEventListener('click', () => request('invite'));
    ui.copyInvite.addEventListener('click', copyInvite);
    ui.exportClose.addEventListener('click', closeExport);
    ui.canvas.addEventListener('pointerdown', onPointerDown);
    ui.canvas.addEventListener('pointerup', onPointerUp);
    ui.canvas.addEventListener('pointercancel', onPointerCancel);
    ui.canvas.addEventListener('contextmenu', (event) => event.preventDefault());
    new ResizeObserver(fitCanvas).observe(ui.stage);
    setInterval(() => updateStats(), STATS_REFRESH_MS);
  }

  wire();
  renderControl();
  updateStats();
  setConnection('connecting');
  connect();
})();
