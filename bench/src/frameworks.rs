//! The frameworks under test: how to start each one's server, and which version it is.
//!
//! Ferrule (Rust), plain axum and the ceiling (bare hyper, one fixed answer: `ceiling`) are
//! served by this binary itself (`serve`); every other
//! framework runs a source generated from the workloads (see `generate`), started with the
//! interpreter and package paths the wrapper script hands over in the environment:
//!
//!   FERRULE_BENCH_APPS        directory with the generated sources
//!   FERRULE_BENCH_PYTHON      the Python with the pinned peers (FastAPI, Robyn, …)
//!   FERRULE_BENCH_PYTHONPATH  where the `ferrule` wheel is installed
//!   FERRULE_BENCH_NODE        node
//!   FERRULE_BENCH_NODE_PATH   node_modules directories with `ferrule` and the pinned peers
//!   FERRULE_BENCH_RUBY        ruby (Debian's, with puma, sinatra, rack, json_schemer)
//!   FERRULE_BENCH_RUBYLIB     where the `ferrule` gem's lib/ is unpacked

use crate::generate;
use std::path::PathBuf;

pub struct Framework {
    pub name: &'static str,
    pub language: &'static str,
    /// Ferrule itself (0 failed requests required) or a peer.
    pub ferrule: bool,
    /// Packages whose versions the results record (Python distributions, npm packages).
    pub packages: &'static [&'static str],
    /// A feature whose price this server shows: another framework's server with it switched on.
    pub priced: Option<Priced>,
}

/// `base`'s server with `feature` switched on (`FERRULE_BENCH_FEATURE`, generate/features.rs),
/// measured beside `base` on the workloads that price it.
#[derive(Debug, Clone, Copy)]
pub struct Priced {
    pub base: &'static str,
    pub feature: &'static str,
}

pub const ALL: &[Framework] = &[
    Framework { name: "ferrule-rust", language: "rust", ferrule: true, packages: &[], priced: None },
    Framework { name: "axum", language: "rust", ferrule: false, packages: &[], priced: None },
    // Not a peer: what oha can drive through hyper + tokio on this machine (crate::ceiling).
    Framework { name: "ceiling", language: "rust", ferrule: false, packages: &[], priced: None },
    Framework { name: "ferrule-python-sync", language: "python", ferrule: true, packages: &["ferrule"], priced: None },
    Framework { name: "ferrule-python-async", language: "python", ferrule: true, packages: &["ferrule", "uvloop"], priced: None },
    Framework { name: "fastapi", language: "python", ferrule: false, packages: &["fastapi", "uvicorn", "pydantic", "httptools", "uvloop"], priced: None },
    Framework { name: "robyn", language: "python", ferrule: false, packages: &["robyn", "msgspec"], priced: None },
    Framework { name: "granian", language: "python", ferrule: false, packages: &["granian", "msgspec", "uvloop"], priced: None },
    Framework { name: "spikard", language: "python", ferrule: false, packages: &["spikard", "msgspec"], priced: None },
    Framework { name: "ferrule-node", language: "node", ferrule: true, packages: &["ferrule"], priced: None },
    Framework { name: "fastify", language: "node", ferrule: false, packages: &["fastify", "@fastify/formbody", "@fastify/multipart"], priced: None },
    Framework { name: "express", language: "node", ferrule: false, packages: &["express", "multer", "ajv"], priced: None },
    Framework { name: "ferrule-ruby", language: "ruby", ferrule: true, packages: &[], priced: None },
    Framework { name: "sinatra", language: "ruby", ferrule: false, packages: &["puma", "sinatra", "rack", "json_schemer"], priced: None },
    Framework { name: "rack", language: "ruby", ferrule: false, packages: &["puma", "rack", "json_schemer"], priced: None },
    priced("ferrule-python-sync+hook", "python", "ferrule-python-sync", "hook"),
    priced("ferrule-node+hook", "node", "ferrule-node", "hook"),
    priced("ferrule-ruby+hook", "ruby", "ferrule-ruby", "hook"),
    priced("ferrule-rust+metrics", "rust", "ferrule-rust", "metrics"),
    priced("ferrule-rust+allowed-hosts", "rust", "ferrule-rust", "allowed-hosts"),
];

