//! Reload for development (`python -m ferrule app:app --reload`, `ferrule app.js --reload`,
//! `ferrule app.rb --reload`): one supervisor, the same for every language, that runs the app
//! in a child process and starts it again when its sources change.
//!
//! The file watcher is the `notify` crate (inotify on Linux). A change to a file with one of the
//! watched extensions, under the watched directories and outside the directories that are never
//! sources (`.git`, `node_modules`, `__pycache__`, virtual environments, build outputs), starts
//! a quiet period (`debounce`, 200 ms by default): the changes an editor or a `git checkout`
//! makes together restart the app once. The child is then stopped as a server is stopped —
//! SIGTERM, so it drains, and SIGKILL past the drain deadline — and started again. SIGINT or
//! SIGTERM to the supervisor stops the child the same way and ends the supervisor with the
//! child's exit status. A child that exits by itself (a syntax error at import) is started
//! again on the next change, not in a loop.
//!
//! Development only: a restart drops the connections in flight, as uvicorn's and nodemon's do.

use notify::{EventKind, RecursiveMode, Watcher};
use std::path::{Path, PathBuf};
use std::process::ExitStatus;
use std::time::Duration;
use tokio::process::{Child, Command};
use tokio::sync::mpsc;

/// What to run and what to watch.
#[derive(Debug, Clone)]
pub struct ReloadSpec {
    /// The child's program and arguments (the app, served as without `--reload`).
    pub command: Vec<String>,
    /// Directories watched, recursively (the working directory by default).
    pub directories: Vec<PathBuf>,
    /// File name endings that count as sources (`.py`; `.js`, `.mjs`, `.json`; `.rb`).
    pub extensions: Vec<String>,
    /// How long changes must stop before the app is started again.
    pub debounce: Duration,
    /// How long a stopped child may drain before it is killed.
    pub drain: Duration,
}

/// Directories whose files are never an app's sources.
const IGNORED: &[&str] = &[".git", ".hg", "node_modules", "__pycache__", ".venv", "venv", ".tox", ".mypy_cache", ".pytest_cache", "target", ".bazel"];

/// Runs the app under the supervisor until SIGINT or SIGTERM; returns the exit code to end with
/// (the child's; 0 when a signal ended it, as a drained server ends).
pub fn supervise(spec: ReloadSpec) -> Result<i32, String> {
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().map_err(|e| format!("cannot start the reloader: {e}"))?;
    runtime.block_on(run(spec, crate::server::shutdown_signal()))
}

