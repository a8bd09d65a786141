//! `ferrule-bench`: runs the benchmark workloads against Ferrule and its peers.

mod ceiling;
mod check;
mod compare;
mod frameworks;
mod fuzz;
mod generate;
mod interrupt;
mod matrix;
mod plain_json;
mod probe;
mod procfs;
mod report;
mod runner;
mod serve;
mod stats;
mod stream;
mod workload;

use runner::RunOptions;

#[global_allocator]
static ALLOCATOR: ferrule_core::Allocator = ferrule_core::Allocator;
use std::path::{Path, PathBuf};
use std::time::Duration;

const USAGE: &str = "usage: ferrule-bench <command> [options]

commands:
  workloads                          list the workloads and check their payload sizes
  frameworks                         list the frameworks and their versions
  doctor                             check that every tool the harness needs is present
  generate <framework> --out FILE    write the generated server source of a framework
  serve <framework> --port N         run a built-in server (ferrule-rust, axum, ceiling)
  run --framework F --workload W     measure one framework × workload, print JSON
  matrix --out DIR                   measure every framework × workload, write results and report
  report <results.json> --out DIR    render report.md and report.html from a results file
  check [--budgets FILE] [--out DIR] measure what the budgets need (3 rounds unless --repeat),
                                     print each budget's verdict; exit 1 when one is missed
  compare <a.json> <b.json>          compare repeated runs (Welch's t-test, Cohen's d); either
                                     side may be several files joined by commas, pooled
  stream-client <workload> --port N --duration SECS
                                     the stream load client (WebSocket echo, SSE): run one
                                     stream workload against 127.0.0.1:N, print JSON
  probe [--out DIR]                  the reliability probes against each binding's server
  fuzz --fuzzer PATH --out DIR       the libFuzzer targets of core/fuzz, from the fixture cases

options:
  --fixtures DIR        fixture corpus (default: $FERRULE_FIXTURES_DIR or the source tree)
  --oha PATH            load generator (default: $FERRULE_OHA, else `oha` on PATH)
  --frameworks a,b      matrix frameworks (default: all)
  --workloads a,b       matrix workloads (default: all, the stream workloads — ws-echo-small,
                        ws-echo-1k, ws-echo-64k, ws-broadcast-1000, ws-connect, sse-50,
                        sse-1000 — included)
  --profile NAME        quick (default: 2 s per run, 0.5 s warm-up; the whole matrix in well
                        under 15 minutes on 2 cores), careful (10 s, 2 s warm-up, 3 repeats),
                        smoke (1 s, 0.2 s warm-up)
  --duration SECS       measured seconds per run (overrides the profile)
  --warmup SECS         warm-up seconds per run (overrides the profile)
  --connections N       concurrent connections (default 50)
  --repeat N            rounds over the matrix: runs per framework × workload (overrides the profile)
  --probes a,b          probe: which probes (default: malformed,h2spec,idle-flood,slow-clients)
  --h2spec PATH         probe: the h2spec binary (default: $FERRULE_H2SPEC, else `h2spec` on PATH)
  --minutes N | --runs N
                        fuzz: minutes per target (default 1), or N inputs per target with a
                        fixed seed
  --targets a,b         fuzz: which targets (default: all the fuzzer lists)
  --corpus DIR          fuzz: where each target's grown corpus and the execution totals live
                        (default: DIR/corpus of --out)
  --jobs N              fuzz: targets run at a time (default 2)
  --budgets FILE        check: the budgets; report, matrix: the budgets the report judges (default:
                        $FERRULE_BENCH_BUDGETS, else bench/budgets.json)
  --strict              exit 1 if Ferrule fails a request, any framework cannot be measured, or a
                        probe fails";

pub struct Args {
    positional: Vec<String>,
    options: std::collections::HashMap<String, String>,
    flags: Vec<String>,
}

impl Args {
    fn parse() -> Result<Args, String> {
        let mut positional = Vec::new();
        let mut options = std::collections::HashMap::new();
        let mut flags = Vec::new();
        let mut it = std::env::args().skip(1);
        while let Some(arg) = it.next() {
            match arg.strip_prefix("--") {
                Some("strict") => flags.push("strict".to_owned()),
                Some(name) => {
                    let value = it.next().ok_or_else(|| format!("--{name} needs a value"))?;
                    options.insert(name.to_owned(), value);
                }
                None => positional.push(arg),
            }
        }
        Ok(Args { positional, options, flags })
    }

