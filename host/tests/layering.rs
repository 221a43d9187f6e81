//! The host's request layer has one direction: transports → dispatch →
//! handlers → state; no module imports one above it, and no group of
//! modules imports each other in a loop. The SDK and every driver crate
//! are free of import loops too. Read from the sources, so a new `use` that breaks the
//! shape fails here.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Module name (path under `src/`, without `.rs` or `/mod.rs`) → source.
fn modules(src: &Path) -> BTreeMap<String, String> {
    fn walk(dir: &Path, root: &Path, out: &mut BTreeMap<String, String>) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        for e in entries.flatten() {
            let path = e.path();
            if path.is_dir() {
                walk(&path, root, out);
            } else if path.extension().is_some_and(|x| x == "rs") {
                let rel = path
                    .strip_prefix(root)
                    .unwrap_or(&path)
                    .to_string_lossy()
                    .replace('\\', "/");
                let name = rel
                    .trim_end_matches(".rs")
                    .trim_end_matches("/mod")
                    .to_owned();
                let text = std::fs::read_to_string(&path).unwrap_or_default();
                // Tests beside the code may reach anywhere.
                let text = match text.find("#[cfg(test)]") {
                    Some(i) => text[..i].to_owned(),
                    None => text,
                };
                out.insert(name, text);
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(src, src, &mut out);
    out
}

/// The modules `name`'s source refers to through `crate::` or `super::`.
fn references(name: &str, text: &str, all: &BTreeMap<String, String>) -> BTreeSet<String> {
    // Doc links and comments name modules without depending on them.
    let code: Vec<&str> = text
        .lines()
        .filter(|l| !l.trim_start().starts_with("//"))
        .collect();
    let text = code.join("\n");
    let text = text.as_str();
    let resolve = |segments: &[&str]| -> Option<String> {
        // The longest prefix that names a module.
        (1..=segments.len())
            .rev()
            .map(|n| segments[..n].join("/"))
            .find(|m| all.contains_key(m))
    };
    let mut out = BTreeSet::new();
    let is_dir_module = |n: &str| all.keys().any(|k| k.starts_with(&format!("{n}/")));
    let parent = name.rsplit_once('/').map(|(p, _)| p.to_owned());
    for (prefix, base) in [("crate::", None), ("super::", parent.clone())] {
        if prefix == "super::" && (base.is_none() || is_dir_module(name)) {
            continue;
        }
        for (i, _) in text.match_indices(prefix) {
            let rest = &text[i + prefix.len()..];
            let path: String = rest
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_' || *c == ':')
                .collect();
            let mut segments: Vec<&str> = path.split("::").filter(|s| !s.is_empty()).collect();
            if let Some(b) = &base {
                let mut full: Vec<&str> = b.split('/').collect();
                full.append(&mut segments);
                segments = full;
            }
            // `use crate::x::{a, b}`: the braces name items of x, or its
            // submodules.
            if let Some(m) = resolve(&segments) {
                out.insert(m.clone());
                if rest[path.len()..].starts_with('{') {
                    let group: String = rest[path.len() + 1..]
                        .chars()
                        .take_while(|c| *c != '}')
                        .collect();
                    for item in group.split(',') {
                        let first = item.trim().split("::").next().unwrap_or_default();
                        let sub = format!("{m}/{first}");
                        if all.contains_key(&sub) {
                            out.insert(sub);
                        }
                    }
                }
            }
        }
    }
    out.remove(name);
    // A module and its own parent or children are one unit.
    out.retain(|m| !(m.starts_with(&format!("{name}/")) || name.starts_with(&format!("{m}/"))));
    out
}

/// Groups of modules that import each other in a loop.
fn loops(graph: &BTreeMap<String, BTreeSet<String>>) -> Vec<Vec<String>> {
    // Tarjan's strongly connected components.
    struct T<'a> {
        graph: &'a BTreeMap<String, BTreeSet<String>>,
        index: BTreeMap<&'a str, usize>,
        low: BTreeMap<&'a str, usize>,
        stack: Vec<&'a str>,
        on: BTreeSet<&'a str>,
        next: usize,
        out: Vec<Vec<String>>,
    }
    impl<'a> T<'a> {
        fn visit(&mut self, v: &'a str) {
            self.index.insert(v, self.next);
            self.low.insert(v, self.next);
            self.next += 1;
            self.stack.push(v);
            self.on.insert(v);
            for w in self.graph.get(v).into_iter().flatten() {
                let w = w.as_str();
                if !self.graph.contains_key(w) {
                    continue;
                }
                if !self.index.contains_key(w) {
                    self.visit(w);
                    let lw = self.low[w];
                    let lv = self.low[v];
                    self.low.insert(v, lv.min(lw));
                } else if self.on.contains(w) {
                    let iw = self.index[w];
                    let lv = self.low[v];
                    self.low.insert(v, lv.min(iw));
                }
            }
            if self.low[v] == self.index[v] {
                let mut scc = Vec::new();
                while let Some(w) = self.stack.pop() {
                    self.on.remove(w);
                    scc.push(w.to_owned());
                    if w == v {
                        break;
                    }
                }
                if scc.len() > 1 {
                    scc.sort();
                    self.out.push(scc);
                }
            }
        }
    }
    let mut t = T {
        graph,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on: BTreeSet::new(),
        next: 0,
        out: Vec::new(),
    };
    for v in graph.keys() {
        if !t.index.contains_key(v.as_str()) {
            t.visit(v);
        }
    }
    t.out
}

fn graph_of(src: &Path) -> BTreeMap<String, BTreeSet<String>> {
    let all = modules(src);
    all.iter()
        .map(|(name, text)| (name.clone(), references(name, text, &all)))
        .collect()
}

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("workspace root")
        .to_path_buf()
}

