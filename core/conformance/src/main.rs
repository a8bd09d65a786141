//! `ferrule-conformance`: checks a running server against the fixture corpus.
//!
//!   ferrule-conformance list [--fixtures DIR]
//!   ferrule-conformance check --base http://127.0.0.1:PORT --category NAME [--fixtures DIR] [--json-type TYPE]
//!   ferrule-conformance check --via stdio --category NAME [--fixtures DIR] [--skip CASE]... [--json-type TYPE]
//!
//! `--via stdio` checks an in-process test client instead of a server: each request goes out
//! on standard output and its answer comes back on standard input ([`ferrule_conformance::stdio`]);
//! the report then goes to standard error. `--skip CASE` leaves out a case (`category/name`)
//! the client's own interface cannot express (Rack's env holds one value per header name).
//! `--json-type TYPE`: the language labels its JSON `TYPE`, where the corpus says
//! `application/json` (Node: `application/json; charset=utf-8`).
//!
//! Exit status 0 when every case passed, 1 when some failed, 2 on a usage or fixture error.

use std::path::PathBuf;

const USAGE: &str = "usage: ferrule-conformance list [--fixtures DIR]
       ferrule-conformance check --base http://127.0.0.1:PORT --category NAME [--fixtures DIR] [--json-type TYPE]
       ferrule-conformance check --via stdio --category NAME [--fixtures DIR] [--skip CASE]... [--json-type TYPE]";

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
    let (mut base, mut category, mut fixtures, mut via, mut skipped, mut json_type) = (None, None, None, None, Vec::new(), None);
    while let Some(flag) = args.next() {
        let value = args.next().ok_or_else(|| format!("{flag} needs a value\n{USAGE}"))?;
        match flag.as_str() {
            "--base" => base = Some(value),
            "--category" => category = Some(value),
            "--fixtures" => fixtures = Some(PathBuf::from(value)),
            "--via" if value == "stdio" => via = Some(value),
            "--via" => return Err(format!("--via takes `stdio`, not `{value}`\n{USAGE}")),
            "--skip" => skipped.push(value),
            "--json-type" => json_type = Some(value),
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
            let category = category.ok_or(format!("check needs --category\n{USAGE}"))?;
            let mut file = ferrule_conformance::load(&fixtures, &category)?;
            if let Some(json_type) = &json_type {
                file = file.with_json_type(json_type);
            }
            let (results, failures) = match (base, via) {
                (Some(base), None) => {
                    let results = ferrule_conformance::check_category(base.trim_end_matches('/'), &file);
                    let failures = ferrule_conformance::report(&category, &results, &mut std::io::stdout());
                    (results, failures)
                }
                (None, Some(_)) => {
                    let unknown: Vec<&String> = skipped.iter().filter(|name| !file.cases.iter().any(|case| format!("{category}/{}", case.name) == **name)).collect();
                    if !unknown.is_empty() {
                        return Err(format!("--skip names no case of {category}: {unknown:?}"));
                    }
                    let (mut input, mut output) = (std::io::stdin().lock(), std::io::stdout().lock());
                    let skip = |case: &ferrule_conformance::Case| skipped.contains(&format!("{category}/{}", case.name));
                    let results = ferrule_conformance::check_category_with(&file, skip, |request| ferrule_conformance::stdio::send(&mut input, &mut output, request));
                    let failures = ferrule_conformance::report(&category, &results, &mut std::io::stderr());
                    (results, failures)
                }
                _ => return Err(format!("check needs one of --base and --via\n{USAGE}")),
            };
            if !failures.is_empty() {
                eprintln!("{} of {} cases failed:\n{}", failures.len(), results.len(), failures.join("\n"));
            }
            Ok(failures.is_empty())
        }
        _ => Err(USAGE.to_owned()),
    }
}
