//! The screens `launchApp` opens, built for agent benchmarks and tests:
//!
//! * `table` — 1,000 rows (`row "Person 0000"` … with a text naming the
//!   person and an `Edit` button, no identifiers); Edit opens a dialog with
//!   a `Name` field, `Save` and `Cancel`; Save renames that row's person.
//! * `article` — a heading, 40 paragraphs (about 3,000 words) and 70
//!   `link "Reference N"` (value `mock://ref/N`); a link opens a page with
//!   `heading "Reference N"` and a Back button.
//! * `moving` — `button "Continue"` slides from y=1000 to y=600 over 600 ms
//!   after the screen opens; then a `Cancel` button appears where it was.
//!   Continue sets the status to `Done`, Cancel to `Cancelled`.
//! * `changes` — `Save` and `Delete` buttons (status `Saved`/`Deleted`)
//!   and controls that remove Save, insert a banner above it (moving it),
//!   replace it with `Discard` in place, duplicate it, cover it with a
//!   cookie banner (which takes the taps there), rename its identifier,
//!   or reset.
//!
//! Deterministic: the same state lays out the same elements; only the
//! moving button depends on the clock.

use std::time::Duration;

use crate::model::{
    AppState, ButtonAction, ChangeOp, Element, Field, HEIGHT, Kind, Screen, WIDTH, anon,
};

/// Rows of the table.
pub(crate) const ROWS: usize = 1000;
/// Height of one table row.
pub(crate) const ROW_HEIGHT: u32 = 60;
/// Where the table's rows start.
const TABLE_TOP: i64 = 200;
/// Paragraphs of the article.
pub(crate) const PARAGRAPHS: usize = 40;
/// Links of the article.
#[cfg(test)]
const LINKS: u32 = 70;
/// Words per paragraph.
const WORDS: usize = 75;
/// Characters per rendered line of text (16 px glyphs in 600 px).
pub(crate) const LINE_CHARS: usize = 37;
/// Height of one rendered line of text.
pub(crate) const LINE_HEIGHT: u32 = 24;
/// How long the moving button slides.
pub(crate) const MOVE_DURATION: Duration = Duration::from_millis(600);
/// Where the moving button starts and ends.
const MOVE_FROM: f64 = 1000.0;
const MOVE_TO: f64 = 600.0;

const FIRST: [&str; 20] = [
    "Ada",
    "Alan",
    "Grace",
    "Edsger",
    "Barbara",
    "Donald",
    "Frances",
    "John",
    "Margaret",
    "Dennis",
    "Radia",
    "Ken",
    "Sophie",
    "Tim",
    "Hedy",
    "Claude",
    "Katherine",
    "Niklaus",
    "Shafi",
    "Leslie",
];
const LAST: [&str; 25] = [
    "Hopper",
    "Turing",
    "Liskov",
    "Knuth",
    "Allen",
    "Backus",
    "Hamilton",
    "Ritchie",
    "Perlman",
    "Thompson",
    "Wilson",
    "Berners",
    "Lamarr",
    "Shannon",
    "Johnson",
    "Wirth",
    "Goldwasser",
    "Lamport",
    "Dijkstra",
    "Lovelace",
    "Kahn",
    "Cerf",
    "Moore",
    "Ivy",
    "Stone",
];
const LOREM: [&str; 32] = [
    "device", "screen", "agent", "element", "observe", "action", "record", "session", "evidence",
    "tree", "button", "field", "layout", "signal", "protocol", "host", "driver", "plugin", "frame",
    "pixel", "window", "render", "measure", "budget", "change", "settle", "report", "replay",
    "stable", "identity", "careful", "quiet",
];

/// The table's display names, in row order.
pub(crate) fn people() -> Vec<String> {
    (0..ROWS)
        .map(|i| {
            format!(
                "{} {}",
                FIRST[i % FIRST.len()],
                LAST[(i / FIRST.len()) % LAST.len()]
            )
        })
        .collect()
}

fn email(i: usize) -> String {
    let base = people_base(i);
    format!("{}.{i}@example.com", base.to_lowercase().replace(' ', "."))
}

fn people_base(i: usize) -> String {
    format!(
        "{} {}",
        FIRST[i % FIRST.len()],
        LAST[(i / FIRST.len()) % LAST.len()]
    )
}