    pub fn get(&self, name: &str) -> Option<&str> {
        self.options.get(name).map(String::as_str)
    }

    pub fn flag(&self, name: &str) -> bool {
        self.flags.iter().any(|f| f == name)
    }

    pub fn number(&self, name: &str, default: u64) -> Result<u64, String> {
        self.get(name).map_or(Ok(default), |v| v.parse().map_err(|_| format!("--{name} must be a whole number, got {v:?}")))
    }

    fn seconds(&self, name: &str, default: f64) -> Result<Duration, String> {
        let secs = self.get(name).map_or(Ok(default), |v| v.parse::<f64>().map_err(|_| format!("--{name} must be seconds, got {v:?}")))?;
        if !(0.0..=3600.0).contains(&secs) {
            return Err(format!("--{name} must be between 0 and 3600 seconds"));
        }
        Ok(Duration::from_secs_f64(secs))
    }
}

/// (duration, warm-up, repeats) of a profile.
fn profile(name: &str) -> Result<(f64, f64, u64), String> {
    match name {
        "quick" => Ok((2.0, 0.5, 1)),
        "careful" => Ok((10.0, 2.0, 3)),
        "smoke" => Ok((1.0, 0.2, 1)),
        other => Err(format!("unknown profile `{other}` (quick, careful, smoke)")),
    }
}

fn main() {
    if let Err(message) = Args::parse().and_then(|args| dispatch(&args)) {
        eprintln!("ferrule-bench: {message}");
        std::process::exit(1);
    }
}

fn dispatch(args: &Args) -> Result<(), String> {
    let fixtures = args.get("fixtures").map(PathBuf::from).unwrap_or_else(workload::default_fixtures_dir);
    let command = args.positional.first().map(String::as_str).unwrap_or("help");
    match command {
        "workloads" => {
            for w in workload::load(&fixtures)? {
                let size = w.body(&fixtures)?.len();
                println!("{:<24} {:>7} B  {}{}", w.name, size, w.description, if w.reference { " [reference]" } else { "" });
            }
            for w in stream::ALL {
                println!("{:<24} {:>9}  {} [stream]", w.name, "", w.description);
            }
            Ok(())
        }
        "frameworks" => {
            for f in frameworks::ALL {
                println!("{:<22} {:<7} {}", f.name, f.language, f.versions().join(", "));
            }
            Ok(())
        }
        "doctor" => doctor(args),
        "generate" => {
            let framework = args.positional.get(1).ok_or("generate needs a framework name")?;
            let out = PathBuf::from(args.get("out").ok_or("generate needs --out FILE")?);
            let source = generate::generate(framework, &workload::load(&fixtures)?)?;
            std::fs::write(&out, source).map_err(|e| format!("{}: {e}", out.display()))
        }
        "serve" => {
            let framework = args.positional.get(1).ok_or("serve needs a framework name")?;
            let port: u16 = args.get("port").ok_or("serve needs --port")?.parse().map_err(|_| "--port must be a port number")?;
            serve::serve(framework, port, &workload::load(&fixtures)?)
        }
        "run" => {
            let framework = frameworks::find(args.get("framework").ok_or("run needs --framework")?)?;
            let name = args.get("workload").ok_or("run needs --workload")?;
            let workloads = workload::load(&fixtures)?;
            let w = workloads.iter().find(|w| w.name == name).ok_or_else(|| format!("unknown workload {name}"))?;
            let options = run_options(args)?;
            let mut server = runner::Server::start(framework.name, &framework.command(&fixtures)?, &options)?;
            let result = server.measure(w, &w.body(&fixtures)?, &options)?;
            println!("{}", serde_json::to_string_pretty(&result).map_err(|e| e.to_string())?);
            Ok(())
        }
        "matrix" => matrix::run(args, &fixtures, run_options(args)?),
        "check" => check::run(args, &fixtures, run_options(args)?),
        "probe" => probe::run(args, &fixtures, run_options(args)?),
        "fuzz" => fuzz::run(args, &fixtures),
        "report" => {
            let input = args.positional.get(1).ok_or("report needs a results file")?;
            let out = PathBuf::from(args.get("out").ok_or("report needs --out DIR")?);
            let set: report::ResultSet = read_json(Path::new(input))?;
            let budgets = args.get("budgets").map(PathBuf::from).unwrap_or_else(check::budgets::default_path);
            report::write(&set, &fixtures, &budgets, &out)
        }
        "compare" => compare(args),
        "stream-client" => {
            let workload = stream::find(args.positional.get(1).ok_or("stream-client needs a stream workload")?)?;
            let port: u16 = args.get("port").ok_or("stream-client needs --port")?.parse().map_err(|_| "--port must be a port number")?;
            let report = stream::client::run(port, workload, args.seconds("duration", 2.0)?)?;
            println!("{}", serde_json::to_string(&report).map_err(|e| e.to_string())?);
            Ok(())
        }
        "help" | "--help" | "-h" => {
            println!("{USAGE}");
            Ok(())
        }
        other => Err(format!("unknown command `{other}`\n{USAGE}")),
    }
}