/// The supervisor's loop, until `stop` (SIGINT/SIGTERM) completes.
async fn run(spec: ReloadSpec, stop: impl std::future::Future<Output = ()>) -> Result<i32, String> {
    if spec.command.is_empty() {
        return Err("reload: nothing to run".into());
    }
    let (changed, mut changes) = mpsc::unbounded_channel::<PathBuf>();
    let extensions = spec.extensions.clone();
    let mut watcher = notify::recommended_watcher(move |event: notify::Result<notify::Event>| {
        let Ok(event) = event else { return };
        if !matches!(event.kind, EventKind::Create(_) | EventKind::Modify(_) | EventKind::Remove(_)) {
            return;
        }
        for path in event.paths {
            if is_source(&path, &extensions) {
                let _ = changed.send(path);
            }
        }
    })
    .map_err(|e| format!("reload: cannot watch files: {e}"))?;
    for directory in &spec.directories {
        watcher.watch(directory, RecursiveMode::Recursive).map_err(|e| format!("reload: cannot watch {}: {e}", directory.display()))?;
    }
    let watched: Vec<String> = spec.directories.iter().map(|d| d.display().to_string()).collect();
    eprintln!("ferrule: reloading on changes to {} files in {}", spec.extensions.join(", "), watched.join(", "));

    let mut stop = Box::pin(stop);
    let mut child = Some(start(&spec)?);
    loop {
        let exited = async {
            match child.as_mut() {
                Some(running) => running.wait().await.ok(),
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            () = &mut stop => {
                let status = match child.take() {
                    Some(running) => stop_child(running, spec.drain).await,
                    None => None,
                };
                return Ok(status.and_then(|s| s.code()).unwrap_or(0));
            }
            status = exited => {
                child = None;
                let code = status.and_then(|s| s.code()).map_or_else(|| "a signal".to_owned(), |c| format!("status {c}"));
                eprintln!("ferrule: the app exited ({code}); waiting for a change to start it again");
            }
            Some(first) = changes.recv() => {
                // The quiet period: whatever else changes meanwhile is part of this restart.
                let mut names = vec![first];
                while let Ok(Some(more)) = tokio::time::timeout(spec.debounce, changes.recv()).await {
                    if !names.contains(&more) {
                        names.push(more);
                    }
                }
                let shown: Vec<String> = names.iter().take(3).map(|p| p.file_name().map_or_else(|| p.display().to_string(), |n| n.to_string_lossy().into_owned())).collect();
                eprintln!("ferrule: {} changed; restarting", shown.join(", "));
                if let Some(running) = child.take() {
                    stop_child(running, spec.drain).await;
                }
                child = Some(start(&spec)?);
            }
        }
    }
}

/// Whether a changed `path` is a source: a watched extension, outside the ignored directories.
fn is_source(path: &Path, extensions: &[String]) -> bool {
    let name = path.file_name().map(|n| n.to_string_lossy()).unwrap_or_default();
    let editor_file = name.starts_with(".#") || name.ends_with('~') || name.ends_with(".swp");
    !editor_file
        && extensions.iter().any(|ext| name.ends_with(ext.as_str()))
        && !path.components().any(|part| IGNORED.iter().any(|ignored| part.as_os_str() == *ignored))
}

fn start(spec: &ReloadSpec) -> Result<Child, String> {
    Command::new(&spec.command[0])
        .args(&spec.command[1..])
        .env("FERRULE_RELOADED", "1")
        .kill_on_drop(true)
        .spawn()
        .map_err(|e| format!("reload: cannot start {}: {e}", spec.command[0]))
}

/// SIGTERM, so the app drains; SIGKILL past `drain`.
async fn stop_child(mut child: Child, drain: Duration) -> Option<ExitStatus> {
    if let Some(pid) = child.id() {
        // SAFETY: kill(2) on our own child's pid.
        unsafe { libc::kill(pid as libc::pid_t, libc::SIGTERM) };
    }
    match tokio::time::timeout(drain, child.wait()).await {
        Ok(status) => status.ok(),
        Err(_) => {
            let _ = child.start_kill();
            child.wait().await.ok()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sources_are_the_watched_extensions_outside_the_ignored_directories() {
        let py = vec![".py".to_owned()];
        assert!(is_source(Path::new("/app/main.py"), &py));
        assert!(is_source(Path::new("/app/pkg/models.py"), &py));
        assert!(!is_source(Path::new("/app/__pycache__/main.cpython-311.pyc"), &py));
        assert!(!is_source(Path::new("/app/.venv/lib/site.py"), &py));
        assert!(!is_source(Path::new("/app/notes.txt"), &py));
        assert!(!is_source(Path::new("/app/.#main.py"), &py));
        let js = vec![".js".to_owned(), ".mjs".to_owned()];
        assert!(!is_source(Path::new("/app/node_modules/x/index.js"), &js));
        assert!(is_source(Path::new("/app/src/app.mjs"), &js));
    }

    /// A child that appends a line to `log` when it starts, then waits to be stopped.
    fn spec(dir: &Path, log: &Path) -> ReloadSpec {
        ReloadSpec {
            command: vec!["/bin/sh".into(), "-c".into(), format!("echo started >> {}; exec sleep 30", log.display())],
            directories: vec![dir.to_path_buf()],
            extensions: vec![".py".into()],
            // Long enough that a loaded machine still writes a burst within one quiet period.
            debounce: Duration::from_millis(500),
            drain: Duration::from_secs(2),
        }
    }

    fn starts(log: &Path) -> usize {
        std::fs::read_to_string(log).map(|t| t.lines().count()).unwrap_or(0)
    }

    fn wait_for(what: impl Fn() -> bool) -> bool {
        let until = std::time::Instant::now() + Duration::from_secs(10);
        while std::time::Instant::now() < until {
            if what() {
                return true;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        false
    }

    #[test]
    fn a_change_restarts_the_app_once_and_other_files_do_not() {
        let base = std::env::var_os("TEST_TMPDIR").map(PathBuf::from).unwrap_or_else(std::env::temp_dir);
        let dir = base.join(format!("ferrule-reload-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("src")).unwrap();
        let log = base.join(format!("ferrule-reload-{}.log", std::process::id()));
        let _ = std::fs::remove_file(&log);
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let supervisor = {
            let spec = spec(&dir, &log);
            std::thread::spawn(move || {
                let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
                runtime.block_on(run(spec, async move { drop(stopped.await) }))
            })
        };
        assert!(wait_for(|| starts(&log) == 1), "the app started");
        std::thread::sleep(Duration::from_millis(200)); // the watches are set before the child starts
        std::fs::write(dir.join("notes.txt"), "not a source").unwrap();
        for n in 0..5 {
            std::fs::write(dir.join("src/app.py"), format!("VERSION = {n}\n")).unwrap();
        }
        assert!(wait_for(|| starts(&log) == 2), "one restart for a burst of changes");
        std::thread::sleep(Duration::from_millis(1_000));
        assert_eq!(starts(&log), 2, "no restart for a file that is not a source, nor a second one for the burst");
        stop.send(()).unwrap();
        let code = supervisor.join().unwrap().unwrap();
        assert_eq!(code, 0, "stopped: the child ended by its SIGTERM, as a drained server does");
        assert_eq!(starts(&log), 2);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