fn root(id: &'static str, name: &str) -> Element {
    let mut r = crate::model::el(id, None, "application", (0, 0, WIDTH, HEIGHT), Kind::Root);
    r.name = Some(name.into());
    r
}

fn label(
    id: impl Into<std::borrow::Cow<'static, str>>,
    parent: impl Into<std::borrow::Cow<'static, str>>,
    role: &'static str,
    text: String,
    rect: (i64, i64, u32, u32),
) -> Element {
    let mut e = anon(id, parent, role, rect, Kind::Label);
    e.text = Some(text);
    e
}

fn button(
    id: impl Into<std::borrow::Cow<'static, str>>,
    parent: impl Into<std::borrow::Cow<'static, str>>,
    name: &str,
    rect: (i64, i64, u32, u32),
    action: ButtonAction,
) -> Element {
    let mut e = anon(id, parent, "button", rect, Kind::Button(action));
    e.name = Some(name.into());
    e
}

/// The table screen.
pub(crate) fn table(s: &AppState) -> Vec<Element> {
    let dy = s.scroll_y;
    let mut out = Vec::with_capacity(2 + 3 * ROWS + 4);
    out.push(root("table-app", "Mock Table"));
    let mut heading = label(
        "people-title",
        "table-app",
        "heading",
        "People".into(),
        (20, 100 - dy, 680, 60),
    );
    heading.identifier = None;
    out.push(heading);
    let mut table = anon(
        "people",
        "table-app",
        "table",
        (0, TABLE_TOP - dy, WIDTH, ROW_HEIGHT * ROWS as u32),
        Kind::Root,
    );
    table.name = Some("People".into());
    table.identifier = Some("people".into());
    out.push(table);
    for i in 0..ROWS {
        let y = TABLE_TOP + i64::from(ROW_HEIGHT) * i as i64 - dy;
        let id = format!("r{i}");
        let mut row = anon(
            id.clone(),
            "people",
            "row",
            (0, y, WIDTH, ROW_HEIGHT),
            Kind::Root,
        );
        row.name = Some(format!("Person {i:04}"));
        out.push(row);
        out.push(label(
            format!("r{i}t"),
            id.clone(),
            "staticText",
            format!("{}, {}", s.people[i], email(i)),
            (20, y + 10, 560, 40),
        ));
        out.push(button(
            format!("r{i}e"),
            id,
            "Edit",
            (600, y + 5, 100, 50),
            ButtonAction::EditRow(i),
        ));
    }
    if let Some(i) = s.editing {
        let mut dialog = anon(
            "edit",
            "table-app",
            "dialog",
            (60, 400, 600, 420),
            Kind::Root,
        );
        dialog.name = Some(format!("Edit Person {i:04}"));
        out.push(dialog);
        let mut field = anon(
            "edit-name",
            "edit",
            "textField",
            (100, 480, 520, 96),
            Kind::Input(Field::EditName),
        );
        field.name = Some("Name".into());
        field.value = Some(s.edit_name.clone());
        out.push(field);
        out.push(button(
            "edit-save",
            "edit",
            "Save",
            (100, 640, 240, 100),
            ButtonAction::SaveEdit,
        ));
        out.push(button(
            "edit-cancel",
            "edit",
            "Cancel",
            (380, 640, 240, 100),
            ButtonAction::CancelEdit,
        ));
    }
    out
}

/// Deterministic words for paragraph `p`.
fn paragraph(p: usize) -> String {
    let mut seed = (p as u64)
        .wrapping_mul(6_364_136_223_846_793_005)
        .wrapping_add(1_442_695_040_888_963_407);
    let mut words = Vec::with_capacity(WORDS);
    for w in 0..WORDS {
        seed = seed
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        let word = LOREM[(seed >> 33) as usize % LOREM.len()];
        if w == 0 {
            let mut c = word.chars();
            let first: String = c
                .next()
                .map(|f| f.to_uppercase().collect())
                .unwrap_or_default();
            words.push(format!("{first}{}", c.as_str()));
        } else {
            words.push(word.to_owned());
        }
    }
    format!("{}.", words.join(" "))
}

fn lines_of(text: &str) -> u32 {
    (text.chars().count().div_ceil(LINE_CHARS)).max(1) as u32
}

