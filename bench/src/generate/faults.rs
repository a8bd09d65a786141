//! The fault routes every Ferrule server under test carries besides the workloads (the Rust
//! one in serve.rs): the `handler-faults` reliability probe calls them. Peers do not get them;
//! no workload calls them, so they cost the benchmarks nothing.
//!
//! | route | what the handler does | what the probe expects |
//! |---|---|---|
//! | `GET /fault/raise` | raises / throws with a message naming a secret | 500 problem, the message not in it |
//! | `GET /fault/block` | holds its thread 3 s (blocking sleep, a busy loop in Node), deadline 1 s | 504 after 1 s (within 2 s); `/health` answered within one run (4.5 s, where two take 6) |
//! | `GET /fault/sleep` | waits 3 s without holding the thread where the language can (asyncio, a timer), deadline 1 s | 504 after 1 s |
//! | `/files/…` | the directory `FERRULE_PROBE_STATIC` names, served as static files (only when set) | the `traversal` probe: nothing outside it is ever sent |

/// The message the raising handlers carry: it must never reach a client.
pub const SECRET: &str = "SECRET-FAULT-TOKEN";

/// `{async}` and `{sleep}` are filled in for the sync or the async server.
pub const PYTHON: &str = r#"

@app.get("/fault/raise")
def fault_raise():
    raise RuntimeError("SECRET-FAULT-TOKEN: a handler's own message")


@app.get("/fault/block", timeout_ms=1000)
def fault_block():
    time.sleep(3)
    return "late"


@app.get("/fault/sleep", timeout_ms=1000)
{async}def fault_sleep():
    {sleep}
    return "late"


if __import__("os").environ.get("FERRULE_PROBE_STATIC"):
    from ferrule import StaticFiles as _StaticFiles

    app.mount("/files", _StaticFiles(directory=__import__("os").environ["FERRULE_PROBE_STATIC"]))"#;

pub const NODE: &str = r#"app.get('/fault/raise', () => { throw new Error("SECRET-FAULT-TOKEN: a handler's own message"); });
app.get('/fault/block', { timeout: 1000 }, () => {
  const until = Date.now() + 3000;
  while (Date.now() < until) { /* holds the thread, as a CPU-bound handler does */ }
  return 'late';
});
app.get('/fault/sleep', { timeout: 1000 }, () => new Promise((resolve) => { setTimeout(() => resolve('late'), 3000); }));
if (process.env.FERRULE_PROBE_STATIC) app.static({ root: process.env.FERRULE_PROBE_STATIC, prefix: '/files' });"#;

pub const RUBY: &str = r#"app.get("/fault/raise") { raise "SECRET-FAULT-TOKEN: a handler's own message" }
app.get("/fault/block", timeout_ms: 1000) { sleep 3; "late" }
app.get("/fault/sleep", timeout_ms: 1000) { sleep 3; "late" }
app.static("/files", ENV["FERRULE_PROBE_STATIC"]) if ENV["FERRULE_PROBE_STATIC"]"#;
