//! The comparison report of a replay: one self-contained HTML page (no
//! scripts, no network; screenshots inlined) with, for each step, the
//! recorded and the replayed screen before it side by side with the
//! element outlined in both, the screens after it, the verdict, both
//! positions of a healed step and the difference.
//!
//! Pure: it renders a [`Replayed`] to text; the caller writes the file.

use base64::Engine;
use devicerail_host_protocol::UiRect;
use devicerail_host_report::bundle::SessionData;

use crate::run::{Replayed, StepOutcome, Verdict};

const STYLE: &str = "body{font:14px system-ui,sans-serif;margin:24px;color:#1d2330;background:#f6f7f9}\
h1{font-size:20px}section{background:#fff;border-radius:8px;padding:12px 16px;margin:12px 0;border-left:6px solid #2e7d32}\
section.healed{border-color:#f9a825}section.diverged{border-color:#c62828}section.skipped{border-color:#9e9e9e}\
.verdict{font-weight:600;text-transform:uppercase;font-size:12px}\
.pair{display:flex;gap:16px;flex-wrap:wrap}figure{margin:0}figcaption{font-size:12px;color:#555}\
.shot{position:relative;display:inline-block}.shot img{max-width:260px;max-height:460px;display:block;border:1px solid #ccc}\
.box{position:absolute;border:3px solid #e53935;box-sizing:border-box}.box.now{border-color:#1e88e5}\
.missing{width:260px;height:120px;border:1px dashed #aaa;display:flex;align-items:center;justify-content:center;color:#777}\
ul{margin:6px 0}code{background:#eef;padding:0 3px}";

fn esc(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            _ => out.push(c),
        }
    }
    out
}

fn image(data: Option<&SessionData>, sha: Option<&str>) -> Option<String> {
    let blob = data?.blobs.get(sha?)?;
    if !blob.media_type.starts_with("image/") {
        return None;
    }
    Some(format!(
        "data:{};base64,{}",
        blob.media_type,
        base64::engine::general_purpose::STANDARD.encode(&blob.bytes)
    ))
}

fn shot(
    caption: &str,
    data: Option<&SessionData>,
    sha: Option<&str>,
    rect: Option<UiRect>,
    viewport: Option<(f64, f64)>,
    class: &str,
) -> String {
    let Some(src) = image(data, sha) else {
        return format!(
            "<figure><figcaption>{}</figcaption><div class=\"missing\">no screenshot</div></figure>",
            esc(caption)
        );
    };
    let outline = match (rect, viewport) {
        (Some(r), Some((w, h))) if w > 0.0 && h > 0.0 => format!(
            "<div class=\"box {class}\" style=\"left:{:.3}%;top:{:.3}%;width:{:.3}%;height:{:.3}%\"></div>",
            100.0 * r.x / w,
            100.0 * r.y / h,
            100.0 * r.width.get() / w,
            100.0 * r.height.get() / h
        ),
        _ => String::new(),
    };
    format!(
        "<figure><figcaption>{}</figcaption><div class=\"shot\"><img alt=\"{}\" src=\"{src}\">{outline}</div></figure>",
        esc(caption),
        esc(caption)
    )
}

fn step(r: &Replayed, s: &StepOutcome) -> String {
    let rec = Some(&r.recorded);
    let rep = r.replayed.as_ref();
    let t = s.shots.target.as_ref();
    let mut out = format!(
        "<section class=\"{v}\" id=\"step-{n}\"><h2>Step {n} · <code>{a}</code> · <span class=\"verdict\">{v}</span></h2><p>{note}</p>",
        v = s.verdict.as_str(),
        n = s.number,
        a = esc(&s.action),
        note = esc(&s.note)
    );
    if let Some(e) = &s.element {
        out.push_str(&format!("<p>Element: {}</p>", esc(e)));
    }
    if let Some(h) = &s.heal {
        out.push_str(&format!(
            "<p>Healed (found by {}): recorded at ({:.0}, {:.0}), hit at ({:.0}, {:.0}).</p>",
            h.found_by, h.from[0], h.from[1], h.to[0], h.to[1]
        ));
    }
    if let Some(secret) = &s.secret {
        out.push_str(&format!(
            "<p>Secret from <code>{}</code> (never recorded).</p>",
            esc(secret)
        ));
    }
    if s.verdict != Verdict::Skipped {
        out.push_str("<div class=\"pair\">");
        out.push_str(&shot(
            "recorded, before",
            rec,
            s.shots.recorded.0.as_deref(),
            t.and_then(|t| t.recorded),
            s.shots.viewports.0,
            "",
        ));
        out.push_str(&shot(
            "replayed, before",
            rep,
            s.shots.replayed.0.as_deref(),
            t.and_then(|t| t.current),
            s.shots.viewports.1,
            "now",
        ));
        out.push_str(&shot(
            "recorded, after",
            rec,
            s.shots.recorded.1.as_deref(),
            None,
            None,
            "",
        ));
        out.push_str(&shot(
            "replayed, after",
            rep,
            s.shots.replayed.1.as_deref(),
            None,
            None,
            "",
        ));
        out.push_str("</div>");
    }
    if !s.comparison.differences.is_empty() {
        out.push_str("<p>Not seen again:</p><ul class=\"diff\">");
        for d in &s.comparison.differences {
            out.push_str(&format!("<li>{}</li>", esc(&d.to_string())));
        }
        out.push_str("</ul>");
    }
    if !s.candidates.is_empty() {
        out.push_str("<p>Current candidates:</p><ul>");
        for c in &s.candidates {
            out.push_str(&format!("<li>{}</li>", esc(c)));
        }
        out.push_str("</ul>");
    }
    if !s.comparison.screen.is_empty() {
        out.push_str(&format!(
            "<p class=\"screen\">Screens after the step differ: {}.</p>",
            esc(&s.comparison.screen)
        ));
    }
    out.push_str(&format!(
        "<p class=\"timing\">Recorded {} ms; replayed Action {} ms, whole step {} ms.</p></section>",
        s.recorded_ms
            .map(|m| m.to_string())
            .unwrap_or_else(|| "?".into()),
        s.action_ms,
        s.step_ms
    ));
    out
}

/// The comparison page of `r`.
pub fn render(r: &Replayed) -> String {
    let s = &r.summary;
    let mut out = format!(
        "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\">\
<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; img-src data:; style-src 'unsafe-inline'\">\
<title>Replay of Session {replays}</title><style>{STYLE}</style></head><body>\
<h1>Replay of Session <code>{replays}</code></h1>\
<p>New Session <code>{session}</code> on device <code>{device}</code>: <strong class=\"outcome\">{outcome}</strong> — {counts}.</p>",
        replays = esc(&s.replays),
        session = esc(&s.session),
        device = esc(&s.device),
        outcome = if s.succeeded() {
            "succeeded"
        } else {
            "diverged"
        },
        counts = esc(&s.counts()),
    );
    if let Some(why) = &s.stopped {
        out.push_str(&format!("<p class=\"stopped\">Stopped at {}</p>", esc(why)));
    }
    for st in &s.steps {
        out.push_str(&step(r, st));
    }
    out.push_str("</body></html>\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_is_escaped() {
        assert_eq!(
            esc("<a href=\"x\">&'"),
            "&lt;a href=&quot;x&quot;&gt;&amp;&#39;"
        );
    }
}
