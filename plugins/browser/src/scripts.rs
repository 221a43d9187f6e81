//! Script run in the page. Each is a function declaration for
//! `Runtime.callFunctionOn` (with `this` bound to an element) or an
//! expression for `Runtime.evaluate`; results are plain JSON.

/// `(el) => "div#cookies \"We use cookies…\""`: what an element that
/// covers another is, for the error that names it (its tag, id and first
/// words).
const DESCRIBE: &str = r##"(el) => { const t = (el.innerText || el.getAttribute("aria-label") || "").replace(/\s+/g, " ").trim(); return el.tagName.toLowerCase() + (el.id ? "#" + el.id : "") + (t ? " \"" + (t.length > 40 ? t.slice(0, 39) + "…" : t) + "\"" : ""); }"##;

/// Waits for one animation frame (or 100 ms when frames are not
/// produced), as a reusable snippet.
const FRAME: &str = "() => new Promise(resolve => { const t = setTimeout(resolve, 100); requestAnimationFrame(() => { clearTimeout(t); resolve(); }); })";

/// `function(wantHit)` on a node: scrolls it into view if needed, checks
/// it is rendered, visible and stable across the next animation frame
/// (its box read now and after the frame's callbacks: an animation, CSS or
/// script, moves it between the two), and
/// (when `wantHit`) that `elementFromPoint` at the click point hits it or a
/// descendant (the center of its box, else of one of its line boxes, for
/// an inline element wrapped over lines). Answers `{ok, reason?, x, y,
/// covering?, navigates?}` with the click point in CSS pixels of the
/// viewport; `navigates`: the element is (in) a link or a control that
/// submits its form.
pub(crate) fn actionability() -> String {
    format!(
        r##"async function(wantHit, wantStable) {{
  const frame = {FRAME};
  const node = this;
  if (!node.isConnected) return {{ ok: false, reason: "detached" }};
  const el = node.nodeType === 1 ? node : (node.nodeType === 9 ? node.documentElement : node.parentElement);
  if (!el) return {{ ok: false, reason: "not visible" }};
  const rectOf = () => {{
    if (node.nodeType === 3) {{ const r = document.createRange(); r.selectNodeContents(node); return r.getBoundingClientRect(); }}
    return el.getBoundingClientRect();
  }};
  let r = rectOf();
  const inView = r.bottom > 0 && r.right > 0 && r.top < innerHeight && r.left < innerWidth;
  if (!inView && r.width > 0 && r.height > 0) {{
    el.scrollIntoView({{ block: "center", inline: "center", behavior: "instant" }});
  }}
  const a = rectOf();
  if (wantStable !== false) {{
    await frame();
  }}
  const b = rectOf();
  const moved = Math.abs(a.x - b.x) > 0.5 || Math.abs(a.y - b.y) > 0.5 || Math.abs(a.width - b.width) > 0.5 || Math.abs(a.height - b.height) > 0.5;
  if (moved) return {{ ok: false, reason: "not stable" }};
  const style = getComputedStyle(el);
  if (b.width <= 0 || b.height <= 0 || style.visibility !== "visible" || style.display === "none") return {{ ok: false, reason: "not visible" }};
  const left = Math.max(b.left, 0), top = Math.max(b.top, 0);
  const right = Math.min(b.right, innerWidth), bottom = Math.min(b.bottom, innerHeight);
  if (right <= left || bottom <= top) return {{ ok: false, reason: "not visible" }};
  const x = (left + right) / 2, y = (top + bottom) / 2;
  // A click here may start a navigation (a link, or a control that
  // submits its form): the click and submit events it causes are watched,
  // and `__drWillNavigate()` (in this world) says afterwards whether the
  // page let them navigate.
  const navigates = (e) => {{
    const c = e.closest("a[href], area[href], button, input[type=submit], input[type=image]");
    if (!c) return false;
    const may = c.localName === "a" || c.localName === "area" ? !/^\s*javascript:/i.test(c.getAttribute("href") || "")
      : c.localName === "button" ? c.type === "submit" && !!c.form : !!c.form;
    if (!may) return false;
    const w = e.ownerDocument.defaultView;
    const seen = {{ click: null, submit: null }};
    const onClick = (ev) => {{ seen.click = ev; }};
    const onSubmit = (ev) => {{ seen.submit = ev; }};
    w.addEventListener("click", onClick, {{ capture: true, once: true }});
    w.addEventListener("submit", onSubmit, {{ capture: true, once: true }});
    w.__drWillNavigate = () => {{
      w.removeEventListener("click", onClick, true);
      w.removeEventListener("submit", onSubmit, true);
      delete w.__drWillNavigate;
      if (seen.submit) return !seen.submit.defaultPrevented;
      if (!seen.click || seen.click.defaultPrevented) return false;
      const a = seen.click.target && seen.click.target.closest ? seen.click.target.closest("a[href], area[href]") : null;
      return !!a && (a.target === "" || a.target === "_self");
    }};
    return true;
  }};
  if (wantHit) {{
    const hitAt = (px, py) => {{
      let h = document.elementFromPoint(px, py);
      while (h && h.shadowRoot) {{
        const inner = h.shadowRoot.elementFromPoint(px, py);
        if (!inner || inner === h) break;
        h = inner;
      }}
      return h;
    }};
    const inside = (h) => {{
      for (let n = h; n; n = n.parentNode || (n instanceof ShadowRoot ? n.host : null)) {{ if (n === el) return true; }}
      return false;
    }};
    const hit = hitAt(x, y);
    if (!hit || !inside(hit)) {{
      // An inline element wrapped over lines has gaps in its box: try the
      // center of each of its line boxes.
      if (node.nodeType === 1) {{
        for (const part of Array.from(el.getClientRects())) {{
          const pl = Math.max(part.left, 0), pt = Math.max(part.top, 0);
          const pr = Math.min(part.right, innerWidth), pb = Math.min(part.bottom, innerHeight);
          if (pr <= pl || pb <= pt) continue;
          const px = (pl + pr) / 2, py = (pt + pb) / 2;
          const h = hitAt(px, py);
          if (h && inside(h)) return {{ ok: true, x: px, y: py, navigates: navigates(el) }};
        }}
      }}
      return {{ ok: false, reason: "covered", covering: hit ? ({DESCRIBE})(hit) : null, x, y }};
    }}
  }}
  return {{ ok: true, x, y, navigates: navigates(el) }};
}}"##
    )
}

