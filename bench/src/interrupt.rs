//! Servers stopped when the harness is: Ctrl-C, `kill`, a closed terminal or a test timeout.
//!
//! Each server runs in a process group of its own (so that stopping it reaches the workers it
//! forks), which also puts it out of reach of the signals that stop the harness: the terminal
//! sends Ctrl-C's SIGINT to the harness's group, and Bazel's SIGTERM at a test's timeout goes to
//! the test's. Without this module the harness died there and every server it had started kept
//! running, pinned to the server core and holding its port and memory, where it skews the next
//! measurement on the machine. From the first server [`spawn_in_own_group`] starts, the harness
//! catches SIGINT, SIGTERM and SIGHUP, stops every group it started and has not stopped yet
//! (SIGTERM, then SIGKILL what is left after [`GRACE`]) and then dies of the signal, as it
//! would have without the handler. Commands that start no server (`serve` among them, which has its own
//! graceful shutdown) keep the default handling.

use std::io::Read;
use std::os::fd::FromRawFd;
use std::os::unix::process::CommandExt;
use std::process::{Child, Command};
use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::{Mutex, Once};
use std::time::{Duration, Instant};

/// How long a stopped server has to exit on SIGTERM before its group gets SIGKILL (Robyn's
/// workers, for one, do not exit on SIGTERM).
const GRACE: Duration = Duration::from_secs(3);

/// The process groups of the servers still running. A spawn holds the lock, so a signal that
/// arrives while a server is being started stops that one too.
static GROUPS: Mutex<Vec<i32>> = Mutex::new(Vec::new());

/// The write end of the pipe the signal handler wakes the stopping thread through (-1: not
/// installed).
static WAKE: AtomicI32 = AtomicI32::new(-1);

static INSTALL: Once = Once::new();

/// Starts `command` as the leader of a new process group, which is stopped with the harness
/// if the harness is stopped first; [`forget_group`] once the server has been stopped.
pub fn spawn_in_own_group(command: &mut Command) -> std::io::Result<Child> {
    stop_servers_on_signal();
    let mut groups = GROUPS.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    let child = command.process_group(0).spawn()?;
    groups.push(child.id() as i32);
    Ok(child)
}

/// The group led by `leader` has been stopped by its owner.
pub fn forget_group(leader: u32) {
    GROUPS.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).retain(|group| *group != leader as i32);
}

/// Installs the handler (once per process; later calls do nothing).
fn stop_servers_on_signal() {
    INSTALL.call_once(|| {
        let mut fds = [0; 2];
        // SAFETY: `fds` has room for the two descriptors pipe2 writes.
        if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
            eprintln!("ferrule-bench: cannot watch for signals ({}); an interrupted run may leave servers running", std::io::Error::last_os_error());
            return;
        }
        // SAFETY: the read end was just made and nothing else owns it.
        let mut wake = unsafe { std::fs::File::from_raw_fd(fds[0]) };
        WAKE.store(fds[1], Ordering::SeqCst);
        std::thread::Builder::new()
            .name("stop-servers".into())
            .spawn(move || {
                let mut signal = [0u8; 1];
                if wake.read_exact(&mut signal).is_ok() {
                    stop_every_group_and_exit(i32::from(signal[0]));
                }
            })
            .expect("a thread to watch for signals");
        for signal in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP] {
            // SAFETY: `on_signal` only does what a signal handler may (an atomic load, write(2)).
            unsafe {
                // A signal the harness was started ignoring (`nohup`, `&` in a script) stays
                // ignored, as a shell leaves it.
                let mut current: libc::sigaction = std::mem::zeroed();
                if libc::sigaction(signal, std::ptr::null(), &mut current) == 0 && current.sa_sigaction == libc::SIG_IGN {
                    continue;
                }
                let mut action: libc::sigaction = std::mem::zeroed();
                action.sa_sigaction = on_signal as extern "C" fn(libc::c_int) as libc::sighandler_t;
                action.sa_flags = libc::SA_RESTART;
                libc::sigemptyset(&mut action.sa_mask);
                libc::sigaction(signal, &action, std::ptr::null_mut());
            }
        }
    });
}

extern "C" fn on_signal(signal: libc::c_int) {
    let byte = signal as u8;
    // SAFETY: write(2) is async-signal-safe; the pipe lives as long as the process.
    unsafe { libc::write(WAKE.load(Ordering::SeqCst), (&byte as *const u8).cast(), 1) };
}

fn stop_every_group_and_exit(signal: i32) -> ! {
    // Held until the process exits: no server starts after this.
    let groups = GROUPS.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    let alive = |group: i32| crate::procfs::group_members(group as u32) > 0;
    for group in groups.iter() {
        // SAFETY: kill(2) on a group this process made.
        unsafe { libc::kill(-group, libc::SIGTERM) };
    }
    let deadline = Instant::now() + GRACE;
    while groups.iter().any(|g| alive(*g)) && Instant::now() < deadline {
        reap(&groups);
        std::thread::sleep(Duration::from_millis(20));
    }
    for group in groups.iter().filter(|g| alive(**g)) {
        // SAFETY: as above.
        unsafe { libc::kill(-group, libc::SIGKILL) };
    }
    let name = match signal {
        libc::SIGINT => "SIGINT",
        libc::SIGTERM => "SIGTERM",
        _ => "SIGHUP",
    };
    eprintln!("ferrule-bench: stopped by {name}; stopped the {} server(s) still running", groups.len());
    // Die of the signal itself, so a shell running the harness sees it was interrupted.
    // SAFETY: back to the default action, then the signal to this thread: the process ends.
    unsafe {
        libc::signal(signal, libc::SIG_DFL);
        libc::raise(signal);
    }
    std::process::exit(128 + signal);
}

