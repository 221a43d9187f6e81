//! The TypeScript package type-checks with its pinned `tsc`: every golden
//! fixture satisfies its type, every broken copy of a fixture is rejected
//! and every valid variant is accepted. Needs Node.js and npm; runs
//! `npm ci` in the package folder when its `node_modules` is missing.

mod common;

use std::collections::BTreeMap;
use std::fs;
use std::process::Output;
use std::time::Instant;

use devicerail_host_fixtures as fixtures;
use devicerail_host_schema_gen::typescript::{
    self, BROKEN, BROKEN_FILE, Case, FIXTURES_FILE, Source, TYPES_FILE, VALID,
};
use serde_json::Value;

fn text(out: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// The compiler options of the package's tsconfig.json, for a copy.
const TSCONFIG: &str = r#"{
  "compilerOptions": {
    "strict": true,
    "noEmit": true,
    "target": "es2022",
    "module": "esnext",
    "moduleResolution": "bundler",
    "types": [],
    "skipLibCheck": false
  },
  "files": ["index.d.ts", "test/broken.ts"]
}
"#;

#[test]
fn fixtures_type_check_and_broken_copies_are_rejected() {
    let started = Instant::now();
    let source = Source::current().unwrap_or_else(|e| panic!("{e}"));
    let generated = typescript::generate(&source).unwrap_or_else(|e| panic!("{e}"));
    let types = generated.files[TYPES_FILE]
        .matches("\nexport type ")
        .count();
    let dir = common::node::typescript_package();

    let manifest_fixtures = fixtures::all().unwrap_or_else(|e| panic!("{e}")).len();
    let fixtures_ts = fs::read_to_string(dir.join(FIXTURES_FILE))
        .unwrap_or_else(|e| panic!("{FIXTURES_FILE}: {e}"));
    let satisfied = fixtures_ts.matches(" satisfies ").count();
    assert_eq!(
        satisfied, manifest_fixtures,
        "{FIXTURES_FILE} must embed every manifest fixture"
    );

    // The package as committed: the declarations, every fixture, and every
    // broken copy under its `@ts-expect-error` directive.
    let run = common::node::tsc(&dir, &["-p", "tsconfig.json", "--pretty", "false"]);
    assert!(
        run.status.success(),
        "tsc rejects the package (an unused @ts-expect-error means a broken copy is accepted):\n{}",
        text(&run)
    );

    // The broken copies again without their directives: each line must
    // carry its own error, and nothing else may fail.
    let tmp = tempfile::tempdir().unwrap_or_else(|e| panic!("tempdir: {e}"));
    fs::create_dir_all(tmp.path().join("test")).unwrap_or_else(|e| panic!("mkdir: {e}"));
    fs::copy(dir.join(TYPES_FILE), tmp.path().join(TYPES_FILE))
        .unwrap_or_else(|e| panic!("copy {TYPES_FILE}: {e}"));
    let broken_ts =
        fs::read_to_string(dir.join(BROKEN_FILE)).unwrap_or_else(|e| panic!("{BROKEN_FILE}: {e}"));
    let stripped: String = broken_ts
        .lines()
        .map(|l| match l.strip_prefix("// @ts-expect-error ") {
            Some(rest) => format!("// {rest}\n"),
            None => format!("{l}\n"),
        })
        .collect();
    fs::write(tmp.path().join(BROKEN_FILE), &stripped).unwrap_or_else(|e| panic!("write: {e}"));
    fs::write(tmp.path().join("tsconfig.json"), TSCONFIG).unwrap_or_else(|e| panic!("write: {e}"));
    let run = common::node::tsc(tmp.path(), &["-p", "tsconfig.json", "--pretty", "false"]);
    let output = text(&run);

    // Line number → constant, and each constant's case.
    let mut constants: BTreeMap<usize, String> = BTreeMap::new();
    for (i, line) in stripped.lines().enumerate() {
        if let Some(rest) = line.strip_prefix("export const ") {
            let name = rest.split(' ').next().unwrap_or_default();
            constants.insert(i + 1, name.to_owned());
        }
    }
    let case_of = |name: &str| -> Option<(&'static Case, bool)> {
        let (list, broken, index) = if let Some(n) = name.strip_prefix("broken") {
            (BROKEN, true, n)
        } else {
            (VALID, false, name.strip_prefix("valid")?)
        };
        let i: usize = index.parse().ok()?;
        list.get(i.checked_sub(1)?).map(|c| (c, broken))
    };

    let mut errors: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut unexpected = Vec::new();
    let prefix = format!("{BROKEN_FILE}(");
    for line in output.lines().filter(|l| l.contains(": error TS")) {
        let line_no = line
            .strip_prefix(&prefix)
            .and_then(|rest| rest.split(',').next())
            .and_then(|n| n.parse::<usize>().ok());
        match line_no.and_then(|n| constants.get(&n)) {
            Some(name) => {
                let code = line
                    .split(": error ")
                    .nth(1)
                    .and_then(|r| r.split(':').next())
                    .unwrap_or("?");
                errors
                    .entry(name.clone())
                    .or_default()
                    .push(code.to_owned());
            }
            None => unexpected.push(line.to_owned()),
        }
    }
    assert!(
        unexpected.is_empty(),
        "tsc errors outside the edited copies:\n{}",
        unexpected.join("\n")
    );

    let mut rejected = 0;
    let mut accepted = 0;
    let mut failures = Vec::new();
    for name in constants.values() {
        let Some((case, broken)) = case_of(name) else {
            failures.push(format!("{name}: not a known case"));
            continue;
        };
        let codes = errors.get(name);
        match (broken, codes) {
            (true, Some(codes)) => {
                rejected += 1;
                println!(
                    "  rejected {name} ({}: {}): {}",
                    case.fixture,
                    case.why,
                    codes.join(", ")
                );
            }
            (true, None) => failures.push(format!(
                "{name} ({}: {}) is accepted by tsc",
                case.fixture, case.why
            )),
            (false, None) => accepted += 1,
            (false, Some(codes)) => failures.push(format!(
                "{name} ({}: {}) is rejected by tsc: {}",
                case.fixture,
                case.why,
                codes.join(", ")
            )),
        }
    }
    assert!(failures.is_empty(), "{}\n{output}", failures.join("\n"));
    assert_eq!(
        rejected,
        BROKEN.len(),
        "every broken copy is in {BROKEN_FILE}"
    );
    assert_eq!(
        accepted,
        VALID.len(),
        "every valid variant is in {BROKEN_FILE}"
    );
    println!(
        "typescript: {types} types generated, {satisfied} fixtures checked, {rejected}/{} broken fixtures rejected, {accepted}/{} valid variants accepted ({:.1} s)",
        BROKEN.len(),
        VALID.len(),
        started.elapsed().as_secs_f64()
    );
}

