//! Our error table against the reference daemon's error catalog
//! (`ERROR-CATALOG.md` in `DEVICERAIL_REFERENCE_DIR`): every code we share
//! answers with the catalog's JSON-RPC code and `retryable` flag (in each
//! context the catalog names), and carries only detail keys the catalog
//! names for it.

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

use devicerail_host_protocol::ErrorCode;
use devicerail_host_protocol::errors::{ALTERNATES, DETAIL_EXTENSIONS, Origin};

/// One catalog row for one code.
#[derive(Debug, Clone)]
struct Row {
    rpc: Option<i32>,
    /// The flags the row allows (`depends` allows both).
    retryable: BTreeSet<bool>,
    /// Everything the details cell mentions: quoted keys and backticked
    /// names.
    keys: BTreeSet<String>,
}

fn reference_dir() -> Option<PathBuf> {
    std::env::var_os("DEVICERAIL_REFERENCE_DIR").map(PathBuf::from)
}

/// `` `a` ``-quoted tokens of a cell.
fn backticked(cell: &str) -> Vec<String> {
    cell.split('`')
        .enumerate()
        .filter(|(i, _)| i % 2 == 1)
        .map(|(_, t)| t.trim().to_owned())
        .collect()
}

/// Names a details cell mentions as keys: `"key":` / `"key",` / `"key"}`
/// after `{` or `,`, and backticked identifiers.
fn detail_keys(cell: &str) -> BTreeSet<String> {
    let mut keys = BTreeSet::new();
    let bytes = cell.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'"' {
            let start = i + 1;
            let Some(len) = cell[start..].find('"') else {
                break;
            };
            let word = &cell[start..start + len];
            let before = cell[..i].trim_end().chars().last();
            if matches!(before, Some('{') | Some(','))
                && word.chars().all(|c| c.is_ascii_alphanumeric())
            {
                keys.insert(word.to_owned());
            }
            i = start + len + 1;
        } else {
            i += 1;
        }
    }
    // Backticked names, bare or in an unquoted `{a,b}` list.
    for token in backticked(cell) {
        if token.starts_with('{') && !token.contains('"') {
            keys.extend(
                token
                    .split(|c: char| !c.is_ascii_alphanumeric())
                    .filter(|w| !w.is_empty())
                    .map(str::to_owned),
            );
        } else if token.chars().all(|c| c.is_ascii_alphanumeric()) {
            keys.insert(token);
        }
    }
    keys
}

fn flags(cell: &str) -> BTreeSet<bool> {
    let cell = cell.to_ascii_lowercase();
    let mut out = BTreeSet::new();
    if cell.contains("true") || cell.contains("depends") {
        out.insert(true);
    }
    if cell.contains("false") || cell.contains("depends") {
        out.insert(false);
    }
    out
}

/// Every code the catalog's tables (and its terminal paragraph) name.
fn parse(text: &str) -> BTreeMap<String, Vec<Row>> {
    let mut rows: BTreeMap<String, Vec<Row>> = BTreeMap::new();
    for line in text.lines() {
        let line = line.trim();
        if !line.starts_with('|') {
            continue;
        }
        let cells: Vec<&str> = line.trim_matches('|').split('|').map(str::trim).collect();
        if cells.len() < 5 || cells[0].starts_with("data.code") || cells[0].starts_with("---") {
            continue;
        }
        let codes: Vec<String> = backticked(cells[0])
            .into_iter()
            .filter(|c| c.chars().all(|ch| ch.is_ascii_lowercase() || ch == '_'))
            .collect();
        // Keys may also be named where the "when" cell describes a
        // variant (the event-stream forms).
        let mut keys = detail_keys(cells[3]);
        keys.extend(detail_keys(cells[4]));
        let row = Row {
            rpc: cells[1].trim().parse().ok(),
            retryable: flags(cells[2]),
            keys,
        };
        for code in codes {
            rows.entry(code).or_default().push(row.clone());
        }
    }
    // Stream terminals: "`stream_x` (`reason`, true|false, …)", wrapped
    // across lines.
    let flat = text.split_whitespace().collect::<Vec<_>>().join(" ");
    for part in flat.split("`stream_").skip(1) {
        let Some(end) = part.find('`') else { continue };
        let code = format!("stream_{}", &part[..end]);
        let rest = &part[end + 1..];
        let Some(body) = rest.strip_prefix(" (`") else {
            continue;
        };
        let Some(close) = body.find(')') else {
            continue;
        };
        let inside = &body[..close];
        let mut fields = inside.splitn(3, ", ");
        let _reason = fields.next();
        let flag = fields.next().unwrap_or_default();
        let details = fields.next().unwrap_or_default();
        rows.entry(code).or_default().push(Row {
            rpc: Some(-32013),
            retryable: flags(flag),
            keys: detail_keys(details),
        });
    }
    rows
}