/// A server that exited stays a zombie until reaped; its `Child` belongs to a thread that is
/// not coming back for it. Only the leaders: oha's status is its own thread's to collect.
fn reap(leaders: &[i32]) {
    for leader in leaders {
        // SAFETY: waitpid with WNOHANG on a child of this process only collects its status.
        unsafe { libc::waitpid(*leader, std::ptr::null_mut(), libc::WNOHANG) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::BufRead;
    use std::os::unix::process::ExitStatusExt;

    const CHILD: &str = "interrupt::tests::a_harness_that_started_a_server";
    /// The signal the child harness starts ignoring, if any (as `nohup` ignores SIGHUP).
    const IGNORED: &str = "FERRULE_TEST_HARNESS_IGNORES";

    /// The harness in [`stopping_the_harness_stops_its_servers`]: started as a process of its
    /// own by that test, never by a plain test run.
    #[test]
    #[ignore = "a child process of stopping_the_harness_stops_its_servers"]
    fn a_harness_that_started_a_server() {
        let ignored: Option<i32> = std::env::var(IGNORED).ok().map(|s| s.parse().unwrap());
        for signal in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP] {
            let disposition = if Some(signal) == ignored { libc::SIG_IGN } else { libc::SIG_DFL };
            // SAFETY: as a shell sets them before it starts a program.
            unsafe { libc::signal(signal, disposition) };
        }
        // A server with a worker, as Granian and Robyn fork theirs.
        let mut command = Command::new("sh");
        command.args(["-c", "sleep 600 & exec sleep 600"]);
        let mut server = spawn_in_own_group(&mut command).unwrap();
        println!("server group {}", server.id());
        std::thread::sleep(Duration::from_secs(60));
        // Reached only if nobody stopped this process: leave nothing behind.
        // SAFETY: kill(2) on the group this test made.
        unsafe { libc::kill(-(server.id() as i32), libc::SIGKILL) };
        server.wait().unwrap();
    }

    /// A harness that started a server (with a worker), running, and its server's group.
    fn harness(ignoring: Option<i32>) -> (std::process::Child, i32) {
        let mut command = Command::new(std::env::current_exe().unwrap());
        command.args(["--ignored", "--exact", CHILD, "--nocapture", "--test-threads", "1"]).stdout(std::process::Stdio::piped());
        if let Some(signal) = ignoring {
            command.env(IGNORED, signal.to_string());
        }
        let mut harness = command.spawn().unwrap();
        let mut lines = std::io::BufReader::new(harness.stdout.take().unwrap()).lines();
        let group: i32 = loop {
            // After libtest's "test … ... " on the same line.
            let line = lines.next().expect("the harness printed its server's group").unwrap();
            if let Some((_, group)) = line.split_once("server group ") {
                break group.trim().parse().unwrap();
            }
        };
        let deadline = Instant::now() + Duration::from_secs(5);
        while crate::procfs::group_members(group as u32) < 2 {
            assert!(Instant::now() < deadline, "the server's worker never started");
            std::thread::sleep(Duration::from_millis(10));
        }
        (harness, group)
    }

    /// Signals the harness, waits for it, and says how many of its server's processes are left
    /// (killing them, so a failed test leaves nothing behind either). A process the signal has
    /// reached may take a moment to finish exiting on a loaded machine (seen once in a full
    /// test run: one left, in a run of the whole test binary that took 1 s, so no SIGKILL was
    /// involved): it is counted only if it is still there a second later.
    fn stop(harness: &mut std::process::Child, group: i32, signal: i32) -> (std::process::ExitStatus, usize) {
        // SAFETY: the child this test started.
        unsafe { libc::kill(harness.id() as i32, signal) };
        let status = harness.wait().unwrap();
        let settled = Instant::now() + Duration::from_secs(1);
        let mut left = crate::procfs::group_members(group as u32);
        while left > 0 && Instant::now() < settled {
            std::thread::sleep(Duration::from_millis(10));
            left = crate::procfs::group_members(group as u32);
        }
        if left > 0 {
            // SAFETY: the group the harness left behind.
            unsafe { libc::kill(-group, libc::SIGKILL) };
        }
        (status, left)
    }

    #[test]
    fn stopping_the_harness_stops_its_servers() {
        for signal in [libc::SIGTERM, libc::SIGINT, libc::SIGHUP] {
            let (mut harness, group) = harness(None);
            let (status, left) = stop(&mut harness, group, signal);
            assert_eq!(left, 0, "signal {signal}: processes of the server's group outlived the harness");
            assert_eq!(status.signal(), Some(signal), "signal {signal}: the harness ends as the signal would have ended it");
        }
    }

    #[test]
    fn a_signal_the_harness_was_started_ignoring_stays_ignored() {
        let (mut harness, group) = harness(Some(libc::SIGHUP));
        // SAFETY: the child this test started.
        unsafe { libc::kill(harness.id() as i32, libc::SIGHUP) };
        std::thread::sleep(Duration::from_millis(300));
        let running = harness.try_wait().unwrap().is_none();
        let serving = crate::procfs::group_members(group as u32);
        let (status, left) = stop(&mut harness, group, libc::SIGTERM);
        assert!(running, "the harness ended on a SIGHUP it was started ignoring ({status})");
        assert_eq!(serving, 2, "its server was stopped on a SIGHUP the harness ignores");
        assert_eq!((status.signal(), left), (Some(libc::SIGTERM), 0));
    }
}
