//! The features whose cost the benchmarks report (issue: every feature on the request path says
//! what it costs). Every Ferrule server under test carries them switched off; the framework
//! `<base>+<feature>` (frameworks.rs) starts the base's server with `FERRULE_BENCH_FEATURE`
//! naming one, and the matrix measures the two side by side in the same turn, so their ratio is
//! the feature's price on this machine, in this run.
//!
//! | feature | what it switches on | the peers' price, for scale |
//! |---|---|---|
//! | `hook` | one request hook in the language, as its users write one: it reads a header and keeps it on the request (Python `@app.on_request`, Fastify's `addHook('onRequest')` with `done`, Sinatra's `before`) | Robyn's middleware: 26–42% of its throughput |
//! | `metrics` | Prometheus metrics (`metrics_url`), Rust only (the layer is the same for every binding) | |
//! | `allowed-hosts` | a host allow-list (`allowed_hosts`) of three patterns, Rust only (the layer is the same for every binding) | |

/// The environment variable that switches one feature on.
pub const ENV: &str = "FERRULE_BENCH_FEATURE";

/// The workloads that price a feature: the cheapest request, where a fixed cost shows most, and
/// a validated JSON body.
pub const WORKLOADS: &[&str] = &["path-simple", "json-small"];

pub const PYTHON: &str = r#"

if __import__("os").environ.get("FERRULE_BENCH_FEATURE") == "hook":

    @app.on_request
    def remember_the_agent(request):
        request.state.agent = request.header("user-agent")"#;

pub const NODE: &str = r#"if (process.env.FERRULE_BENCH_FEATURE === 'hook') {
  app.decorateRequest('agent', null);
  app.addHook('onRequest', (ctx, reply, done) => { ctx.agent = ctx.header('user-agent'); done(); });
}"#;

pub const RUBY: &str = r#"app.before { @agent = request.header("user-agent") } if ENV["FERRULE_BENCH_FEATURE"] == "hook""#;