fn agrees(rows: &[Row], rpc: i32, retryable: bool) -> bool {
    rows.iter()
        .any(|r| r.rpc == Some(rpc) && r.retryable.contains(&retryable))
}

#[test]
fn error_table_agrees_with_the_reference_catalog() {
    let Some(dir) = reference_dir() else {
        println!(
            "error catalog: skipped (set DEVICERAIL_REFERENCE_DIR to the published protocol reference to compare)"
        );
        return;
    };
    let text = std::fs::read_to_string(dir.join("ERROR-CATALOG.md"))
        .unwrap_or_else(|e| panic!("read ERROR-CATALOG.md in {}: {e}", dir.display()));
    let catalog = parse(&text);
    assert!(
        catalog.len() > 80,
        "the catalog parser found only {} codes",
        catalog.len()
    );
    let shared: Vec<ErrorCode> = ErrorCode::ALL
        .iter()
        .copied()
        .filter(|c| c.origin() == Origin::Reference)
        .collect();
    let mut problems = Vec::new();
    let mut agreeing = 0;
    for code in &shared {
        let Some(rows) = catalog.get(code.as_str()) else {
            problems.push(format!("{code}: marked Reference but not in the catalog"));
            continue;
        };
        let mut ok = true;
        if !agrees(rows, code.rpc_code(), code.retryable()) {
            problems.push(format!(
                "{code}: ours ({}, retryable {}) vs catalog {:?}",
                code.rpc_code(),
                code.retryable(),
                rows.iter()
                    .map(|r| (r.rpc, r.retryable.clone()))
                    .collect::<Vec<_>>()
            ));
            ok = false;
        }
        for (alt, context, rpc, retryable) in ALTERNATES.iter().filter(|a| a.0 == *code) {
            if !agrees(rows, *rpc, *retryable) {
                problems.push(format!(
                    "{alt} in {context:?}: ({rpc}, retryable {retryable}) is not a catalog row"
                ));
                ok = false;
            }
        }
        let mentioned: BTreeSet<&str> = rows
            .iter()
            .flat_map(|r| r.keys.iter().map(String::as_str))
            .collect();
        for key in code.detail_keys() {
            let extension = DETAIL_EXTENSIONS
                .iter()
                .any(|(c, k, _)| c == code && k == key);
            if !mentioned.contains(key) && !extension {
                problems.push(format!(
                    "{code}: details key {key:?} is not in the catalog ({mentioned:?})"
                ));
                ok = false;
            }
        }
        if ok {
            agreeing += 1;
        }
    }
    // Codes of our own must not shadow a catalog code.
    for code in ErrorCode::ALL
        .iter()
        .filter(|c| c.origin() != Origin::Reference)
    {
        if catalog.contains_key(code.as_str()) {
            problems.push(format!(
                "{code}: the catalog has this code; mark it Reference"
            ));
        }
    }
    println!("error catalog: {agreeing}/{} codes agree", shared.len());
    let own: Vec<&str> = ErrorCode::ALL
        .iter()
        .filter(|c| c.origin() == Origin::Own)
        .map(|c| c.as_str())
        .collect();
    println!("error catalog: codes of our own: {}", own.join(", "));
    let unused: Vec<&String> = catalog
        .keys()
        .filter(|c| ErrorCode::from_code(c).is_none())
        .collect();
    println!(
        "error catalog: {} catalog codes this host never emits (remote auth, pool health, limits it does not impose)",
        unused.len()
    );
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn the_parser_reads_cells() {
    assert_eq!(
        detail_keys(r#"`{"sessionId","inFlightActions":1}` (or `inFlightObservations`)"#),
        ["inFlightActions", "inFlightObservations", "sessionId"]
            .into_iter()
            .map(String::from)
            .collect()
    );
    assert_eq!(
        detail_keys(r#"hello: `{"reason":"emptyProtocolOffer"}`"#),
        ["reason"].into_iter().map(String::from).collect()
    );
    assert_eq!(flags("**true** (WS false)"), [false, true].into());
    assert_eq!(flags("false"), [false].into());
}
