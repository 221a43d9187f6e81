//! `devicerail-schema-gen write [--check]`: regenerates `schema/v1/` from
//! the protocol types, or (with `--check`) only reports how it differs.

use std::process::ExitCode;

use devicerail_schema_gen::{SCHEMA_DIR, check, schema_dir, write};

const USAGE: &str = "usage: devicerail-schema-gen write [--check]

  write           regenerate schema/v1/ (writes missing and changed files,
                  removes stale *.json files)
  write --check   write nothing; list missing, changed and stale files and
                  exit with status 1 if there are any";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let check_only = match args.as_slice() {
        ["write"] => false,
        ["write", "--check"] | ["--check", "write"] => true,
        ["-h" | "--help" | "help"] => {
            println!("{USAGE}");
            return ExitCode::SUCCESS;
        }
        _ => {
            eprintln!("{USAGE}");
            return ExitCode::from(2);
        }
    };
    let dir = schema_dir();
    let result = if check_only { check(&dir) } else { write(&dir) };
    let differences = match result {
        Ok(differences) => differences,
        Err(e) => {
            eprintln!("{SCHEMA_DIR}: {e}");
            return ExitCode::FAILURE;
        }
    };
    if differences.is_empty() {
        println!("{SCHEMA_DIR}: up to date");
        return ExitCode::SUCCESS;
    }
    if check_only {
        eprintln!(
            "{SCHEMA_DIR} is out of date ({} differences); run `cargo run -p devicerail-schema-gen -- write`:",
            differences.len()
        );
        for difference in &differences {
            eprintln!("  {difference}");
        }
        ExitCode::FAILURE
    } else {
        for difference in &differences {
            println!("{SCHEMA_DIR}: {difference}");
        }
        println!("{SCHEMA_DIR}: {} files updated", differences.len());
        ExitCode::SUCCESS
    }
}
