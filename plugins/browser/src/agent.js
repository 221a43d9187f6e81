// The driver's in-page library, installed once per document in an
// isolated world of each frame (page scripts cannot see or change it).
// It walks the rendered (flat) tree of one document — open shadow roots
// and slots included, never into <iframe>s, whose documents answer for
// themselves — and builds the same normalized nodes the accessibility
// path builds: roles in Chromium's accessibility vocabulary, accessible
// names (a subset of accname), values (password fields masked), the
// identifier (data-testid, else id), enabled state, and bounds in CSS
// pixels of this frame's viewport.
//
// It never returns the value of a password field, never changes the page
// (no attributes, no styles, no focus), and keeps no reference that would
// keep a removed node alive (ids map through WeakRefs).
(() => {
  const VERSION = 3;
  if (globalThis.__drAgent && globalThis.__drAgent.version === VERSION) return VERSION;

  const ids = new WeakMap();
  const refs = new Map();
  let next = 0;
  const idOf = (n) => {
    let i = ids.get(n);
    if (i === undefined) {
      i = ++next;
      ids.set(n, i);
      refs.set(i, new WeakRef(n));
    }
    return i;
  };
  const byId = (i) => {
    const r = refs.get(i);
    const n = r ? r.deref() : undefined;
    if (!n) {
      refs.delete(i);
      return null;
    }
    return n.isConnected ? n : null;
  };

  let lastMutation = performance.now();
  try {
    new MutationObserver(() => { lastMutation = performance.now(); })
      .observe(document, { subtree: true, childList: true, attributes: true, characterData: true });
  } catch (e) { /* a document without a root yet */ }

  const SKIP = new Set(["script", "style", "template", "noscript", "head", "title", "meta", "link", "base"]);
  const LEAVES = new Set(["img", "svg", "canvas", "video", "audio", "progress", "meter", "hr", "br", "math", "object", "embed"]);
  const WIDGETS = new Set(["button", "checkbox", "combobox", "link", "listbox", "menuitem", "menuitemcheckbox", "menuitemradio", "option", "radio", "searchbox", "slider", "spinbutton", "switch", "tab", "textbox"]);
  // Roles whose name comes from their content (Chromium's set, as the
  // accessibility tree reports it).
  const FROM_CONTENT = new Set(["button", "cell", "gridcell", "columnheader", "rowheader", "checkbox", "radio", "switch", "link", "heading", "option", "menuitem", "menuitemcheckbox", "menuitemradio", "tab", "treeitem", "tooltip", "term", "disclosureTriangle"]);
  // Roles that never carry a name.
  const NAMELESS = new Set(["generic", "none", "paragraph", "strong", "emphasis", "code", "caption", "deletion", "insertion", "mark", "subscript", "superscript", "time", "definition", "legend", "labelText", "figcaption", "abbr", "lineBreak", "rowgroup", "listMarker"]);
  // ARIA role tokens as Chromium names them; others are taken as written.
  const ARIA = { img: "image", image: "image", presentation: "none", none: "none", text: "generic", directory: "list", doc: "generic" };
  const KNOWN = new Set(["alert", "alertdialog", "application", "article", "banner", "blockquote", "button", "caption", "cell", "checkbox", "code", "columnheader", "combobox", "complementary", "contentinfo", "definition", "deletion", "dialog", "document", "emphasis", "feed", "figure", "form", "generic", "grid", "gridcell", "group", "heading", "insertion", "link", "list", "listbox", "listitem", "log", "main", "marquee", "math", "menu", "menubar", "menuitem", "menuitemcheckbox", "menuitemradio", "meter", "navigation", "note", "option", "paragraph", "progressbar", "radio", "radiogroup", "region", "row", "rowgroup", "rowheader", "scrollbar", "search", "searchbox", "separator", "slider", "spinbutton", "status", "strong", "subscript", "superscript", "switch", "tab", "table", "tablist", "tabpanel", "term", "textbox", "time", "timer", "toolbar", "tooltip", "tree", "treegrid", "treeitem"]);

  const collapse = (s) => s.replace(/[\s\u00a0]+/g, " ").trim();

  const inputRole = (el) => {
    switch (el.type) {
      case "checkbox": return "checkbox";
      case "radio": return "radio";
      case "search": return el.list ? "combobox" : "searchbox";
      case "range": return "slider";
      case "number": return "spinbutton";
      case "button": case "submit": case "reset": case "image": return "button";
      case "hidden": return "none";
      case "color": return "colorWell";
      case "date": case "datetime-local": case "month": case "time": case "week": return "date";
      case "file": return "button";
      default: return el.list ? "combobox" : "textbox";
    }
  };

  // Whether a header/footer is scoped to a sectioning element (then it
  // is no landmark).
  const scoped = (el) => {
    for (let p = el.parentElement; p; p = p.parentElement) {
      const t = p.localName;
      if (t === "article" || t === "aside" || t === "main" || t === "nav" || t === "section") return true;
    }
    return false;
  };

  const hasAuthorName = (el) => {
    const l = el.getAttribute("aria-label");
    return (l && l.trim() !== "") || el.hasAttribute("aria-labelledby") || (el.getAttribute("title") || "").trim() !== "";
  };

  const implicitRole = (el) => {
    const t = el.localName;
    switch (t) {
      case "a": case "area": return el.hasAttribute("href") ? "link" : "generic";
      case "button": return "button";
      case "input": return inputRole(el);
      case "textarea": return "textbox";
      case "select": return el.multiple || el.size > 1 ? "listbox" : "combobox";
      case "option": return "option";
      case "optgroup": return "group";
      case "h1": case "h2": case "h3": case "h4": case "h5": case "h6": return "heading";
      case "p": return "paragraph";
      case "ul": case "ol": case "menu": return "list";
      case "li": return "listitem";
      case "dl": return "descriptionList";
      case "dt": case "dfn": return "term";
      case "dd": return "definition";
      case "table": return "table";
      case "caption": return "caption";
      case "thead": case "tfoot": return "rowgroup";
      case "tbody": return "none";
      case "tr": return "row";
      case "td": {
        const table = el.closest("table");
        const r = table && (table.getAttribute("role") || "").trim().split(/\s+/)[0];
        return r === "grid" || r === "treegrid" ? "gridcell" : "cell";
      }
      case "th": return el.getAttribute("scope") === "row" ? "rowheader" : "columnheader";
      case "img": return el.getAttribute("alt") === "" && !hasAuthorName(el) ? "none" : "image";
      case "svg": return "image";
      case "nav": return "navigation";
      case "main": return "main";
      case "header": return scoped(el) ? "generic" : "banner";
      case "footer": return scoped(el) ? "generic" : "contentinfo";
      case "aside": return "complementary";
      case "article": return "article";
      case "section": return hasAuthorName(el) ? "region" : "generic";
      case "form": return "form";
      case "search": return "search";
      case "blockquote": return "blockquote";
      case "hr": return "separator";
      case "figure": return "figure";
      case "figcaption": return "figcaption";
      case "progress": return "progressbar";
      case "meter": return "meter";
      case "details": return "group";
      case "summary": return "disclosureTriangle";
      case "dialog": return "dialog";
      case "fieldset": return "group";
      case "legend": return "legend";
      case "label": return "labelText";
      case "iframe": case "frame": return "iframe";
      case "strong": return "strong";
      case "em": return "emphasis";
      case "code": return "code";
      case "mark": return "mark";
      case "sub": return "subscript";
      case "sup": return "superscript";
      case "time": return "time";
      case "abbr": return "abbr";
      case "address": return "group";
      case "del": return "deletion";
      case "ins": return "insertion";
      case "output": return "status";
      case "canvas": return "canvas";
      case "video": return "video";
      case "audio": return "audio";
      case "math": return "math";
      case "html": case "body": return "none";
      case "br": return "lineBreak";
      default: return "generic";
    }
  };

  const focusable = (el) => el.tabIndex >= 0 || el.hasAttribute("tabindex") || el.isContentEditable;

  const roleOf = (el) => {
    const attr = el.getAttribute("role");
    if (attr) {
      for (const token of attr.trim().toLowerCase().split(/\s+/)) {
        const mapped = ARIA[token];
        if (mapped) {
          // Presentation is ignored on focusable elements.
          if (mapped === "none" && focusable(el)) break;
          return mapped;
        }
        if (KNOWN.has(token)) return token;
      }
    }
    return implicitRole(el);
  };

  // The text an element shows, for names from content.
  const contentText = (el) => {
    if (!el.firstElementChild) return collapse(el.textContent || "");
    let text = collapse(el.innerText || "");
    if (text) return text;
    // Pictures only: their alternative texts.
    const parts = [];
    for (const p of el.querySelectorAll("img[alt], [aria-label], svg title")) {
      parts.push(p.localName === "title" ? p.textContent : (p.getAttribute("alt") || p.getAttribute("aria-label")));
    }
    return collapse(parts.join(" "));
  };

  const textOfRef = (el) => {
    const l = el.getAttribute("aria-label");
    if (l && l.trim()) return l;
    return el.localName === "input" || el.localName === "textarea" ? el.value : (el.innerText || el.textContent || "");
  };

  const labelledBy = (el) => {
    const list = el.getAttribute("aria-labelledby");
    if (!list) return "";
    const root = el.getRootNode();
    const parts = [];
    for (const id of list.trim().split(/\s+/)) {
      const r = root.getElementById ? root.getElementById(id) : document.getElementById(id);
      if (r) parts.push(textOfRef(r));
    }
    return collapse(parts.join(" "));
  };

  const BUTTON_INPUTS = new Set(["button", "submit", "reset", "image"]);
  const DEFAULT_BUTTON = { submit: "Submit", reset: "Reset", image: "Submit" };

  const nameOf = (el, role) => {
    if (NAMELESS.has(role)) return "";
    let n = labelledBy(el);
    if (n) return n;
    const aria = el.getAttribute("aria-label");
    if (aria && aria.trim()) return collapse(aria);
    const t = el.localName;
    if (t === "input" && BUTTON_INPUTS.has(el.type)) {
      if (el.type === "image") n = el.getAttribute("alt") || el.value;
      else n = el.value;
      n = collapse(n || DEFAULT_BUTTON[el.type] || "");
      if (n) return n;
    } else if (t === "input" || t === "textarea" || t === "select") {
      if (el.labels) {
        const parts = [];
        for (const l of el.labels) parts.push(l.innerText || l.textContent || "");
        n = collapse(parts.join(" "));
        if (n) return n;
      }
      n = collapse(el.getAttribute("title") || "") || collapse(el.getAttribute("placeholder") || "");
      if (n) return n;
    } else if (t === "img" || t === "area") {
      n = collapse(el.getAttribute("alt") || "");
      if (n) return n;
    } else if (t === "svg") {
      const title = el.querySelector(":scope > title");
      n = title ? collapse(title.textContent || "") : "";
      if (n) return n;
    } else if (t === "table") {
      const c = el.querySelector(":scope > caption");
      n = c ? collapse(c.textContent || "") : "";
      if (n) return n;
    } else if (t === "fieldset") {
      const l = el.querySelector(":scope > legend");
      n = l ? collapse(l.textContent || "") : "";
      if (n) return n;
    } else if (t === "option") {
      n = collapse(el.label || el.textContent || "");
      if (n) return n;
    }
    if (FROM_CONTENT.has(role) && !(t === "input")) {
      n = contentText(el);
      if (n) return n;
    }
    return collapse(el.getAttribute("title") || "");
  };

  const valueOf = (el, role) => {
    const t = el.localName;
    if (t === "input") {
      const type = el.type;
      if (type === "checkbox" || type === "radio") return el.indeterminate ? "mixed" : String(el.checked);
      if (BUTTON_INPUTS.has(type) || type === "hidden" || type === "file") return null;
      const v = el.value;
      if (v === "") return null;
      // Never expose a secret: the length only, as the browser masks it.
      if (type === "password") return "\u2022".repeat(v.length);
      return v;
    }
    if (t === "textarea") return el.value === "" ? null : el.value;
    if (t === "select") {
      if (role === "listbox") return null;
      const o = el.selectedOptions && el.selectedOptions[0];
      return o ? collapse(o.label || o.textContent || "") : null;
    }
    if (t === "progress" || t === "meter") return el.hasAttribute("value") ? String(el.value) : null;
    if (role === "link" && (t === "a" || t === "area") && el.href) return el.href;
    const checked = el.getAttribute("aria-checked");
    if (checked && (role === "checkbox" || role === "radio" || role === "switch" || role === "menuitemcheckbox" || role === "menuitemradio")) return checked;
    const now = el.getAttribute("aria-valuetext") || el.getAttribute("aria-valuenow");
    if (now) return now;
    if (el.isContentEditable && (!el.parentElement || !el.parentElement.isContentEditable)) {
      const v = collapse(el.innerText || "");
      return v === "" ? null : v;
    }
    return null;
  };

  const ADDRESSING = ["data-testid", "id", "name", "role", "aria-label", "aria-labelledby", "tabindex"];
  const addressable = (el) => {
    for (const a of ADDRESSING) {
      const v = el.getAttribute(a);
      if (v !== null && v !== "") return true;
    }
    return el.hasAttribute("onclick");
  };
  const identifierOf = (el) => el.getAttribute("data-testid") || el.getAttribute("id") || null;

  const round = (v) => Math.round(v * 100) / 100;
  const rectOf = (r) => [round(r.x), round(r.y), round(r.width), round(r.height)];
  const range = document.createRange();

  // The children of a node in the flat tree.
  const childrenOf = (n) => {
    if (n.nodeType === 1) {
      if (n.shadowRoot) return n.shadowRoot.childNodes;
      if (n.localName === "slot") {
        const assigned = n.assignedNodes();
        if (assigned.length) return assigned;
      }
    }
    return n.childNodes;
  };

  // The content box of an <iframe> in its document's viewport.
  const frameBox = (el) => {
    const r = el.getBoundingClientRect();
    const s = getComputedStyle(el);
    const pl = parseFloat(s.paddingLeft) || 0, pt = parseFloat(s.paddingTop) || 0;
    const pr = parseFloat(s.paddingRight) || 0, pb = parseFloat(s.paddingBottom) || 0;
    return [round(r.left + el.clientLeft + pl), round(r.top + el.clientTop + pt),
      round(Math.max(0, el.clientWidth - pl - pr)), round(Math.max(0, el.clientHeight - pt - pb))];
  };

  // What the walk does at element `el` (`ariaHidden`: an ancestor hides
  // it from assistive technology; `css`: a selector whose matches are
  // kept whatever their role): null when it skips `el` and everything
  // under it, else whether it keeps `el` and whether it goes on into its
  // children.
  const assess = (el, ariaHidden, css) => {
    const tag = el.localName;
    if (SKIP.has(tag)) return null;
    let hasBox = true;
    let hiddenHere = false;
    if (!el.checkVisibility({ visibilityProperty: true })) {
      if (!el.checkVisibility()) {
        if (tag === "option" || tag === "optgroup") {
          hasBox = false;
        } else if (getComputedStyle(el).display === "contents") {
          hasBox = false;
        } else {
          return null;
        }
      } else {
        hiddenHere = true;
      }
    }
    const hiddenAria = ariaHidden || el.getAttribute("aria-hidden") === "true" || el.inert;
    const role = roleOf(el);
    const forced = css ? el.matches(css) : false;
    let keep;
    if (hiddenAria || hiddenHere) {
      keep = (addressable(el) && hasBox && !hiddenHere) || (forced && hasBox);
    } else {
      keep = forced || (role !== "generic" && role !== "none" && role !== "lineBreak") || addressable(el) || focusable(el);
      if (!keep && role === "generic") {
        // Elements that look clickable (a pointer cursor of their own).
        const s = getComputedStyle(el);
        if (s.cursor === "pointer") {
          const ps = el.parentElement ? getComputedStyle(el.parentElement).cursor : "";
          keep = ps !== "pointer";
        }
      }
    }
    const frame = tag === "iframe" || tag === "frame";
    const descend = !frame && tag !== "input" && tag !== "textarea" && !LEAVES.has(tag);
    return { keep, hasBox, hiddenHere, hiddenAria, role, frame, descend };
  };

  // The record of a kept element (see `walk`).
  const recordOf = (el, parent, a) => {
    const quiet = a.hiddenAria || a.hiddenHere;
    const r = a.role === "none" || a.role === "lineBreak" ? "generic" : a.role;
    const name = quiet ? "" : nameOf(el, r);
    const value = quiet ? null : valueOf(el, r);
    let enabled = 0;
    const disabled = (el.matches(":disabled")) || el.getAttribute("aria-disabled") === "true";
    if (disabled) enabled = 2;
    else if (focusable(el) || WIDGETS.has(r)) enabled = 1;
    const b = a.hasBox ? el.getBoundingClientRect() : null;
    return [idOf(el), parent, r, name || null, value, identifierOf(el), null,
      b ? rectOf(b) : null, enabled, el];
  };

  const rootRecord = () => [idOf(document), -1, "rootWebArea", collapse(document.title || "") || null, null, null, null,
    [0, 0, round(innerWidth), round(innerHeight)], 1, null];

  // One walk of the document (or of the subtree at `start`): every node
  // the tree keeps, in preorder, as
  // [id, parent index, role, name, value, identifier, text, bounds, enabled, element]
  // where enabled is 0 unknown, 1 enabled, 2 disabled.
  const walk = (opts) => {
    const nodes = [];
    const frames = [];
    const cap = opts.cap || 200000;
    const css = opts.css || null;
    let capped = false;
    nodes.push(rootRecord());
    const visit = (n, parent, ariaHidden, visHidden) => {
      if (nodes.length >= cap) { capped = true; return; }
      if (n.nodeType === 3) {
        if (ariaHidden || visHidden) return;
        const text = collapse(n.data);
        if (!text) return;
        const p = nodes[parent];
        if (p && p[3] === text) return;
        range.selectNodeContents(n);
        const r = range.getBoundingClientRect();
        nodes.push([idOf(n), parent, "staticText", null, null, null, text,
          r.width || r.height ? rectOf(r) : null, 0, null]);
        return;
      }
      if (n.nodeType !== 1) return;
      const el = n;
      const a = assess(el, ariaHidden, css);
      if (!a) return;
      let here = parent;
      if (a.keep) {
        nodes.push(recordOf(el, parent, a));
        here = nodes.length - 1;
        if (a.frame) frames.push([here].concat(frameBox(el)));
      }
      if (!a.descend) return;
      if (el.localName === "select") {
        for (const o of el.querySelectorAll("option")) visit(o, here, a.hiddenAria, a.hiddenHere);
        return;
      }
      const kids = childrenOf(el);
      for (let i = 0; i < kids.length; i++) visit(kids[i], here, a.hiddenAria, a.hiddenHere);
    };
    const start = opts.start || document.documentElement;
    if (start) visit(start, 0, false, false);
    return { nodes, frames, capped };
  };

  // The parent the walk reaches `el` through: its slot when it is
  // assigned to one, the host of its shadow root, else its parent;
  // undefined when the walk never reaches it (a host's unassigned light
  // child, a slot's fallback while nodes are assigned) or it is under a
  // <select> (whose options the walk takes by query).
  const parentOf = (el) => {
    if (el.assignedSlot) return el.assignedSlot;
    const p = el.parentNode;
    if (!p) return undefined;
    if (p.nodeType === 11) return p.host || undefined;
    if (p.nodeType !== 1) return p.nodeType === 9 ? null : undefined;
    if (p.shadowRoot) return undefined;
    if (p.localName === "slot" && p.assignedNodes().length) return undefined;
    if (p.localName === "select" || p.localName === "optgroup" || p.localName === "datalist") return undefined;
    return p;
  };

  // Every element of the document and its open shadow roots matching
  // `css` (the browser's own query), and every <iframe>/<frame>.
  const deepQuery = (css) => {
    const out = [];
    const roots = [document];
    for (let i = 0; i < roots.length; i++) {
      const r = roots[i];
      for (const e of r.querySelectorAll(css)) out.push(e);
      for (const e of r.querySelectorAll("iframe, frame")) out.push(e);
      for (const e of r.querySelectorAll("*")) if (e.shadowRoot) roots.push(e.shadowRoot);
    }
    return out;
  };

  // The walk's records of `targets` and of their kept ancestors only, as
  // `walk({ css })` would give them (same ids, parents, fields, preorder),
  // reading role, name and bounds of nothing else; null when a target is
  // somewhere this shortcut does not follow the walk (then walk).
  const pathWalk = (targets, css) => {
    const root = document.documentElement;
    if (!root) return null;
    // el -> its assessment (null: skipped with its subtree), given the
    // ancestors' (the same for every path through it).
    const seen = new Map();
    // el -> { a, chain } of kept elements.
    const kept = new Map();
    for (const t of new Set(targets)) {
      const chain = [t];
      let at = t;
      while (at !== root) {
        const p = parentOf(at);
        if (p === undefined) break;
        if (p === null) { chain.length = 0; break; }
        chain.push(p);
        at = p;
      }
      if (at !== root) {
        // Not under the walk's reach by a path we follow: only an element
        // that is not under a <select> is certainly out of it.
        if (t.closest && t.closest("select, datalist")) return null;
        continue;
      }
      chain.reverse();
      let ariaHidden = false;
      for (let i = 0; i < chain.length; i++) {
        const el = chain[i];
        let a = seen.get(el);
        if (a === undefined) {
          a = assess(el, ariaHidden, css);
          seen.set(el, a);
        }
        if (!a || (i < chain.length - 1 && !a.descend)) break;
        ariaHidden = a.hiddenAria;
        if (a.keep && !kept.has(el)) kept.set(el, { a, chain: chain.slice(0, i + 1) });
      }
    }
    const order = Array.from(kept.values());
    order.sort((x, y) => {
      const n = Math.min(x.chain.length, y.chain.length);
      for (let i = 0; i < n; i++) {
        if (x.chain[i] === y.chain[i]) continue;
        return x.chain[i].compareDocumentPosition(y.chain[i]) & Node.DOCUMENT_POSITION_FOLLOWING ? -1 : 1;
      }
      return x.chain.length - y.chain.length;
    });
    const nodes = [rootRecord()];
    const frames = [];
    const index = new Map();
    for (const k of order) {
      let parent = 0;
      for (let i = k.chain.length - 2; i >= 0; i--) {
        const j = index.get(k.chain[i]);
        if (j !== undefined) { parent = j; break; }
      }
      const el = k.chain[k.chain.length - 1];
      nodes.push(recordOf(el, parent, k.a));
      index.set(el, nodes.length - 1);
      if (k.a.frame) frames.push([nodes.length - 1].concat(frameBox(el)));
    }
    return { nodes, frames, capped: false };
  };

  const lower = (s, sensitive) => (sensitive ? s : s.toLowerCase());
  const textMatches = (t, s) => {
    if (s === null || s === undefined) return false;
    const hay = lower(s, t.caseSensitive), needle = lower(t.value, t.caseSensitive);
    return t.mode === "contains" ? hay.includes(needle) : hay === needle;
  };
  // The accessibility fields of a selector, as the host matches them.
  const matches = (q, rec) => {
    if (q.role != null && rec[2] !== q.role) return false;
    if (q.name != null && rec[3] !== q.name) return false;
    if (q.value != null && rec[4] !== q.value) return false;
    if (q.identifier != null && rec[5] !== q.identifier) return false;
    if (q.text != null && !(textMatches(q.text, rec[6]) || textMatches(q.text, rec[3]))) return false;
    if (q.css != null && !(rec[9] && rec[9].matches(q.css))) return false;
    return true;
  };

  const finish = (w, keepIndexes) => {
    // Re-index the kept records, parents included, in preorder.
    const keepSet = new Set();
    for (const i of keepIndexes) {
      for (let at = i; at >= 0 && !keepSet.has(at); at = w.nodes[at][1]) keepSet.add(at);
    }
    const order = Array.from(keepSet).sort((a, b) => a - b);
    const map = new Map();
    const out = [];
    for (const i of order) {
      const r = w.nodes[i];
      map.set(i, out.length);
      out.push([r[0], r[1] < 0 ? -1 : map.get(r[1]), r[2], r[3], r[4], r[5], r[6], r[7], r[8]]);
    }
    const frames = [];
    for (const f of w.frames) if (map.has(f[0])) frames.push([map.get(f[0])].concat(f.slice(1)));
    return { nodes: out, frames };
  };

  const idle = () => {
    let running = 0;
    try {
      for (const a of document.getAnimations()) if (a.playState === "running") running++;
    } catch (e) { running = 0; }
    return { runningAnimations: running, msSinceMutation: Math.round(performance.now() - lastMutation) };
  };

  const header = () => ({
    url: location.href,
    title: collapse(document.title || ""),
    scroll: [round(scrollX), round(scrollY)],
    viewport: [round(innerWidth), round(innerHeight)],
  });

  globalThis.__drAgent = {
    version: VERSION,
    // The whole tree of this document, as a JSON string.
    tree(opts) {
      const w = walk({ cap: opts && opts.cap });
      const nodes = w.nodes.map((r) => [r[0], r[1], r[2], r[3], r[4], r[5], r[6], r[7], r[8]]);
      return JSON.stringify(Object.assign(header(), { nodes, frames: w.frames, capped: w.capped, idle: idle() }));
    },
    // The nodes matching a selector (or every node under `within`), at
    // most `limit` of them with their ancestors, and how many matched in
    // all; <iframe> nodes come along so their documents can be searched.
    query(q) {
      const sel = q.selector || {};
      if (sel.css != null) {
        // An invalid selector throws here, with the browser's message.
        document.querySelector(sel.css);
      }
      // A css selector is answered by the browser's own query first: only
      // its matches, the frames and their ancestors are read.
      const w = (sel.css != null && q.within == null && !q.ids && pathWalk(deepQuery(sel.css), sel.css))
        || walk({ css: sel.css });
      let within = -1;
      if (q.within != null) {
        within = w.nodes.findIndex((r) => r[0] === q.within);
        if (within < 0) return JSON.stringify(Object.assign(header(), { nodes: [], frames: [], total: 0, matches: [], withinMissing: true }));
      }
      const inside = (i) => {
        if (within < 0) return true;
        for (let at = i; at >= 0; at = w.nodes[at][1]) if (at === within) return true;
        return false;
      };
      const ids = q.ids ? new Set(q.ids) : null;
      const hits = [];
      let total = 0;
      for (let i = 0; i < w.nodes.length; i++) {
        const r = w.nodes[i];
        if (ids ? !ids.has(r[0]) : !matches(sel, r)) continue;
        if (!inside(i)) continue;
        total++;
        if (hits.length < q.limit) hits.push(i);
      }
      const keep = hits.slice();
      // Frames inside the searched part are searched too.
      const frameOwners = [];
      for (const f of w.frames) if (inside(f[0])) { keep.push(f[0]); frameOwners.push(w.nodes[f[0]][0]); }
      const f = finish(w, keep);
      return JSON.stringify(Object.assign(header(), {
        nodes: f.nodes, frames: f.frames, total,
        matches: hits.map((i) => w.nodes[i][0]),
        idle: idle(),
      }));
    },
    // The node with id `i`, or null once it left the document.
    node(i) { return byId(i); },
    // Where the document is, without walking it.
    where() { return JSON.stringify(header()); },
  };
  return VERSION;
})()
