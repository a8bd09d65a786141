//! App generation: from the workload fixtures, the source of one server per framework, each
//! serving every workload's route with an echo handler written the way that framework's users
//! write it (typed parameters, validated bodies), returning what it received after parsing.
//!
//! Bazel runs `ferrule-bench generate <framework> --out FILE` for each framework (see
//! bench/BUILD.bazel); the sources are build outputs, never committed.

mod code;
mod fastapi;
pub mod faults;
pub mod features;
mod ferrule_python;
mod granian;
mod msgspec_python;
mod node_apps;
mod python_types;
mod robyn;
mod ruby_apps;
mod spikard;
mod streams;
mod typed_python;

use crate::workload::Workload;
use ferrule_core::params::ScalarKind;
use ferrule_core::{BodyKind, BodySpec, ParamSpec, PathTemplate};

/// The frameworks whose server is a generated source file, and that file's name.
pub const GENERATED: &[(&str, &str)] = &[
    ("ferrule-python-sync", "ferrule_python_sync.py"),
    ("ferrule-python-async", "ferrule_python_async.py"),
    ("fastapi", "fastapi_app.py"),
    ("robyn", "robyn_app.py"),
    ("granian", "granian_app.py"),
    ("spikard", "spikard_app.py"),
    ("ferrule-node", "ferrule_node.js"),
    ("fastify", "fastify_app.js"),
    ("express", "express_app.js"),
    ("ferrule-ruby", "ferrule_ruby.rb"),
    ("sinatra", "sinatra_app.ru"),
    ("rack", "rack_app.ru"),
];

pub fn file_name(framework: &str) -> Option<&'static str> {
    GENERATED.iter().find(|(f, _)| *f == framework).map(|(_, file)| *file)
}

pub fn generate(framework: &str, workloads: &[Workload]) -> Result<String, String> {
    let routes = workloads.iter().map(Route::of).collect::<Result<Vec<_>, _>>()?;
    match framework {
        "ferrule-python-sync" => Ok(ferrule_python::generate(&routes, false)),
        "ferrule-python-async" => Ok(ferrule_python::generate(&routes, true)),
        "fastapi" => Ok(fastapi::generate(&routes)),
        "robyn" => Ok(robyn::generate(&routes)),
        "granian" => Ok(granian::generate(&routes)),
        "spikard" => Ok(spikard::generate(&routes)),
        "ferrule-node" => Ok(node_apps::ferrule_node(&routes)),
        "fastify" => Ok(node_apps::fastify(&routes)),
        "express" => Ok(node_apps::express(&routes)),
        "ferrule-ruby" => Ok(ruby_apps::ferrule_ruby(&routes)),
        "sinatra" => Ok(ruby_apps::sinatra(&routes)),
        "rack" => Ok(ruby_apps::rack(&routes)),
        other => Err(format!(
            "no generator for `{other}` (generated: {})",
            GENERATED.iter().map(|(f, _)| *f).collect::<Vec<_>>().join(", ")
        )),
    }
}

/// One workload's route, taken apart the way the generators need it.
pub struct Route<'a> {
    /// A Python/JS/Ruby identifier for the handler (`path_int`).
    pub ident: String,
    pub method: &'a str,
    /// Ferrule's template: `/numbers/{n:int}`.
    pub template: &'a str,
    pub path_params: Vec<(String, ScalarKind)>,
    pub query: &'a [ParamSpec],
    pub body: Option<&'a BodySpec>,
    /// The declared schema of the echo it answers with (200), for the frameworks that filter a
    /// response by one (Ferrule, FastAPI's response_model, Fastify's response schema).
    pub response: Option<&'a serde_json::Value>,
}

impl<'a> Route<'a> {
    fn of(workload: &'a Workload) -> Result<Route<'a>, String> {
        let spec = &workload.route;
        let template = PathTemplate::parse(&spec.path).map_err(|e| format!("{}: {e}", workload.name))?;
        if !spec.headers.is_empty() || !spec.cookies.is_empty() || !spec.path_params.is_empty() {
            return Err(format!("{}: the generators handle path types, query parameters and bodies only", workload.name));
        }
        Ok(Route {
            ident: workload.name.replace('-', "_"),
            method: &spec.method,
            template: &spec.path,
            path_params: template.params.iter().map(|p| (p.name.clone(), p.kind)).collect(),
            query: &spec.query,
            body: spec.body.as_ref(),
            response: spec.responses.get("200").map(|declared| &declared.schema),
        })
    }

    /// The path with untyped parameters: `/numbers/{n}` (`brace`) or `/numbers/:n`.
    pub fn plain_path(&self, brace: bool) -> String {
        let mut out = String::new();
        let mut rest = self.template;
        while let Some(open) = rest.find('{') {
            let close = open + rest[open..].find('}').unwrap_or(rest.len() - open - 1);
            out.push_str(&rest[..open]);
            let inner = &rest[open + 1..close];
            let name = inner.split(':').next().unwrap_or(inner);
            if brace {
                out.push_str(&format!("{{{name}}}"));
            } else {
                out.push_str(&format!(":{name}"));
            }
            rest = &rest[close + 1..];
        }
        out.push_str(rest);
        out
    }

    pub fn body_kind(&self) -> Option<BodyKind> {
        self.body.map(|b| b.kind)
    }

    /// The body's object schema (`properties`, `required`), if it has one.
    pub fn body_schema(&self) -> Option<&'a serde_json::Value> {
        self.body.and_then(|b| b.schema.as_ref())
    }
}

