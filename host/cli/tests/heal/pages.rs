//! The pages of the heal-accuracy suite: five flows a person goes through
//! in a browser (sign in, edit a table row, follow an article's link, fill
//! a form with a select, confirm inside a frame), each built from a
//! [`Variant`]: the original page, or one changed the way real pages
//! change between a recording and its replay. Every page reports what is
//! pressed (`/probe?click=NAME`) and what a form sends
//! (`/probe?submit=…`), so a test knows which element an Action reached;
//! each probe carries its page load's time and its number (`o=T-N`), as
//! requests may arrive out of order.

/// How a variant changes the flow's key element (the one its last tap
/// presses) or the page around it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Variant {
    /// A banner of this height above everything (moves every element).
    pub(crate) banner: u32,
    /// Every identifier renamed (labels kept).
    pub(crate) ids_renamed: bool,
    /// The key element relabelled.
    pub(crate) relabelled: bool,
    /// A look-alike of the key element (a longer label) before it.
    pub(crate) lookalike: bool,
    /// A copy of the key element after it: `Some(true)` with the same
    /// identifier (so no identifier tells them apart), `Some(false)` with
    /// none.
    pub(crate) duplicate: Option<bool>,
    /// A fixed cookie banner over the key element (`Some(true)`: an
    /// invisible overlay that still takes clicks).
    pub(crate) covered: Option<bool>,
    /// Empty space of this height before the content (below the fold).
    pub(crate) spacer: u32,
    /// The key element removed.
    pub(crate) removed: bool,
    /// The key element replaced by another control in its place.
    pub(crate) replaced: bool,
    /// The key element hidden (`display: none`).
    pub(crate) hidden: bool,
    /// The key element wrapped in a named section.
    pub(crate) wrapped: bool,
    /// The first two fields swapped.
    pub(crate) reordered: bool,
    /// The key element moved this far right.
    pub(crate) shift_x: u32,
    /// The key element made wider and taller.
    pub(crate) resized: bool,
    /// The key element moved to the end of the page (another container).
    pub(crate) elsewhere: bool,
}

/// What a replay on a variant must do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Expect {
    /// Reach every recorded element again (matched or healed).
    Heal,
    /// Stop before acting on anything else.
    Diverge,
}

/// The changes the suite makes to every flow, named, with the outcome a
/// replay must have.
pub(crate) fn mutations() -> Vec<(&'static str, Variant, Expect)> {
    let v = Variant::default;
    vec![
        ("unchanged", v(), Expect::Heal),
        (
            "moved by a banner",
            Variant { banner: 90, ..v() },
            Expect::Heal,
        ),
        (
            "moved by a tall banner",
            Variant { banner: 260, ..v() },
            Expect::Heal,
        ),
        (
            "moved right",
            Variant {
                shift_x: 180,
                ..v()
            },
            Expect::Heal,
        ),
        (
            "resized",
            Variant {
                resized: true,
                ..v()
            },
            Expect::Heal,
        ),
        (
            "relabelled, id kept",
            Variant {
                relabelled: true,
                ..v()
            },
            Expect::Heal,
        ),
        (
            "ids renamed",
            Variant {
                ids_renamed: true,
                ..v()
            },
            Expect::Heal,
        ),
        (
            "ids renamed and a look-alike before it",
            Variant {
                ids_renamed: true,
                lookalike: true,
                ..v()
            },
            Expect::Heal,
        ),
        (
            "reordered",
            Variant {
                reordered: true,
                ..v()
            },
            Expect::Heal,
        ),
        (
            "wrapped in a section",
            Variant {
                wrapped: true,
                ..v()
            },
            Expect::Heal,
        ),
        (
            "wrapped and ids renamed",
            Variant {
                wrapped: true,
                ids_renamed: true,
                ..v()
            },
            Expect::Heal,
        ),
        (
            "copied without an id",
            Variant {
                duplicate: Some(false),
                ..v()
            },
            Expect::Heal,
        ),
        (
            "below the fold",
            Variant {
                spacer: 1400,
                ..v()
            },
            Expect::Heal,
        ),
        (
            "moved to the end of the page",
            Variant {
                elsewhere: true,
                ..v()
            },
            Expect::Heal,
        ),
        (
            "duplicated, same id",
            Variant {
                duplicate: Some(true),
                ..v()
            },
            Expect::Diverge,
        ),
        (
            "duplicated and ids renamed",
            Variant {
                duplicate: Some(true),
                ids_renamed: true,
                ..v()
            },
            Expect::Diverge,
        ),
        (
            "covered by a cookie banner",
            Variant {
                covered: Some(false),
                ..v()
            },
            Expect::Diverge,
        ),
        (
            "covered by an invisible overlay",
            Variant {
                covered: Some(true),
                ..v()
            },
            Expect::Diverge,
        ),
        (
            "removed",
            Variant {
                removed: true,
                ..v()
            },
            Expect::Diverge,
        ),
        (
            "replaced by another control",
            Variant {
                replaced: true,
                ..v()
            },
            Expect::Diverge,
        ),
        (
            "relabelled and ids renamed",
            Variant {
                relabelled: true,
                ids_renamed: true,
                ..v()
            },
            Expect::Diverge,
        ),
        (
            "hidden",
            Variant {
                hidden: true,
                ..v()
            },
            Expect::Diverge,
        ),
    ]
}