const fn priced(name: &'static str, language: &'static str, base: &'static str, feature: &'static str) -> Framework {
    let packages: &'static [&'static str] = if matches!(language.as_bytes(), b"python" | b"node") { &["ferrule"] } else { &[] };
    Framework { name, language, ferrule: true, packages, priced: Some(Priced { base, feature }) }
}

/// The frameworks whose servers have the stream routes (`GET /ws/echo`, `GET /ws/room`,
/// `GET /sse/events`):
/// each language's Ferrule, and the peers its users would otherwise stream with.
pub const STREAMING: &[&str] = &[
    "ferrule-rust",
    "axum",
    "ferrule-python-sync",
    "ferrule-python-async",
    "fastapi",
    "robyn",
    "granian",
    "ferrule-node",
    "fastify",
    "express",
    "ferrule-ruby",
    "rack",
];

/// The framework every other's requests/s is reported as a fraction of.
pub const CEILING: &str = "ceiling";

pub fn find(name: &str) -> Result<&'static Framework, String> {
    ALL.iter().find(|f| f.name == name).ok_or_else(|| {
        format!("unknown framework `{name}` (known: {})", ALL.iter().map(|f| f.name).collect::<Vec<_>>().join(", "))
    })
}

/// How to start a server: program, arguments (`{port}` is replaced), environment, directory.
#[derive(Debug, Clone)]
pub struct ServerCommand {
    pub program: PathBuf,
    pub args: Vec<String>,
    pub env: Vec<(String, String)>,
    pub dir: Option<PathBuf>,
}

fn env_path(name: &str, framework: &str) -> Result<PathBuf, String> {
    std::env::var_os(name)
        .map(PathBuf::from)
        .ok_or_else(|| format!("{framework}: {name} is not set — run the benchmarks with `bazel run //bench:all`, which sets it"))
}

impl Framework {
    pub fn command(&self, fixtures: &std::path::Path) -> Result<ServerCommand, String> {
        if let Some(priced) = self.priced {
            let mut command = find(priced.base)?.command(fixtures)?;
            command.env.push((generate::features::ENV.to_owned(), priced.feature.to_owned()));
            return Ok(command);
        }
        if self.language == "rust" {
            let me = std::env::current_exe().map_err(|e| e.to_string())?;
            let args = ["serve", self.name, "--port", "{port}", "--fixtures"].map(str::to_owned);
            return Ok(ServerCommand {
                program: me,
                args: args.into_iter().chain([fixtures.display().to_string()]).collect(),
                env: Vec::new(),
                dir: None,
            });
        }
        let apps = env_path("FERRULE_BENCH_APPS", self.name)?;
        let file = generate::file_name(self.name).ok_or_else(|| format!("{}: no generated source", self.name))?;
        if self.language == "node" {
            let node = env_path("FERRULE_BENCH_NODE", self.name)?;
            let mut env = Vec::new();
            if let Some(path) = std::env::var_os("FERRULE_BENCH_NODE_PATH") {
                env.push(("NODE_PATH".to_owned(), path.to_string_lossy().into_owned()));
            }
            return Ok(ServerCommand { program: node, args: vec![apps.join(file).display().to_string(), "{port}".into()], env, dir: Some(apps) });
        }
        if self.language == "ruby" {
            let ruby = env_path("FERRULE_BENCH_RUBY", self.name)?;
            let mut env = Vec::new();
            if let Some(lib) = std::env::var_os("FERRULE_BENCH_RUBYLIB") {
                env.push(("RUBYLIB".to_owned(), lib.to_string_lossy().into_owned()));
            }
            let script = apps.join(file).display().to_string();
            let args = if self.name == "ferrule-ruby" {
                vec![script, "{port}".into()]
            } else {
                // Puma as Rails and Sinatra users run it: one process, its default 5 threads.
                ["-S", "puma", "-e", "production", "-s", "-t", "5:5", "-b", "tcp://127.0.0.1:{port}"].iter().map(|s| s.to_string()).chain([script]).collect()
            };
            return Ok(ServerCommand { program: ruby, args, env, dir: Some(apps) });
        }
        let python = env_path("FERRULE_BENCH_PYTHON", self.name)?;
        let mut env = vec![("PYTHONDONTWRITEBYTECODE".to_owned(), "1".to_owned())];
        if let Some(path) = std::env::var_os("FERRULE_BENCH_PYTHONPATH") {
            env.push(("PYTHONPATH".into(), path.to_string_lossy().into_owned()));
        }
        let args: Vec<String> = match self.name {
            "granian" => [
                "-m", "granian", "--interface", "rsgi", "--host", "127.0.0.1", "--port", "{port}", "--workers", "1",
                "--runtime-threads", "1", "--loop", "uvloop", "--no-access-log", "--log-level", "warning", "granian_app:app",
            ]
            .iter()
            .map(|s| s.to_string())
            .collect(),
            _ => vec![apps.join(file).display().to_string(), "{port}".into()],
        };
        Ok(ServerCommand { program: python, args, env, dir: Some(apps) })
    }

