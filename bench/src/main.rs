//! `ferrule-bench`: runs the benchmark workloads against Ferrule and its peers.

mod report;
mod runner;
mod serve;
mod stats;
mod workload;

use runner::{RunOptions, RunResult, ServerCommand};
use std::path::{Path, PathBuf};
use std::time::Instant;

const USAGE: &str = "usage: ferrule-bench <command> [options]

commands:
  workloads                          list the workloads and check their payload sizes
  doctor                             check that every tool the harness needs is present
  serve <framework> --port N         run one server under test (ferrule-rust, axum)
  run --framework F --workload W     measure one framework × workload, print JSON
  matrix --out DIR                   measure every framework × workload, write results and report
  report <results.json> --out DIR    render report.md and report.html from a results file
  compare <a.json> <b.json>          compare repeated runs (Welch's t-test, Cohen's d)

options:
  --fixtures DIR        fixture corpus (default: $FERRULE_FIXTURES_DIR or the source tree)
  --oha PATH            load generator (default: $FERRULE_OHA, else `oha` on PATH)
  --frameworks a,b      matrix frameworks (default: all)
  --workloads a,b       matrix workloads (default: all)
  --duration SECS       measured seconds per run (default 10)
  --warmup SECS         warm-up seconds per run (default 2)
  --connections N       concurrent connections (default 50)
  --repeat N            runs per framework × workload (default 1)";

const FRAMEWORKS: &[&str] = &["ferrule-rust", "axum"];

struct Args {
    positional: Vec<String>,
    options: std::collections::HashMap<String, String>,
}

impl Args {
    fn parse() -> Result<Args, String> {
        let mut positional = Vec::new();
        let mut options = std::collections::HashMap::new();
        let mut it = std::env::args().skip(1);
        while let Some(arg) = it.next() {
            match arg.strip_prefix("--") {
                Some(name) => {
                    let value = it.next().ok_or_else(|| format!("--{name} needs a value"))?;
                    options.insert(name.to_owned(), value);
                }
                None => positional.push(arg),
            }
        }
        Ok(Args { positional, options })
    }

    fn get(&self, name: &str) -> Option<&str> {
        self.options.get(name).map(String::as_str)
    }

    fn number(&self, name: &str, default: u64) -> Result<u64, String> {
        self.get(name).map_or(Ok(default), |v| v.parse().map_err(|_| format!("--{name} must be a whole number, got {v:?}")))
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
                println!("{:<24} {:>6} B  {}", w.name, size, w.description);
            }
            Ok(())
        }
        "doctor" => doctor(args),
        "serve" => {
            let framework = args.positional.get(1).ok_or("serve needs a framework name")?;
            let port: u16 = args.get("port").ok_or("serve needs --port")?.parse().map_err(|_| "--port must be a port number")?;
            serve::serve(framework, port, &workload::load(&fixtures)?)
        }
        "run" => {
            let framework = args.get("framework").ok_or("run needs --framework")?;
            let name = args.get("workload").ok_or("run needs --workload")?;
            let workloads = workload::load(&fixtures)?;
            let w = workloads.iter().find(|w| w.name == name).ok_or_else(|| format!("unknown workload {name}"))?;
            let result = runner::run(framework, &server_command(framework, &fixtures)?, w, &fixtures, &run_options(args)?)?;
            println!("{}", serde_json::to_string_pretty(&result).map_err(|e| e.to_string())?);
            Ok(())
        }
        "matrix" => matrix(args, &fixtures),
        "report" => {
            let input = args.positional.get(1).ok_or("report needs a results file")?;
            let out = PathBuf::from(args.get("out").ok_or("report needs --out DIR")?);
            let set: report::ResultSet = read_json(Path::new(input))?;
            write_report(&set, &out)
        }
        "compare" => compare(args),
        "help" | "--help" | "-h" => {
            println!("{USAGE}");
            Ok(())
        }
        other => Err(format!("unknown command `{other}`\n{USAGE}")),
    }
}

fn oha_path(args: &Args) -> PathBuf {
    args.get("oha").map(PathBuf::from).or_else(|| std::env::var_os("FERRULE_OHA").map(PathBuf::from)).unwrap_or_else(|| PathBuf::from("oha"))
}

fn run_options(args: &Args) -> Result<RunOptions, String> {
    Ok(RunOptions {
        oha: oha_path(args),
        duration_secs: args.number("duration", 10)?,
        warmup_secs: args.number("warmup", 2)?,
        connections: args.number("connections", 50)? as u32,
        server_core: 0,
        client_core: 1,
    })
}

fn server_command(framework: &str, fixtures: &Path) -> Result<ServerCommand, String> {
    if !FRAMEWORKS.contains(&framework) {
        return Err(format!("unknown framework `{framework}` (known: {})", FRAMEWORKS.join(", ")));
    }
    let me = std::env::current_exe().map_err(|e| e.to_string())?;
    Ok(ServerCommand {
        program: me,
        args: vec!["serve".into(), framework.into(), "--port".into(), "{port}".into(), "--fixtures".into(), fixtures.display().to_string()],
    })
}

fn serves(framework: &str, workload: &str) -> bool {
    framework != "axum" || serve::AXUM_WORKLOADS.contains(&workload)
}

fn tool_version(program: &Path, arg: &str) -> Option<String> {
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
    if missing.is_empty() {
        Ok(())
    } else {
        Err(missing.join("\n"))
    }
}