/// The script every page carries: clicks (capture phase, so nothing the
/// page does hides them) and submissions reported to `/probe`.
const PROBE: &str = r#"<script>
const probeT0 = performance.timeOrigin; let probeSeq = 0;
const probe = (q) => { fetch("/probe?o=" + probeT0 + "-" + (probeSeq++) + "&" + q, { keepalive: true, cache: "no-store" }).catch(() => {}); };
document.addEventListener("click", (e) => {
  const t = e.target.closest("[data-probe]");
  probe("click=" + encodeURIComponent(t ? t.dataset.probe : "untagged:" + e.target.tagName.toLowerCase()));
}, true);
</script>"#;

const STYLE: &str = "<style>body{font:16px sans-serif;margin:0;padding:24px}\
form,.col{display:flex;flex-direction:column;gap:14px;width:420px}\
input,select{font-size:16px;padding:8px}\
button{font-size:16px;padding:10px;width:220px}\
.cookie{position:fixed;left:0;right:0;z-index:10;background:#223;color:#fff;padding:0;display:flex;align-items:center;gap:20px}\
.cookie button{width:auto}\
.ghost{position:fixed;left:0;right:0;z-index:10;background:transparent}\
table{border-collapse:collapse}td{padding:1px 8px;height:30px}td button{padding:3px 10px;width:auto}\
</style>";

/// An identifier under `v`.
fn id(v: &Variant, name: &str) -> String {
    if v.ids_renamed {
        format!("{name}-v2")
    } else {
        name.to_owned()
    }
}

/// The head, the banner and the spacer of a page titled `title`.
fn open(title: &str, v: &Variant) -> String {
    let mut out = format!(
        "<!doctype html><html><head><meta charset=utf-8><title>{title}</title>{STYLE}{PROBE}</head><body>"
    );
    if v.banner > 0 {
        out.push_str(&format!(
            "<div role=note data-probe=banner style=\"height:{}px;background:#ffd\">New: we moved things around</div>",
            v.banner
        ));
    }
    if v.spacer > 0 {
        out.push_str(&format!("<div style=\"height:{}px\"></div>", v.spacer));
    }
    out
}

/// The cookie banner or overlay placed over the key element (the one
/// whose probe is `key`), in the viewport.
fn cover(v: &Variant, key: &str) -> String {
    let el = match v.covered {
        Some(false) => "<div class=cookie id=cover data-probe=cookie-banner>\
             <span>We use cookies to make this site work.</span>\
             <button data-probe=cookie-accept>Accept cookies</button></div>"
            .to_owned(),
        Some(true) => "<div class=ghost id=cover data-probe=overlay></div>".to_owned(),
        None => return String::new(),
    };
    format!(
        "{el}<script>(() => {{ const k = document.querySelector('[data-probe=\"{key}\"]') \
         || document.querySelector('iframe'); const r = k.getBoundingClientRect(); \
         const c = document.getElementById('cover'); c.style.top = Math.max(0, r.top - 30) + 'px'; \
         c.style.height = (r.height + 60) + 'px'; }})();</script>"
    )
}