/// Links after paragraph `p`: two after each of the first 30, one after
/// each of the last 10 (70 in all).
fn links_after(p: usize) -> std::ops::Range<u32> {
    let p = p as u32;
    if p < 30 {
        2 * p + 1..2 * p + 3
    } else {
        60 + (p - 30) + 1..60 + (p - 30) + 2
    }
}

/// The article screen.
pub(crate) fn article(s: &AppState) -> Vec<Element> {
    let dy = s.scroll_y;
    let mut out = vec![root("article-app", "Mock Article")];
    let mut y: i64 = 40;
    let mut h = label(
        "article-title",
        "article-app",
        "heading",
        "The Long Article".into(),
        (20, y - dy, 680, 60),
    );
    h.identifier = Some("article-title".into());
    out.push(h);
    y += 80;
    for p in 0..PARAGRAPHS {
        let text = paragraph(p);
        let height = lines_of(&text) * LINE_HEIGHT + 8;
        out.push(label(
            format!("p{p}"),
            "article-app",
            "staticText",
            text,
            (20, y - dy, 600, height),
        ));
        y += i64::from(height) + 8;
        for n in links_after(p) {
            let mut link = anon(
                format!("l{n}"),
                "article-app",
                "link",
                (20, y - dy, 400, 40),
                Kind::Link(n),
            );
            link.name = Some(format!("Reference {n}"));
            link.value = Some(format!("mock://ref/{n}"));
            out.push(link);
            y += 48;
        }
        y += 16;
    }
    out
}

/// The height of the current screen's content.
pub(crate) fn content_height(s: &AppState) -> i64 {
    match s.screen {
        Screen::Table => TABLE_TOP + i64::from(ROW_HEIGHT) * ROWS as i64 + 40,
        Screen::Article => {
            let unscrolled = AppState {
                scroll_y: 0,
                ..s.clone()
            };
            article(&unscrolled)
                .iter()
                .map(|e| e.rect.1 + i64::from(e.rect.3))
                .max()
                .unwrap_or(0)
                + 40
        }
        _ => i64::from(HEIGHT),
    }
}

/// The page of reference `n`.
pub(crate) fn reference(n: u32) -> Vec<Element> {
    let mut h = label(
        "ref-title",
        "ref-app",
        "heading",
        format!("Reference {n}"),
        (20, 100, 680, 60),
    );
    h.identifier = Some("ref-title".into());
    vec![
        root("ref-app", "Mock Reference"),
        h,
        label(
            "ref-body",
            "ref-app",
            "staticText",
            format!("This is reference {n} of the long article."),
            (20, 200, 680, 60),
        ),
        button(
            "ref-back",
            "ref-app",
            "Back",
            (20, 1100, 300, 100),
            ButtonAction::BackToArticle,
        ),
    ]
}

/// The moving button's y now.
pub(crate) fn moving_y(s: &AppState) -> f64 {
    let t = s.entered_at.elapsed().as_secs_f64() / MOVE_DURATION.as_secs_f64();
    MOVE_FROM + (MOVE_TO - MOVE_FROM) * t.clamp(0.0, 1.0)
}

/// The moving screen.
pub(crate) fn moving(s: &AppState) -> Vec<Element> {
    let y = moving_y(s).round() as i64;
    let mut out = vec![
        root("moving-app", "Mock Moving"),
        label(
            "moving-title",
            "moving-app",
            "heading",
            "Almost there".into(),
            (20, 100, 680, 60),
        ),
        label(
            "moving-status",
            "moving-app",
            "staticText",
            s.status.clone(),
            (20, 200, 680, 60),
        ),
        button(
            "continue",
            "moving-app",
            "Continue",
            (60, y, 600, 100),
            ButtonAction::Continue,
        ),
    ];
    if !s.animating() {
        out.push(button(
            "cancel",
            "moving-app",
            "Cancel",
            (60, MOVE_FROM as i64, 600, 100),
            ButtonAction::Cancel,
        ));
    }
    out
}