fn metadata(args: &Args, options: &RunOptions) -> serde_json::Value {
    let git = std::process::Command::new("git").args(["rev-parse", "HEAD"]).output().ok().filter(|o| o.status.success());
    let commit = std::env::var("FERRULE_COMMIT").ok().or_else(|| git.map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned()));
    let cpu = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|c| c.lines().find_map(|l| l.strip_prefix("model name")).map(|l| l.trim_start_matches([' ', '\t', ':']).to_owned()));
    serde_json::json!({
        "commit": commit,
        "host": format!("{} ({} cores)", cpu.unwrap_or_default(), std::thread::available_parallelism().map(|n| n.get()).unwrap_or(0)),
        "date_unix": std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0),
        "oha": tool_version(&options.oha, "--version"),
        "duration_secs": options.duration_secs,
        "warmup_secs": options.warmup_secs,
        "connections": options.connections,
        "repeat": args.number("repeat", 1).unwrap_or(1),
        "frameworks": {"ferrule-core": env!("CARGO_PKG_VERSION")},
    })
}

fn matrix(args: &Args, fixtures: &Path) -> Result<(), String> {
    let out = PathBuf::from(args.get("out").ok_or("matrix needs --out DIR")?);
    let options = run_options(args)?;
    let repeat = args.number("repeat", 1)?.max(1);
    let all = workload::load(fixtures)?;
    let chosen_workloads: Vec<_> = match args.get("workloads") {
        None | Some("all") => all.clone(),
        Some(list) => list
            .split(',')
            .map(|n| all.iter().find(|w| w.name == n).cloned().ok_or_else(|| format!("unknown workload {n}")))
            .collect::<Result<_, _>>()?,
    };
    for w in &chosen_workloads {
        w.body(fixtures)?;
    }
    let frameworks: Vec<String> = match args.get("frameworks") {
        None | Some("all") => FRAMEWORKS.iter().map(|s| s.to_string()).collect(),
        Some(list) => list.split(',').map(str::to_owned).collect(),
    };
    let plan: Vec<(String, workload::Workload)> = chosen_workloads
        .iter()
        .flat_map(|w| frameworks.iter().filter(|f| serves(f, &w.name)).map(move |f| (f.clone(), w.clone())))
        .flat_map(|pair| std::iter::repeat_n(pair, repeat as usize))
        .collect();
    let started = Instant::now();
    let mut results: Vec<RunResult> = Vec::new();
    for (i, (framework, w)) in plan.iter().enumerate() {
        let per_run = options.duration_secs + options.warmup_secs + 1;
        let left = (plan.len() - i) as u64 * per_run;
        eprintln!("[{}/{}] {framework} × {} (about {}m{:02}s left)", i + 1, plan.len(), w.name, left / 60, left % 60);
        let result = runner::run(framework, &server_command(framework, fixtures)?, w, fixtures, &options)?;
        eprintln!(
            "       {:.0} req/s, p99 {:.2} ms, {:.1} CPU-µs/req, {} failed",
            result.requests_per_sec, result.latency_p99_ms, result.server_cpu_us_per_request, result.failed_requests
        );
        results.push(result);
    }
    let set = report::ResultSet { metadata: metadata(args, &options), results };
    std::fs::create_dir_all(&out).map_err(|e| format!("{}: {e}", out.display()))?;
    let json = serde_json::to_string_pretty(&set).map_err(|e| e.to_string())?;
    std::fs::write(out.join("results.json"), json).map_err(|e| e.to_string())?;
    write_report(&set, &out)?;
    eprintln!("wrote {}/results.json, report.md, report.html in {:.0} s", out.display(), started.elapsed().as_secs_f64());
    Ok(())
}

fn write_report(set: &report::ResultSet, out: &Path) -> Result<(), String> {
    std::fs::create_dir_all(out).map_err(|e| format!("{}: {e}", out.display()))?;
    std::fs::write(out.join("report.md"), report::markdown(set)).map_err(|e| e.to_string())?;
    std::fs::write(out.join("report.html"), report::html(set)).map_err(|e| e.to_string())
}

fn read_json<T: serde::de::DeserializeOwned>(path: &Path) -> Result<T, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    serde_json::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))
}

fn compare(args: &Args) -> Result<(), String> {
    let (Some(a), Some(b)) = (args.positional.get(1), args.positional.get(2)) else {
        return Err("compare needs two results files".into());
    };
    let a: report::ResultSet = read_json(Path::new(a))?;
    let b: report::ResultSet = read_json(Path::new(b))?;
    println!("| framework | workload | CPU-µs/req A | CPU-µs/req B | B/A | t | d | significant |");
    println!("|---|---|---:|---:|---:|---:|---:|---|");
    let mut keys: Vec<(String, String)> = a.results.iter().map(|r| (r.framework.clone(), r.workload.clone())).collect();
    keys.dedup();
    for (framework, workload) in keys {
        let samples = |set: &report::ResultSet| -> Vec<f64> {
            set.results.iter().filter(|r| r.framework == framework && r.workload == workload).map(|r| r.server_cpu_us_per_request).collect()
        };
        match stats::welch(&samples(&a), &samples(&b)) {
            Some(c) => println!(
                "| {framework} | {workload} | {:.1} | {:.1} | {:.3} | {:.2} | {:.2} | {} |",
                c.mean_a,
                c.mean_b,
                c.ratio,
                c.t,
                c.cohens_d,
                if c.t.abs() > stats::critical_t95(c.degrees_of_freedom) { "yes" } else { "no" }
            ),
            None => println!("| {framework} | {workload} | – | – | – | – | – | needs ≥ 2 runs each (--repeat) |"),
        }
    }
    Ok(())
}