/// The key element `html` (a button or link) as `v` changes it; `alt` is
/// what replaces it.
fn key(v: &Variant, html: String, lookalike: String, copy: String, alt: String) -> String {
    if v.removed {
        return String::new();
    }
    if v.replaced {
        return alt;
    }
    let mut el = html;
    if v.hidden {
        el = format!("<div style=\"display:none\">{el}</div>");
    }
    if v.shift_x > 0 || v.resized {
        let mut style = String::new();
        if v.shift_x > 0 {
            style.push_str(&format!("margin-left:{}px;", v.shift_x));
        }
        if v.resized {
            style.push_str("width:360px;height:70px;");
        }
        el = format!("<div style=\"{style}\" class=keybox>{el}</div>");
    }
    if v.wrapped {
        el = format!("<section aria-label=\"Actions\"><div><div>{el}</div></div></section>");
    }
    let mut out = String::new();
    if v.lookalike {
        out.push_str(&lookalike);
    }
    out.push_str(&el);
    if v.duplicate.is_some() {
        out.push_str(&copy);
    }
    out
}

/// A `<button>` with id `i`, probe `p` and label `l`.
fn button(i: Option<&str>, p: &str, l: &str, onclick: &str) -> String {
    let id = i.map(|i| format!(" id=\"{i}\"")).unwrap_or_default();
    format!("<button type=button{id} data-probe=\"{p}\" onclick=\"{onclick}\">{l}</button>")
}

/// The resized style applies to the element inside the box too.
const RESIZE_CSS: &str =
    "<style>.keybox button,.keybox a{width:100%;height:100%;display:block}</style>";

/// Sign in: Username, Password, `Sign in` (the key).
pub(crate) fn sign_in(v: &Variant) -> String {
    let mut out = open("Sign in", v);
    out.push_str(RESIZE_CSS);
    out.push_str("<h1>Sign in</h1>");
    out.push_str(&format!(
        "<form id=\"{}\" aria-label=\"Sign in\" onsubmit=\"return false\">",
        id(v, "login")
    ));
    let user = format!(
        "<label>Username <input id=\"{}\" data-probe=username autocomplete=off></label>",
        id(v, "username")
    );
    let pass = format!(
        "<label>Password <input id=\"{}\" type=password data-probe=password></label>",
        id(v, "password")
    );
    if v.reordered {
        out.push_str(&pass);
        out.push_str(&user);
    } else {
        out.push_str(&user);
        out.push_str(&pass);
    }
    let submit = "done()";
    let label = if v.relabelled { "Log in" } else { "Sign in" };
    let key_html = key(
        v,
        button(Some(&id(v, "submit")), "signin", label, submit),
        button(Some(&id(v, "sso")), "sso", "Sign in with SSO", ""),
        button(
            v.duplicate
                .filter(|s| *s)
                .map(|_| id(v, "submit"))
                .as_deref(),
            "signin-copy",
            label,
            "",
        ),
        button(Some(&id(v, "delete")), "delete", "Delete account", ""),
    );
    if !v.elsewhere {
        out.push_str(&key_html);
    }
    out.push_str("</form><p id=status role=status></p>");
    if v.elsewhere {
        out.push_str("<footer><p>Done?</p>");
        out.push_str(&key_html);
        out.push_str("</footer>");
    }
    out.push_str(&cover(v, "signin"));
    out.push_str(&format!(
        "<script>function done(){{const u=document.getElementById(\"{}\").value,p=document.getElementById(\"{}\").value;\
         document.getElementById('status').textContent='Welcome '+u;probe('submit=signin&user='+encodeURIComponent(u)+'&pass='+p.length)}}</script>",
        id(v, "username"),
        id(v, "password")
    ));
    out.push_str("</body></html>");
    out
}