/// The changes screen.
pub(crate) fn changes(s: &AppState) -> Vec<Element> {
    let c = s.changes;
    let mut out = vec![
        root("changes-app", "Mock Changes"),
        label(
            "changes-status",
            "changes-app",
            "staticText",
            s.status.clone(),
            (20, 100, 680, 60),
        ),
    ];
    let mut y = 300;
    if c.banner {
        out.push(label(
            "banner",
            "changes-app",
            "staticText",
            "New: a banner pushed everything down".into(),
            (20, y, 680, 100),
        ));
        y += 120;
    }
    if !c.save_removed {
        if c.save_replaced {
            out.push(button(
                "discard",
                "changes-app",
                "Discard",
                (60, y, 600, 100),
                ButtonAction::Press("Discarded"),
            ));
        } else if c.save_renamed {
            // A developer id appears (and the element's id changes).
            let mut save = button(
                "store-action",
                "changes-app",
                "Save",
                (60, y, 600, 100),
                ButtonAction::Press("Saved"),
            );
            save.identifier = Some("store-action".into());
            out.push(save);
        } else {
            out.push(button(
                "save",
                "changes-app",
                "Save",
                (60, y, 600, 100),
                ButtonAction::Press("Saved"),
            ));
        }
    }
    out.push(button(
        "delete",
        "changes-app",
        "Delete",
        (60, y + 150, 600, 100),
        ButtonAction::Press("Deleted"),
    ));
    if c.save_duplicated {
        out.push(button(
            "save-2",
            "changes-app",
            "Save",
            (60, y + 300, 600, 100),
            ButtonAction::Press("Saved twice"),
        ));
    }
    let controls = [
        ("remove-save", "Remove Save", ChangeOp::RemoveSave),
        ("insert-banner", "Insert banner", ChangeOp::InsertBanner),
        ("replace-save", "Replace Save", ChangeOp::ReplaceSave),
        ("duplicate-save", "Duplicate Save", ChangeOp::DuplicateSave),
        ("reset", "Reset", ChangeOp::Reset),
        ("cover-save", "Cover Save", ChangeOp::CoverSave),
        ("rename-save", "Rename Save", ChangeOp::RenameSave),
    ];
    for (k, (id, name, op)) in controls.into_iter().enumerate() {
        let x = if k % 2 == 0 { 20 } else { 370 };
        let y = 880 + 120 * (k as i64 / 2);
        // The last row is a thin one: the screen ends at 1280.
        let h = if k >= 6 { 40 } else { 100 };
        out.push(button(
            id,
            "changes-app",
            name,
            (x, y, 330, h),
            ButtonAction::Change(op),
        ));
    }
    if c.save_covered {
        // Drawn last: on top of Save.
        out.push(button(
            "cookie-banner",
            "changes-app",
            "Accept cookies",
            (0, 280, 720, 160),
            ButtonAction::Press("Cookies accepted"),
        ));
    }
    out
}

