//! The pages the live-page tests and the side-by-side benchmark drive: a
//! login form, a table of many rows, a long article with many links, and
//! a page of frames (same-origin, cross-origin in the page's process, and
//! cross-site in a process of its own). Generated, so the test and the
//! benchmark serve byte-identical pages.
#![allow(dead_code)]

/// Words of the article's filler text.
const WORDS: [&str; 16] = [
    "device", "rail", "observes", "the", "page", "and", "acts", "on", "what", "an", "agent",
    "needs", "with", "evidence", "for", "review",
];

/// A sign-in form: email, password, remember-me, and `#sign-in`, which
/// writes the outcome into `#status`.
pub(crate) fn login() -> String {
    r#"<!doctype html><html><head><title>Sign in</title>
<style>body { font: 16px sans-serif; margin: 40px } label { display: block; margin: 8px 0 }</style>
</head><body>
<h1>Sign in</h1>
<form id="login" onsubmit="event.preventDefault()">
<label>Email <input id="email" type="email" name="email" autocomplete="off"></label>
<label>Password <input id="password" type="password" name="password"></label>
<label><input id="remember" type="checkbox"> Remember me</label>
<button id="sign-in" type="submit" onclick="document.getElementById('status').textContent = 'Signed in as ' + (document.getElementById('email').value || 'nobody')">Sign in</button>
</form>
<p id="status" role="status">Not signed in</p>
<a href="/forgot">Forgot your password?</a>
</body></html>"#
        .to_owned()
}

/// The name of row `i` of [`table`].
pub(crate) fn person(i: usize) -> String {
    format!("Person {i:04}")
}

/// A table of `rows` people (name, email, team, an Edit button); every
/// tenth row has a `data-testid`. Edit writes "Editing <name>" into the
/// fixed `#status` line.
pub(crate) fn table(rows: usize) -> String {
    let mut body = String::from(
        r#"<!doctype html><html><head><title>People</title>
<style>body { font: 14px sans-serif; margin: 0 } #status { position: fixed; top: 0; right: 0; background: #ffd; padding: 4px }
table { border-collapse: collapse; margin: 40px 8px } td, th { border: 1px solid #ccc; padding: 2px 6px }</style>
</head><body>
<p id="status" role="status">Nothing edited</p>
<h1>People</h1>
<table id="people"><thead><tr><th>Name</th><th>Email</th><th>Team</th><th>Action</th></tr></thead><tbody>
"#,
    );
    for i in 0..rows {
        let testid = if i % 10 == 0 {
            format!(r#" data-testid="row-{i}""#)
        } else {
            String::new()
        };
        let name = person(i);
        body.push_str(&format!(
            "<tr{testid}><td>{name}</td><td>person{i}@example.com</td><td>Team {}</td><td><button onclick=\"document.getElementById('status').textContent='Editing {name}'\">Edit</button></td></tr>\n",
            i % 7
        ));
    }
    body.push_str("</tbody></table></body></html>");
    body
}

/// The title of link `i` of [`article`].
pub(crate) fn link_title(i: usize) -> String {
    format!("Reference {i:02}")
}

/// An article of about `words` words in sections with headings, and
/// `links` links (`/doc/<i>`) spread through it.
pub(crate) fn article(words: usize, links: usize) -> String {
    let mut body = String::from(
        r#"<!doctype html><html><head><title>The long article</title>
<style>body { font: 16px/1.5 serif; margin: 0 auto; max-width: 720px }</style>
</head><body>
<header><nav aria-label="Site"><a href="/">Home</a></nav></header>
<main><article><h1>The long article</h1>
"#,
    );
    let paragraphs = 60usize;
    let per = words / paragraphs;
    let mut link = 0usize;
    let mut word = 0usize;
    for p in 0..paragraphs {
        if p % 10 == 0 {
            body.push_str(&format!("<h2>Section {}</h2>\n", p / 10 + 1));
        }
        body.push_str("<p>");
        for _ in 0..per {
            body.push_str(WORDS[word % WORDS.len()]);
            word += 1;
            // Links spread evenly through the text.
            while link < links && word >= (link + 1) * words / (links + 1) {
                body.push_str(&format!(
                    r#" <a href="/doc/{link}">{}</a>"#,
                    link_title(link)
                ));
                link += 1;
            }
            body.push(' ');
        }
        body.push_str("</p>\n");
    }
    while link < links {
        body.push_str(&format!(
            r#"<p><a href="/doc/{link}">{}</a></p>"#,
            link_title(link)
        ));
        link += 1;
    }
    body.push_str("</article></main><footer><p>The end</p></footer></body></html>");
    body
}

/// The document of the same-origin frame.
pub(crate) fn inner() -> String {
    r#"<!doctype html><html><head><title>Inner</title></head><body style="margin:0">
<div data-testid="inner-banner">Embedded login</div>
<input id="user" data-testid="user-field" aria-label="User">
<button id="go" onclick="document.getElementById('hello').textContent = 'hello ' + document.getElementById('user').value">Log in</button>
<span id="hello"></span>
</body></html>"#
        .to_owned()
}

/// The document of the cross-origin frames: a card form whose button
/// writes into `pay-status`.
pub(crate) fn pay() -> String {
    r#"<!doctype html><html><head><title>Pay</title></head><body style="margin:0">
<form onsubmit="event.preventDefault(); document.querySelector('[data-testid=pay-status]').textContent = 'paid'">
<label for="card">Card number</label> <input id="card" data-testid="card">
<button id="pay">Pay now</button>
<span data-testid="pay-status">unpaid</span>
</form>
</body></html>"#
        .to_owned()
}

/// A page of three frames: `/inner` (same origin), `other_origin` (a
/// cross-origin URL of the same site: the page's process) and
/// `other_site` (a cross-site URL: a process of its own), each showing
/// [`inner`] or [`pay`].
pub(crate) fn frames(other_origin: &str, other_site: &str) -> String {
    format!(
        r#"<!doctype html><html><head><title>Frames</title></head><body style="margin:0">
<h1 style="margin:0;height:40px">Checkout</h1>
<iframe id="login" title="Login" src="/inner" style="position:absolute;left:30px;top:60px;width:400px;height:160px;border:0"></iframe>
<iframe id="same-site" title="Card" src="{other_origin}" style="position:absolute;left:450px;top:60px;width:400px;height:160px;border:0"></iframe>
<div style="height:1200px"></div>
<iframe id="cross-site" title="Payment" data-testid="payment-frame" src="{other_site}" style="display:block;margin-left:100px;width:500px;height:200px;border:0"></iframe>
</body></html>"#
    )
}