/// The host's layers, lowest first.
fn layer(module: &str) -> usize {
    match module.split('/').next().unwrap_or_default() {
        "handlers" => 1,
        "dispatch" => 2,
        "transport" => 3,
        "serve" | "commands" | "attach" | "in_process" | "mcp" => 4,
        "lib" | "main" => 5,
        _ => 0,
    }
}

#[test]
fn the_host_imports_only_downward_and_without_loops() {
    let graph = graph_of(&workspace().join("host/src"));
    assert!(graph.len() > 20, "found only {} modules", graph.len());
    let mut upward = Vec::new();
    for (from, tos) in &graph {
        for to in tos {
            if layer(to) > layer(from) {
                upward.push(format!(
                    "{from} (layer {}) imports {to} (layer {})",
                    layer(from),
                    layer(to)
                ));
            }
        }
    }
    let loops = loops(&graph);
    println!(
        "layering: host: {} modules, {} imports, {} upward, {} loops",
        graph.len(),
        graph.values().map(BTreeSet::len).sum::<usize>(),
        upward.len(),
        loops.len()
    );
    assert!(
        upward.is_empty(),
        "imports against the layers:\n{}",
        upward.join("\n")
    );
    assert!(loops.is_empty(), "import loops: {loops:?}");
}

#[test]
fn no_crate_has_an_import_loop() {
    let root = workspace();
    // (The protocol crate's DTO modules refer to each other's types, as a
    // schema does; it has no behaviour to layer.)
    let mut crates = vec![
        "schema/src",
        "plugin-api/src",
        "plugin-api/testing/src",
        "plugins/mock/src",
        "plugins/browser/src",
        "plugins/android/src",
        "plugins/ios-simulator/src",
        "plugins/testing/hostile/src",
        "examples/plugin-template/src",
    ];
    crates.retain(|c| root.join(c).exists());
    let mut failed = false;
    for dir in crates {
        let graph = graph_of(&root.join(dir));
        let loops = loops(&graph);
        println!(
            "layering: {dir}: {} modules, {} loops",
            graph.len(),
            loops.len()
        );
        if !loops.is_empty() {
            eprintln!("{dir}: import loops {loops:?}");
            failed = true;
        }
    }
    assert!(!failed, "import loops found (listed above)");
}

#[test]
fn the_checker_finds_loops_and_upward_imports() {
    let mut g = BTreeMap::new();
    g.insert("a".to_owned(), BTreeSet::from(["b".to_owned()]));
    g.insert("b".to_owned(), BTreeSet::from(["a".to_owned()]));
    g.insert("c".to_owned(), BTreeSet::new());
    assert_eq!(loops(&g), vec![vec!["a".to_owned(), "b".to_owned()]]);
    assert!(layer("dispatch/device") > layer("handlers/execute"));
    let all: BTreeMap<String, String> = [("x", ""), ("y/z", ""), ("y", "")]
        .into_iter()
        .map(|(k, v)| (k.to_owned(), v.to_owned()))
        .collect();
    assert_eq!(
        references("x", "use crate::y::{z, Thing};", &all),
        BTreeSet::from(["y".to_owned(), "y/z".to_owned()])
    );
}
