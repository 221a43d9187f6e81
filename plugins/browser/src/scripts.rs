//! Script run in the page. Each is a function declaration for
//! `Runtime.callFunctionOn` (with `this` bound to an element) or an
//! expression for `Runtime.evaluate`; results are plain JSON.

/// Waits for one animation frame (or 100 ms when frames are not
/// produced), as a reusable snippet.
const FRAME: &str = "() => new Promise(resolve => { const t = setTimeout(resolve, 100); requestAnimationFrame(() => { clearTimeout(t); resolve(); }); })";

/// `function(wantHit)` on a node: scrolls it into view if needed, checks
/// it is rendered, visible and stable across two animation frames, and
/// (when `wantHit`) that `elementFromPoint` at the click point hits it or a
/// descendant. Answers `{ok, reason?, x, y, covering?}` with the click
/// point in CSS pixels of the viewport.
pub fn actionability() -> String {
    format!(
        r##"async function(wantHit) {{
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
  await frame(); await frame();
  const b = rectOf();
  const moved = Math.abs(a.x - b.x) > 0.5 || Math.abs(a.y - b.y) > 0.5 || Math.abs(a.width - b.width) > 0.5 || Math.abs(a.height - b.height) > 0.5;
  if (moved) return {{ ok: false, reason: "not stable" }};
  const style = getComputedStyle(el);
  if (b.width <= 0 || b.height <= 0 || style.visibility !== "visible" || style.display === "none") return {{ ok: false, reason: "not visible" }};
  const left = Math.max(b.left, 0), top = Math.max(b.top, 0);
  const right = Math.min(b.right, innerWidth), bottom = Math.min(b.bottom, innerHeight);
  if (right <= left || bottom <= top) return {{ ok: false, reason: "not visible" }};
  const x = (left + right) / 2, y = (top + bottom) / 2;
  if (wantHit) {{
    let hit = document.elementFromPoint(x, y);
    while (hit && hit.shadowRoot) {{
      const inner = hit.shadowRoot.elementFromPoint(x, y);
      if (!inner || inner === hit) break;
      hit = inner;
    }}
    const inside = (h) => {{
      for (let n = h; n; n = n.parentNode || (n instanceof ShadowRoot ? n.host : null)) {{ if (n === el) return true; }}
      return false;
    }};
    if (!hit || !inside(hit)) {{
      const d = hit ? (hit.tagName.toLowerCase() + (hit.id ? "#" + hit.id : "")) : null;
      return {{ ok: false, reason: "covered", covering: d, x, y }};
    }}
  }}
  return {{ ok: true, x, y }};
}}"##
    )
}

/// `function(value)` on an editable element: focuses it and replaces its
/// value the way a user edit does (native setter, then `input` and
/// `change` events). Answers `{ok, reason?}`.
pub const SET_VALUE: &str = r#"function(value) {
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

/// Whether the focused element (through shadow roots) takes typed text.
pub const FOCUS_IS_EDITABLE: &str = r#"(() => {
  let a = document.activeElement;
  while (a && a.shadowRoot && a.shadowRoot.activeElement) a = a.shadowRoot.activeElement;
  if (!a) return false;
  if (a.isContentEditable) return true;
  if (a instanceof HTMLTextAreaElement) return !a.readOnly && !a.disabled;
  if (a instanceof HTMLInputElement) {
    const types = ["", "text", "search", "email", "url", "tel", "password", "number"];
    return types.includes(a.type) && !a.readOnly && !a.disabled;
  }
  return false;
})()"#;

/// The document's load state.
pub const READY_STATE: &str = "document.readyState";

/// Where the page is.
pub const LOCATION: &str = "({ url: location.href, title: document.title })";

/// Waits two animation frames and reports the window's scroll position.
pub fn settle_scroll() -> String {
    format!(
        "(async () => {{ const frame = {FRAME}; await frame(); await frame(); return {{ scrollX: window.scrollX, scrollY: window.scrollY }}; }})()"
    )
}