/// What a button of these screens does.
pub(crate) fn press(s: &mut AppState, action: ButtonAction) {
    match action {
        ButtonAction::EditRow(i) if s.screen == Screen::Table => {
            s.editing = Some(i);
            s.edit_name = s.people[i].clone();
            s.focus = None;
            s.touch();
        }
        ButtonAction::SaveEdit => {
            if let Some(i) = s.editing.take() {
                s.people[i] = s.edit_name.trim().to_owned();
                s.focus = None;
                s.touch();
            }
        }
        ButtonAction::CancelEdit => {
            s.editing = None;
            s.focus = None;
            s.touch();
        }
        ButtonAction::BackToArticle => {
            let scroll = s.article_scroll;
            s.navigate(Screen::Article);
            s.scroll_y = scroll;
        }
        ButtonAction::Continue => {
            s.status = "Done".into();
            s.touch();
        }
        ButtonAction::Cancel => {
            s.status = "Cancelled".into();
            s.touch();
        }
        ButtonAction::Press(status) => {
            s.status = status.into();
            s.touch();
        }
        ButtonAction::Change(op) => {
            let c = &mut s.changes;
            match op {
                ChangeOp::RemoveSave => c.save_removed = true,
                ChangeOp::InsertBanner => c.banner = true,
                ChangeOp::ReplaceSave => c.save_replaced = true,
                ChangeOp::DuplicateSave => c.save_duplicated = true,
                ChangeOp::CoverSave => c.save_covered = true,
                ChangeOp::RenameSave => c.save_renamed = true,
                ChangeOp::Reset => {
                    *c = Default::default();
                    s.status = "Nothing pressed".into();
                }
            }
            s.touch();
        }
        ButtonAction::SignIn
        | ButtonAction::Help
        | ButtonAction::SignOut
        | ButtonAction::EditRow(_) => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use devicerail_host_plugin_api::protocol::{BoundedVec, UiSnapshot};

    fn snapshot(s: &AppState) -> UiSnapshot {
        let t = s.ui_tree();
        UiSnapshot {
            format_version: devicerail_host_plugin_api::protocol::Bounded::MIN,
            observation_id: devicerail_host_plugin_api::protocol::ObservationId::new_v4(),
            context: t.context,
            root_stable_node_ids: BoundedVec::new(t.root_stable_node_ids).expect("roots"),
            nodes: BoundedVec::new(t.nodes).expect("nodes"),
        }
    }

    #[test]
    fn the_table_fits_the_protocol_bounds_and_edits_one_row() {
        let mut s = AppState::default();
        assert!(s.launch("table"));
        let snap = snapshot(&s);
        let bytes = snap.encode().expect("a valid snapshot within bounds");
        assert!(snap.nodes.len() > 3000, "{}", snap.nodes.len());
        assert!(bytes.len() < 740_000, "{} bytes", bytes.len());
        let edit = snap.node("r500e").expect("row 500's Edit");
        assert!(edit.identifier.is_none());
        // Edit row 500 (scrolled into view first).
        assert!(s.scroll_into_view("r500e"));
        let e = s
            .elements()
            .into_iter()
            .find(|e| e.id == "r500e")
            .expect("edit");
        let (x, y) = crate::model::rect_of(&e).center();
        assert_eq!(s.tap(x, y), "r500e");
        assert_eq!(s.editing, Some(500));
        s.edit_name = "Ada Lovelace".into();
        s.tap(200.0, 680.0);
        assert_eq!(s.editing, None);
        assert_eq!(s.people[500], "Ada Lovelace");
        assert_eq!(s.people[499], people()[499]);
    }

    #[test]
    fn the_article_has_70_links_and_3000_words() {
        let mut s = AppState::default();
        s.launch("article");
        let els = s.elements();
        let links: Vec<_> = els.iter().filter(|e| e.role == "link").collect();
        assert_eq!(links.len(), LINKS as usize);
        assert_eq!(links[56].name.as_deref(), Some("Reference 57"));
        assert_eq!(links[56].value.as_deref(), Some("mock://ref/57"));
        let words: usize = els
            .iter()
            .filter(|e| e.role == "staticText")
            .map(|e| e.text.as_deref().unwrap_or("").split_whitespace().count())
            .sum();
        assert_eq!(words, 3000);
        assert!(s.scroll_into_view("l57"));
        let l = s
            .elements()
            .into_iter()
            .find(|e| e.id == "l57")
            .expect("link");
        let (x, y) = crate::model::rect_of(&l).center();
        s.tap(x, y);
        assert_eq!(s.screen, Screen::Reference(57));
    }

    #[test]
    fn the_changes_screen_moves_replaces_and_duplicates_save() {
        let mut s = AppState::default();
        s.launch("changes");
        let save_y = |s: &AppState| {
            s.elements()
                .iter()
                .find(|e| e.id == "save")
                .map(|e| e.rect.1)
        };
        assert_eq!(save_y(&s), Some(300));
        press(&mut s, ButtonAction::Change(ChangeOp::InsertBanner));
        assert_eq!(save_y(&s), Some(420));
        press(&mut s, ButtonAction::Change(ChangeOp::ReplaceSave));
        assert_eq!(save_y(&s), None);
        assert_eq!(s.tap(100.0, 450.0), "discard");
        assert_eq!(s.status, "Discarded");
        press(&mut s, ButtonAction::Change(ChangeOp::Reset));
        assert_eq!(
            (save_y(&s), s.status.as_str()),
            (Some(300), "Nothing pressed")
        );
    }

    #[test]
    fn the_moving_button_starts_low_and_animates() {
        let mut s = AppState::default();
        s.launch("moving");
        assert!(s.animating());
        assert!(moving_y(&s) > 900.0);
        assert!(!s.elements().iter().any(|e| e.id == "cancel"));
    }
}