/// A table of 20 people with an `Edit` button each; the key is row 12's;
/// Edit opens a dialog with a Name field and Save.
pub(crate) fn table(v: &Variant) -> String {
    let mut out = open("People", v);
    out.push_str(RESIZE_CSS);
    out.push_str("<h1>People</h1><table aria-label=People><tbody>");
    let label = if v.relabelled { "Change" } else { "Edit" };
    let mut key_html = String::new();
    for i in 0..20 {
        let name = format!("Person {i:02}");
        let row_id = id(v, &format!("row-{i}"));
        let edit = format!("edit({i})");
        let cell = if i == 12 {
            key_html = key(
                v,
                button(Some(&id(v, "edit-12")), "edit-12", label, &edit),
                button(
                    Some(&id(v, "edit-12-info")),
                    "edit-12-info",
                    "Edit later",
                    "",
                ),
                button(
                    v.duplicate
                        .filter(|s| *s)
                        .map(|_| id(v, "edit-12"))
                        .as_deref(),
                    "edit-12-copy",
                    label,
                    "",
                ),
                button(Some(&id(v, "delete-12")), "delete-12", "Delete", ""),
            );
            if v.elsewhere {
                String::new()
            } else {
                key_html.clone()
            }
        } else {
            button(
                Some(&id(v, &format!("edit-{i}"))),
                &format!("edit-{i}"),
                "Edit",
                &edit,
            )
        };
        out.push_str(&format!(
            "<tr id=\"{row_id}\" aria-label=\"{name}\"><td>{name}</td><td>{cell}</td></tr>"
        ));
    }
    out.push_str("</tbody></table>");
    if v.elsewhere {
        out.push_str(&format!("<footer><p>Person 12</p>{key_html}</footer>"));
    }
    out.push_str(&format!(
        "<div role=dialog aria-label=\"Edit person\" id=\"{}\" hidden class=col style=\"position:fixed;top:90px;right:40px;background:#eef;padding:16px\">\
         <label>Name <input id=\"{}\" data-probe=name autocomplete=off></label>{}</div>",
        id(v, "editor"),
        id(v, "name"),
        button(Some(&id(v, "save")), "save", "Save", "save()")
    ));
    out.push_str("<p id=status role=status></p>");
    out.push_str(&cover(v, "edit-12"));
    out.push_str(&format!(
        "<script>let row=null;function edit(i){{row=i;const d=document.getElementById(\"{ed}\");d.hidden=false;\
         document.getElementById(\"{nm}\").value='';}}\
         function save(){{const n=document.getElementById(\"{nm}\").value;document.getElementById('status').textContent='Saved '+n;\
         probe('submit=edit&row='+row+'&name='+encodeURIComponent(n))}}</script>",
        ed = id(v, "editor"),
        nm = id(v, "name")
    ));
    out.push_str("</body></html>");
    out
}

/// An article with sections and links `Reference N`; the key is
/// `Reference 7`, which opens `/ref/7`.
pub(crate) fn article(v: &Variant) -> String {
    let mut out = open("Article", v);
    out.push_str(RESIZE_CSS);
    out.push_str("<main><h1>On healing</h1>");
    let label = if v.relabelled {
        "Source 7"
    } else {
        "Reference 7"
    };
    let link = |i: Option<&str>, p: &str, l: &str| {
        let id = i.map(|i| format!(" id=\"{i}\"")).unwrap_or_default();
        format!("<a{id} href=\"/ref/7\" data-probe=\"{p}\">{l}</a>")
    };
    let mut key_html = String::new();
    for s in 0..6 {
        out.push_str(&format!("<section aria-label=\"Section {s}\"><h2>Section {s}</h2><p>Words about part {s} of the matter at hand, long enough to wrap a little.</p><p>"));
        for r in 0..3 {
            let n = s * 3 + r;
            if n == 7 {
                key_html = key(
                    v,
                    link(Some(&id(v, "ref-7")), "ref-7", label),
                    link(
                        Some(&id(v, "ref-7-more")),
                        "ref-7-more",
                        "Reference 7 and more",
                    ),
                    link(
                        v.duplicate
                            .filter(|s| *s)
                            .map(|_| id(v, "ref-7"))
                            .as_deref(),
                        "ref-7-copy",
                        label,
                    ),
                    format!(
                        "<a id=\"{}\" href=\"/ref/8\" data-probe=ref-8-moved>Reference 8</a>",
                        id(v, "ref-x")
                    ),
                );
                if !v.elsewhere {
                    out.push_str(&key_html);
                }
            } else {
                out.push_str(&format!(
                    "<a id=\"{}\" href=\"/ref/{n}\" data-probe=\"ref-{n}\">Reference {n}</a> ",
                    id(v, &format!("ref-{n}"))
                ));
            }
        }
        out.push_str("</p></section>");
    }
    out.push_str("</main>");
    if v.elsewhere {
        out.push_str(&format!("<footer><p>See also</p>{key_html}</footer>"));
    }
    out.push_str(&cover(v, "ref-7"));
    out.push_str("</body></html>");
    out
}

/// The page a reference link opens.
pub(crate) fn reference(n: u32) -> String {
    format!(
        "<!doctype html><html><head><meta charset=utf-8><title>Reference {n}</title>{PROBE}</head>\
         <body><h1>Reference {n}</h1><p>The reference itself.</p></body></html>"
    )
}