/// The edits are real breaks of the contract: each broken copy fails its
/// JSON Schema too (except where the types are stricter on purpose), and
/// each valid variant passes it.
#[test]
fn edited_copies_agree_with_the_json_schemas() {
    let all = fixtures::all().unwrap_or_else(|e| panic!("{e}"));
    let mut failures = Vec::new();
    let mut stricter = 0;
    for case in BROKEN.iter().chain(VALID) {
        let Some(fixture) = all.iter().find(|f| f.entry.id == case.fixture) else {
            failures.push(format!("{}: no such fixture", case.fixture));
            continue;
        };
        let mut value: Value =
            serde_json::from_str(fixture.json).unwrap_or_else(|e| panic!("{}: {e}", case.fixture));
        if let Err(e) = typescript::apply(&mut value, case.edit) {
            failures.push(format!("{}: {e}", case.fixture));
            continue;
        }
        let schema = common::project_schema(&fixture.entry.schema);
        let validator = common::validator(&schema).unwrap_or_else(|e| panic!("{e}"));
        let errors = common::errors(&validator, &value);
        if errors.is_empty() != case.schema_accepts {
            failures.push(format!(
                "{} ({}): the JSON Schema {} it",
                case.fixture,
                case.why,
                if errors.is_empty() {
                    "accepts"
                } else {
                    "rejects"
                }
            ));
        }
        if case.schema_accepts && BROKEN.iter().any(|b| std::ptr::eq(b, case)) {
            stricter += 1;
        }
    }
    println!(
        "typescript: {}/{} broken copies also fail their JSON Schema ({stricter} stricter by design: open objects typed closed), {}/{} valid variants validate",
        BROKEN.len() - stricter,
        BROKEN.len(),
        VALID.len(),
        VALID.len()
    );
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