/// Field names and schemas of an object schema, with whether each is required.
pub fn fields(schema: &serde_json::Value) -> Vec<(&str, &serde_json::Value, bool)> {
    let required: Vec<&str> = schema["required"].as_array().map(|r| r.iter().filter_map(|v| v.as_str()).collect()).unwrap_or_default();
    schema["properties"]
        .as_object()
        .map(|props| props.iter().map(|(name, sub)| (name.as_str(), sub, required.contains(&name.as_str()))).collect())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn workloads() -> Vec<Workload> {
        crate::workload::load(&crate::workload::default_fixtures_dir()).unwrap()
    }

    #[test]
    fn every_framework_gets_a_source_naming_every_route() {
        let workloads = workloads();
        for (framework, _) in GENERATED {
            let source = generate(framework, &workloads).unwrap();
            for w in &workloads {
                let route = Route::of(w).unwrap();
                assert!(source.contains(&route.ident), "{framework}: no handler for {}", w.name);
            }
        }
    }

    /// Parses a module and fails on a name it loads that nothing in it binds (an import
    /// forgotten shows only when that line runs: FastAPI's room once raised NameError at every
    /// disconnect). Scopes are ignored; a typo bound elsewhere still passes.
    const NAMES_ARE_BOUND: &str = r#"
import ast, builtins, sys
tree = ast.parse(open(sys.argv[1]).read(), sys.argv[1])
bound = set(dir(builtins)) | {"__file__", "__name__"}
for node in ast.walk(tree):
    if isinstance(node, (ast.Import, ast.ImportFrom)):
        bound.update((alias.asname or alias.name).split(".")[0] for alias in node.names)
    elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        bound.add(node.name)
    elif isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
        bound.add(node.id)
    elif isinstance(node, ast.arg):
        bound.add(node.arg)
    elif isinstance(node, ast.ExceptHandler) and node.name:
        bound.add(node.name)
loaded = {node.id for node in ast.walk(tree) if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load)}
if loaded - bound:
    sys.exit(f"{sys.argv[1]}: names nothing binds: {sorted(loaded - bound)}")
"#;

    /// A directory of one test's own, removed when it ends: `TEST_TMPDIR` under Bazel, else the
    /// system's temporary directory, where each run had left its generated apps.
    struct Scratch(std::path::PathBuf);

    impl Scratch {
        fn new(test: &str) -> Scratch {
            let base = std::env::var_os("TEST_TMPDIR").map(std::path::PathBuf::from).unwrap_or_else(std::env::temp_dir);
            let dir = base.join(format!("ferrule-gen-{test}-{}", std::process::id()));
            std::fs::create_dir_all(&dir).unwrap();
            Scratch(dir)
        }
    }

    impl Drop for Scratch {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }

    #[test]
    fn generated_python_compiles() {
        let workloads = workloads();
        let dir = Scratch::new("python");
        for (framework, file) in GENERATED.iter().filter(|(_, file)| file.ends_with(".py")) {
            let source = generate(framework, &workloads).unwrap();
            let path = dir.0.join(file);
            std::fs::write(&path, source).unwrap();
            let status = std::process::Command::new("python3").args(["-c", NAMES_ARE_BOUND]).arg(&path).status().unwrap();
            assert!(status.success(), "{framework}: {} is not valid Python, or uses a name nothing binds", path.display());
        }
    }

    #[test]
    fn generated_javascript_parses() {
        let workloads = workloads();
        let dir = Scratch::new("javascript");
        for (framework, file) in GENERATED.iter().filter(|(_, file)| file.ends_with(".js")) {
            let source = generate(framework, &workloads).unwrap();
            let path = dir.0.join(file);
            std::fs::write(&path, source).unwrap();
            let status = std::process::Command::new("node").arg("--check").arg(&path).status().unwrap();
            assert!(status.success(), "{framework}: {} is not valid JavaScript", path.display());
        }
    }

    #[test]
    fn generated_ruby_parses() {
        let workloads = workloads();
        let dir = Scratch::new("ruby");
        for (framework, file) in GENERATED.iter().filter(|(_, file)| file.ends_with(".rb") || file.ends_with(".ru")) {
            let source = generate(framework, &workloads).unwrap();
            let path = dir.0.join(file);
            std::fs::write(&path, source).unwrap();
            let status = std::process::Command::new("ruby").arg("-c").arg(&path).stdout(std::process::Stdio::null()).status().unwrap();
            assert!(status.success(), "{framework}: {} is not valid Ruby", path.display());
        }
    }

    #[test]
    fn plain_paths() {
        let w = workloads();
        let mixed = w.iter().find(|w| w.name == "mixed").unwrap();
        let route = Route::of(mixed).unwrap();
        assert_eq!(route.plain_path(true), "/api/v1/users/{user_id}/posts");
        assert_eq!(route.plain_path(false), "/api/v1/users/:user_id/posts");
    }
}