    /// `name version` of every package the framework runs on.
    pub fn versions(&self) -> Vec<String> {
        if self.name == CEILING {
            return vec!["hyper 1 and hyper-util 0.1 as Cargo.lock pins them for the core".to_owned()];
        }
        if self.language == "rust" {
            return vec![format!("ferrule-core {}", env!("CARGO_PKG_VERSION"))];
        }
        if self.language == "node" {
            let Ok(node) = env_path("FERRULE_BENCH_NODE", self.name) else { return Vec::new() };
            let script = format!(
                "console.log('node', process.versions.node); for (const p of {:?}) console.log(p, require(p + '/package.json').version)",
                self.packages
            );
            let mut command = std::process::Command::new(node);
            command.args(["-e", &script]);
            if let Some(path) = std::env::var_os("FERRULE_BENCH_NODE_PATH") {
                command.env("NODE_PATH", path);
            }
            return match command.output() {
                Ok(out) if out.status.success() => String::from_utf8_lossy(&out.stdout).lines().map(str::to_owned).collect(),
                _ => vec!["(versions unavailable)".to_owned()],
            };
        }
        if self.language == "ruby" {
            let Ok(ruby) = env_path("FERRULE_BENCH_RUBY", self.name) else { return Vec::new() };
            let script = format!(
                "puts \"ruby #{{RUBY_VERSION}}\"; if {:?}.empty? then require \"ferrule\"; puts \"ferrule #{{Ferrule::VERSION}}\" else {:?}.each {{ |g| puts \"#{{g}} #{{Gem::Specification.find_by_name(g).version}}\" }} end",
                self.packages, self.packages
            );
            let mut command = std::process::Command::new(ruby);
            command.args(["-e", &script]);
            if let Some(lib) = std::env::var_os("FERRULE_BENCH_RUBYLIB") {
                command.env("RUBYLIB", lib);
            }
            return match command.output() {
                Ok(out) if out.status.success() => String::from_utf8_lossy(&out.stdout).lines().map(str::to_owned).collect(),
                _ => vec!["(versions unavailable)".to_owned()],
            };
        }
        let Ok(python) = env_path("FERRULE_BENCH_PYTHON", self.name) else { return Vec::new() };
        let script = format!(
            "import importlib.metadata as m, platform\nprint('python', platform.python_version())\nfor p in {:?}:\n    print(p, m.version(p))",
            self.packages
        );
        let mut command = std::process::Command::new(python);
        command.args(["-c", &script]);
        if let Some(path) = std::env::var_os("FERRULE_BENCH_PYTHONPATH") {
            command.env("PYTHONPATH", path);
        }
        match command.output() {
            Ok(out) if out.status.success() => String::from_utf8_lossy(&out.stdout).lines().map(str::to_owned).collect(),
            _ => vec!["(versions unavailable)".to_owned()],
        }
    }

    /// Whether this framework serves the workload (the axum baseline serves only JSON and the
    /// stream routes; the ceiling every HTTP workload, no stream; the stream routes are served by the frameworks of [`STREAMING`]; a priced
    /// feature's server only the workloads that price it).
    pub fn serves(&self, workload: &str) -> bool {
        if self.priced.is_some() {
            return generate::features::WORKLOADS.contains(&workload);
        }
        if crate::stream::is_stream(workload) {
            return STREAMING.contains(&self.name);
        }
        self.name != "axum" || crate::serve::AXUM_WORKLOADS.contains(&workload)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_ceiling_serves_every_http_workload_and_no_stream() {
        let ceiling = find(CEILING).expect("in the matrix by default");
        assert!(["path-int", "json-large", "multipart-small", "mixed"].iter().all(|w| ceiling.serves(w)));
        assert!(crate::stream::ALL.iter().all(|w| !ceiling.serves(w.name)));
        assert!(!ceiling.ferrule, "its requests are no one's to fail");
    }
}