/// `function()` on the element a click was sent to: whether that click
/// started a navigation the page let happen (a followed link, a form
/// submitted without `preventDefault`), as watched since the
/// actionability check said it `navigates`.
pub(crate) const WILL_NAVIGATE: &str = r#"function() {
  const w = (this.ownerDocument || this).defaultView;
  return w && w.__drWillNavigate ? w.__drWillNavigate() : false;
}"#;

/// `function(value)` on an editable element: focuses it and replaces its
/// value the way a user edit does (native setter, then `input` and
/// `change` events). Answers `{ok, reason?}`.
pub(crate) const SET_VALUE: &str = r#"function(value) {
  const el = this.nodeType === 1 ? this : this.parentElement;
  if (!el) return { ok: false, reason: "not editable" };
  const fire = () => {
    el.dispatchEvent(new InputEvent("input", { bubbles: true, composed: true, inputType: "insertReplacementText", data: value }));
    el.dispatchEvent(new Event("change", { bubbles: true }));
  };
  if (el instanceof HTMLInputElement || el instanceof HTMLTextAreaElement) {
    if (el.disabled) return { ok: false, reason: "disabled" };
    if (el.readOnly) return { ok: false, reason: "read-only" };
    const textual = el instanceof HTMLTextAreaElement || ["", "text", "search", "email", "url", "tel", "password", "number", "date", "time", "datetime-local", "month", "week", "color", "range"].includes(el.type);
    if (!textual) return { ok: false, reason: "not editable" };
    el.focus();
    const proto = el instanceof HTMLInputElement ? HTMLInputElement.prototype : HTMLTextAreaElement.prototype;
    Object.getOwnPropertyDescriptor(proto, "value").set.call(el, value);
    fire();
    return { ok: true };
  }
  if (el instanceof HTMLSelectElement) {
    if (el.disabled) return { ok: false, reason: "disabled" };
    const option = Array.from(el.options).find(o => o.value === value || o.label === value);
    if (!option) return { ok: false, reason: "no such option" };
    el.focus();
    el.value = option.value;
    fire();
    return { ok: true };
  }
  if (el.isContentEditable) {
    el.focus();
    el.textContent = value;
    fire();
    return { ok: true };
  }
  return { ok: false, reason: "not editable" };
}"#;

/// `function()` on an element text is about to be typed into: focuses it
/// (an `<input>`/`<textarea>` that takes text, or an editable element; a
/// `<label>` or its text stands for the label's control) and puts the
/// caret after its content, as a click at its end would.
/// Answers `{ok, reason?}`; changes nothing else.
pub(crate) const FOCUS_FOR_TYPING: &str = r#"function() {
  let el = this.nodeType === 1 ? this : this.parentElement;
  if (!el) return { ok: false, reason: "not editable" };
  // A label (or its text) stands for its control, as a click on it would.
  if (!(el instanceof HTMLInputElement || el instanceof HTMLTextAreaElement) && !el.isContentEditable) {
    const label = el.closest("label");
    if (label && label.control) el = label.control;
  }
  if (el instanceof HTMLInputElement || el instanceof HTMLTextAreaElement) {
    if (el.disabled) return { ok: false, reason: "disabled" };
    if (el.readOnly) return { ok: false, reason: "read-only" };
    const textual = el instanceof HTMLTextAreaElement || ["", "text", "search", "email", "url", "tel", "password", "number"].includes(el.type);
    if (!textual) return { ok: false, reason: "not editable" };
    el.focus({ preventScroll: true });
    if (el.getRootNode().activeElement !== el) return { ok: false, reason: "not focusable" };
    try { const n = el.value.length; el.setSelectionRange(n, n); } catch (e) { /* number fields keep their caret */ }
    return { ok: true };
  }
  if (el.isContentEditable) {
    el.focus({ preventScroll: true });
    const sel = el.ownerDocument.getSelection();
    if (sel) { const r = el.ownerDocument.createRange(); r.selectNodeContents(el); r.collapse(false); sel.removeAllRanges(); sel.addRange(r); }
    return { ok: true };
  }
  return { ok: false, reason: "not editable" };
}"#;

