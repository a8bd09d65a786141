//! The libFuzzer entry point. The target is chosen by `FERRULE_FUZZ_TARGET` and the fixture
//! corpus found at `FERRULE_FIXTURES_DIR` (`ferrule-bench fuzz` sets both); with
//! `FERRULE_FUZZ_SEEDS_OUT=<dir>` it writes the target's seed inputs there and exits;
//! `FERRULE_FUZZ_TARGET=list` prints the targets (name, tab, surface) and exits.
#![no_main]

use ferrule_fuzz::{harness, target, Harness};
use std::path::PathBuf;
use std::sync::OnceLock;

static HARNESS: OnceLock<Harness> = OnceLock::new();

fn setup() -> Result<Option<Harness>, String> {
    let name = std::env::var("FERRULE_FUZZ_TARGET").map_err(|_| "FERRULE_FUZZ_TARGET is not set".to_string())?;
    if name == "list" {
        for target in target::TARGETS {
            println!("{}\t{}", target.name, target.surface);
        }
        return Ok(None);
    }
    let target = target::find(&name)?;
    let fixtures = PathBuf::from(std::env::var_os("FERRULE_FIXTURES_DIR").ok_or("FERRULE_FIXTURES_DIR is not set")?);
    if let Some(out) = std::env::var_os("FERRULE_FUZZ_SEEDS_OUT") {
        let out = PathBuf::from(out);
        std::fs::create_dir_all(&out).map_err(|e| format!("{}: {e}", out.display()))?;
        for (name, bytes) in harness::seeds(&fixtures, target)? {
            std::fs::write(out.join(&name), bytes).map_err(|e| format!("{name}: {e}"))?;
        }
        return Ok(None);
    }
    Harness::new(&fixtures, target).map(Some)
}

libfuzzer_sys::fuzz_target!(
    init: {
        match setup() {
            Ok(Some(harness)) => {
                let _ = HARNESS.set(harness);
            }
            Ok(None) => std::process::exit(0),
            Err(e) => {
                eprintln!("ferrule-fuzz: {e}");
                std::process::exit(2);
            }
        }
    },
    |data: &[u8]| {
        HARNESS.get().expect("set up in init").run(data);
    }
);
