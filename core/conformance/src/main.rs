//! `ferrule-conformance`: checks a running server against the fixture corpus.
//!
//!   ferrule-conformance list [--fixtures DIR]
//!   ferrule-conformance check --base http://127.0.0.1:PORT --category NAME [--fixtures DIR]
//!
//! Exit status 0 when every case passed, 1 when some failed, 2 on a usage or fixture error.

use std::path::PathBuf;

const USAGE: &str = "usage: ferrule-conformance list [--fixtures DIR]
       ferrule-conformance check --base http://127.0.0.1:PORT --category NAME [--fixtures DIR]";

fn main() {
    match run() {
        Ok(true) => {}
        Ok(false) => std::process::exit(1),
        Err(message) => {
            eprintln!("ferrule-conformance: {message}");
            std::process::exit(2);
        }
    }
}

fn run() -> Result<bool, String> {
    let mut args = std::env::args().skip(1);
    let command = args.next().ok_or(USAGE)?;
    let (mut base, mut category, mut fixtures) = (None, None, None);
    while let Some(flag) = args.next() {
        let value = args.next().ok_or_else(|| format!("{flag} needs a value\n{USAGE}"))?;
        match flag.as_str() {
            "--base" => base = Some(value),
            "--category" => category = Some(value),
            "--fixtures" => fixtures = Some(PathBuf::from(value)),
            other => return Err(format!("unknown option {other}\n{USAGE}")),
        }
    }
    let fixtures = fixtures.unwrap_or_else(ferrule_conformance::fixtures_dir);
    match command.as_str() {
        "list" => {
            for name in ferrule_conformance::categories(&fixtures)? {
                println!("{name}");
            }
            Ok(true)
        }
        "check" => {
            let base = base.ok_or(format!("check needs --base\n{USAGE}"))?;
            let category = category.ok_or(format!("check needs --category\n{USAGE}"))?;
            let file = ferrule_conformance::load(&fixtures, &category)?;
            let results = ferrule_conformance::check_category(base.trim_end_matches('/'), &file);
            let failures = ferrule_conformance::report(&category, &results);
            if !failures.is_empty() {
                eprintln!("{} of {} cases failed:\n{}", failures.len(), results.len(), failures.join("\n"));
            }
            Ok(failures.is_empty())
        }
        _ => Err(USAGE.to_owned()),
    }
}
