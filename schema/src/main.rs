//! `devicerail-host-schema-gen write [--check]`: regenerates `schema/v1/` from
//! the protocol types and the TypeScript package in `schema/typescript/`
//! from those schemas, or (with `--check`) only reports how they differ.

#![forbid(unsafe_code)]

use std::io;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use devicerail_host_schema_gen::typescript::{self, TYPESCRIPT_DIR, typescript_dir};
use devicerail_host_schema_gen::{Difference, SCHEMA_DIR, check, schema_dir, write};

const USAGE: &str = "usage: devicerail-host-schema-gen write [--check]

  write           regenerate schema/v1/ and the TypeScript package in
                  schema/typescript/ (writes missing and changed files,
                  removes stale *.json schemas and *.ts files, sets the
                  package version to the crate version)
  write --check   write nothing; list missing, changed and stale files and
                  exit with status 1 if there are any";

type Run = fn(&Path) -> io::Result<Vec<Difference>>;

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
    let targets: [(&str, PathBuf, Run); 2] = [
        (
            SCHEMA_DIR,
            schema_dir(),
            if check_only { check } else { write },
        ),
        (
            TYPESCRIPT_DIR,
            typescript_dir(),
            if check_only {
                typescript::check
            } else {
                typescript::write
            },
        ),
    ];
    let mut failed = false;
    for (label, dir, run) in targets {
        let differences = match run(&dir) {
            Ok(differences) => differences,
            Err(e) => {
                eprintln!("{label}: {e}");
                failed = true;
                continue;
            }
        };
        if differences.is_empty() {
            println!("{label}: up to date");
        } else if check_only {
            eprintln!(
                "{label} is out of date ({} differences); run `cargo run -p devicerail-host-schema-gen -- write`:",
                differences.len()
            );
            for difference in &differences {
                eprintln!("  {difference}");
            }
            failed = true;
        } else {
            for difference in &differences {
                println!("{label}: {difference}");
            }
            println!("{label}: {} files updated", differences.len());
        }
    }
    if failed {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}