/// A form: Name, a Country select, an `I agree` checkbox and `Submit`
/// (the key).
pub(crate) fn form(v: &Variant) -> String {
    let mut out = open("Order", v);
    out.push_str(RESIZE_CSS);
    out.push_str(&format!(
        "<h1>Order</h1><form id=\"{}\" aria-label=Order onsubmit=\"return false\">",
        id(v, "order")
    ));
    let name = format!(
        "<label>Name <input id=\"{}\" data-probe=name autocomplete=off></label>",
        id(v, "name")
    );
    let country = format!(
        "<label>Country <select id=\"{}\" data-probe=country><option value=\"\">Choose</option>\
         <option value=de>Germany</option><option value=fr>France</option><option value=jp>Japan</option></select></label>",
        id(v, "country")
    );
    if v.reordered {
        out.push_str(&country);
        out.push_str(&name);
    } else {
        out.push_str(&name);
        out.push_str(&country);
    }
    out.push_str(&format!(
        "<label><input type=checkbox id=\"{}\" data-probe=agree> I agree</label>",
        id(v, "agree")
    ));
    let label = if v.relabelled {
        "Place order"
    } else {
        "Submit"
    };
    let key_html = key(
        v,
        button(Some(&id(v, "submit")), "submit", label, "send()"),
        button(
            Some(&id(v, "submit-draft")),
            "submit-draft",
            "Submit as draft",
            "",
        ),
        button(
            v.duplicate
                .filter(|s| *s)
                .map(|_| id(v, "submit"))
                .as_deref(),
            "submit-copy",
            label,
            "",
        ),
        button(Some(&id(v, "cancel")), "cancel", "Cancel order", ""),
    );
    if !v.elsewhere {
        out.push_str(&key_html);
    }
    out.push_str("</form><p id=status role=status></p>");
    if v.elsewhere {
        out.push_str(&format!("<footer><p>Ready?</p>{key_html}</footer>"));
    }
    out.push_str(&cover(v, "submit"));
    out.push_str(&format!(
        "<script>function send(){{const n=document.getElementById(\"{n}\").value,c=document.getElementById(\"{c}\").value,a=document.getElementById(\"{a}\").checked;\
         document.getElementById('status').textContent='Ordered for '+n;probe('submit=order&name='+encodeURIComponent(n)+'&country='+c+'&agree='+a)}}</script>",
        n = id(v, "name"),
        c = id(v, "country"),
        a = id(v, "agree")
    ));
    out.push_str("</body></html>");
    out
}

/// A page holding a checkout frame (`/inner`).
pub(crate) fn framed(v: &Variant) -> String {
    let mut out = open("Checkout", v);
    out.push_str("<h1>Checkout</h1><p>Confirm your order below.</p>");
    out.push_str(&format!(
        "<iframe id=\"{}\" title=Payment src=\"/inner\" style=\"width:640px;height:320px;border:1px solid #999\"></iframe>",
        id(v, "payment")
    ));
    out.push_str("<p id=status role=status></p>");
    out.push_str(&cover(v, "payment-frame"));
    out.push_str("</body></html>");
    out
}

/// The frame's document: `Confirm` (the key).
pub(crate) fn inner(v: &Variant) -> String {
    let bare = Variant {
        banner: 0,
        spacer: 0,
        covered: None,
        ..*v
    };
    let mut out = open("Payment", &bare);
    out.push_str(RESIZE_CSS);
    out.push_str("<div class=col><p>Total: 42 EUR</p>");
    let label = if v.relabelled { "Pay now" } else { "Confirm" };
    let key_html = key(
        &bare,
        button(Some(&id(v, "confirm")), "confirm", label, "confirmed()"),
        button(
            Some(&id(v, "confirm-later")),
            "confirm-later",
            "Confirm later",
            "",
        ),
        button(
            v.duplicate
                .filter(|s| *s)
                .map(|_| id(v, "confirm"))
                .as_deref(),
            "confirm-copy",
            label,
            "",
        ),
        button(Some(&id(v, "abort")), "abort", "Abort payment", ""),
    );
    if !v.elsewhere {
        out.push_str(&key_html);
    }
    out.push_str("<p id=status role=status></p></div>");
    if v.elsewhere {
        out.push_str(&format!(
            "<footer style=\"margin-top:160px\">{key_html}</footer>"
        ));
    }
    out.push_str("<script>function confirmed(){document.getElementById('status').textContent='Paid';probe('submit=paid')}</script>");
    out.push_str("</body></html>");
    out
}