/// What has focus in this document, through shadow roots and
/// same-origin `<iframe>`s: `"editable"` (an element that takes typed
/// text), `"frame"` (a cross-origin `<iframe>`, whose document answers for
/// itself) or `"none"`.
pub(crate) const FOCUS_IS_EDITABLE: &str = r#"(() => {
  let a = document.activeElement;
  for (let i = 0; i < 64 && a; i++) {
    if (a.shadowRoot && a.shadowRoot.activeElement) { a = a.shadowRoot.activeElement; continue; }
    if (a instanceof HTMLIFrameElement || a instanceof HTMLFrameElement) {
      let inner = null;
      try { inner = a.contentDocument; } catch (e) { inner = null; }
      if (!inner) return "frame";
      a = inner.activeElement;
      continue;
    }
    break;
  }
  if (!a) return "none";
  const view = a.ownerDocument.defaultView;
  if (a.isContentEditable) return "editable";
  if (a instanceof view.HTMLTextAreaElement) return !a.readOnly && !a.disabled ? "editable" : "none";
  if (a instanceof view.HTMLInputElement) {
    const types = ["", "text", "search", "email", "url", "tel", "password", "number"];
    return types.includes(a.type) && !a.readOnly && !a.disabled ? "editable" : "none";
  }
  return "none";
})()"#;

/// The document's load state.
pub(crate) const READY_STATE: &str = "document.readyState";

/// Where the page is.
pub(crate) const LOCATION: &str = "({ url: location.href, title: document.title })";

/// Waits two animation frames and reports the window's scroll position.
pub(crate) fn settle_scroll() -> String {
    format!(
        "(async () => {{ const frame = {FRAME}; await frame(); await frame(); return {{ scrollX: window.scrollX, scrollY: window.scrollY }}; }})()"
    )
}

/// `function(x, y, scroll)` on a frame's `<iframe>` element: maps point
/// (x, y) of the frame's viewport to the viewport of the document holding
/// the `<iframe>` (CSS pixels), scrolling the `<iframe>` into view first
/// when `scroll` is set and the point is outside that viewport. Answers
/// `{x, y, left, top, width, height, hit, covering?}`: the mapped point,
/// the frame's content box, and whether `elementFromPoint` there hits the
/// `<iframe>` (something else covers it otherwise).
pub(crate) fn frame_point() -> String {
    FRAME_POINT.replace("(DESCRIBE)", &format!("({DESCRIBE})"))
}

const FRAME_POINT: &str = r##"function(x, y, scroll) {
  const el = this;
  const box = () => {
    const r = el.getBoundingClientRect();
    const s = getComputedStyle(el);
    const pl = parseFloat(s.paddingLeft) || 0, pt = parseFloat(s.paddingTop) || 0;
    const pr = parseFloat(s.paddingRight) || 0, pb = parseFloat(s.paddingBottom) || 0;
    return {
      left: r.left + el.clientLeft + pl,
      top: r.top + el.clientTop + pt,
      width: Math.max(0, el.clientWidth - pl - pr),
      height: Math.max(0, el.clientHeight - pt - pb),
    };
  };
  let b = box();
  const outside = (b) => b.left + x < 0 || b.top + y < 0 || b.left + x >= innerWidth || b.top + y >= innerHeight;
  if (scroll && outside(b)) {
    el.scrollIntoView({ block: "center", inline: "center", behavior: "instant" });
    b = box();
  }
  const px = b.left + x, py = b.top + y;
  let hit = false, covering = null;
  if (scroll) {
    let h = document.elementFromPoint(px, py);
    while (h && h.shadowRoot) {
      const inner = h.shadowRoot.elementFromPoint(px, py);
      if (!inner || inner === h) break;
      h = inner;
    }
    hit = h === el;
    if (!hit && h) covering = (DESCRIBE)(h);
  }
  return { x: px, y: py, left: b.left, top: b.top, width: b.width, height: b.height, hit, covering };
}"##;