pub fn oha_path(args: &Args) -> PathBuf {
    args.get("oha").map(PathBuf::from).or_else(|| std::env::var_os("FERRULE_OHA").map(PathBuf::from)).unwrap_or_else(|| PathBuf::from("oha"))
}

fn run_options(args: &Args) -> Result<RunOptions, String> {
    let (duration, warmup, _) = profile(args.get("profile").unwrap_or("quick"))?;
    Ok(RunOptions {
        oha: oha_path(args),
        duration: args.seconds("duration", duration)?,
        warmup: args.seconds("warmup", warmup)?,
        connections: args.number("connections", 50)? as u32,
        server_core: 0,
        client_core: 1,
    })
}

pub fn repeats(args: &Args) -> Result<u64, String> {
    let (_, _, repeat) = profile(args.get("profile").unwrap_or("quick"))?;
    Ok(args.number("repeat", repeat)?.max(1))
}

pub fn tool_version(program: &Path, arg: &str) -> Option<String> {
    let out = std::process::Command::new(program).arg(arg).output().ok()?;
    out.status.success().then(|| String::from_utf8_lossy(&out.stdout).trim().to_owned())
}

fn doctor(args: &Args) -> Result<(), String> {
    let mut missing = Vec::new();
    let oha = oha_path(args);
    match tool_version(&oha, "--version") {
        Some(v) => println!("ok   oha: {v}"),
        None => missing.push(format!("oha not found at {} — build it with `bazel build //third_party/oha` or pass --oha", oha.display())),
    }
    for (tool, arg, package) in [("taskset", "--version", "util-linux"), ("getconf", "CLK_TCK", "libc-bin")] {
        match tool_version(Path::new(tool), arg) {
            Some(v) => println!("ok   {tool}: {v}"),
            None => missing.push(format!("{tool} not found — install Debian's {package}")),
        }
    }
    let cores = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1);
    if cores < 2 {
        missing.push(format!("{cores} core available; the harness pins server and load generator to two different cores"));
    } else {
        println!("ok   cores: {cores}");
    }
    for name in ["FERRULE_BENCH_APPS", "FERRULE_BENCH_PYTHON", "FERRULE_BENCH_NODE", "FERRULE_BENCH_RUBY"] {
        match std::env::var_os(name) {
            Some(v) => println!("ok   {name}: {}", v.to_string_lossy()),
            None => missing.push(format!("{name} is not set — run through `bazel run //bench:all`")),
        }
    }
    if missing.is_empty() {
        Ok(())
    } else {
        Err(missing.join("\n"))
    }
}

pub fn read_json<T: serde::de::DeserializeOwned>(path: &Path) -> Result<T, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    serde_json::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))
}

fn compare(args: &Args) -> Result<(), String> {
    let (Some(a), Some(b)) = (args.positional.get(1), args.positional.get(2)) else {
        return Err("compare needs two results files (or two comma-separated lists of them)".into());
    };
    print!("{}", compare::table(&compare::read_side(a)?, &compare::read_side(b)?));
    Ok(())
}
