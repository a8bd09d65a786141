//! Witnesses of the machine's stalls: one thread on each core the probe may use, each asking
//! to sleep 1 ms, over and over, and recording each time it woke much later than asked.
//!
//! A `/health` sample's latency is measured by the probe, so it includes any time the machine
//! (a virtual one, shared) took a core away: from the server's thread, the probe's, or both. A
//! witness talks to no server, and it wakes in time on a core the server keeps busy (it sleeps
//! nearly always, so the scheduler runs it at once), so what it overslept is the core's absence,
//! not the server's doing. One per core, pinned there: a hypervisor can take one virtual core
//! away and leave the other running, and a witness on the other would see nothing. CI failed
//! slow-clients on Python at one 171 ms sample of 314 (limit 100), with the rest quick (p95
//! 1.2 ms) and the quiet run before it already slow (p95 3.1 ms, p99 9.7, against 0.7 / 0.8 in
//! a quiet run); the other languages' probes in the same run were quiet.
//!
//! Cost: a thousand wake-ups a second on each core, of a few microseconds each: well under 1%.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// What the witness asks to sleep each time.
const TICK: Duration = Duration::from_millis(1);

/// How late a wake-up must be to count as a stall: the scheduler's own latency on a busy
/// shared core is a few milliseconds, which the bounds already allow for.
const STALL: Duration = Duration::from_millis(5);

/// The running witnesses; [`StallWitness::finish`] stops them and returns what they saw.
pub(super) struct StallWitness {
    stop: Arc<AtomicBool>,
    threads: Vec<std::thread::JoinHandle<Vec<(Instant, Instant)>>>,
}

/// For each core, the intervals in which its witness should have been awake and was not.
#[derive(Debug, Default)]
pub(super) struct Stalls(Vec<Vec<(Instant, Instant)>>);

impl StallWitness {
    pub(super) fn start() -> Self {
        let stop = Arc::new(AtomicBool::new(false));
        let threads = allowed_cores()
            .into_iter()
            .filter_map(|core| {
                let stopped = stop.clone();
                // Named, to tell them apart in `ps -L` and `perf`. A witness that cannot start
                // excuses nothing.
                std::thread::Builder::new()
                    .name(format!("stall-witness-{}", core.unwrap_or_default()))
                    .spawn(move || {
                        pin_to(core);
                        watch(&stopped, || std::thread::sleep(TICK))
                    })
                    .ok()
            })
            .collect();
        Self { stop, threads }
    }

    /// Stops the witnesses (within a tick) and returns their stalls; none from a witness whose
    /// thread panicked.
    pub(super) fn finish(self) -> Stalls {
        self.stop.store(true, Ordering::Relaxed);
        Stalls(self.threads.into_iter().map(|thread| thread.join().unwrap_or_default()).collect())
    }
}

/// The cores this process may run on (`[None]`, one unpinned witness, when that is unknown).
fn allowed_cores() -> Vec<Option<usize>> {
    // SAFETY: a zeroed cpu_set_t is an empty set; sched_getaffinity fills the one we own.
    let cores: Vec<Option<usize>> = unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        if libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) != 0 {
            return vec![None];
        }
        (0..libc::CPU_SETSIZE as usize).filter(|&cpu| libc::CPU_ISSET(cpu, &set)).map(Some).collect()
    };
    if cores.is_empty() { vec![None] } else { cores }
}

/// Pins the calling thread to `core` (left where it is when that fails or `core` is None).
fn pin_to(core: Option<usize>) {
    let Some(core) = core else { return };
    // SAFETY: as above; sched_setaffinity(0, ..) reads the set and applies it to this thread.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_SET(core, &mut set);
        libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set);
    }
}

/// Sleeps a tick (`sleep`) until `stop`, recording every wake-up later than [`STALL`] past due.
fn watch(stop: &AtomicBool, mut sleep: impl FnMut()) -> Vec<(Instant, Instant)> {
    let mut stalls = Vec::new();
    while !stop.load(Ordering::Relaxed) {
        let asleep = Instant::now();
        sleep();
        let awake = Instant::now();
        let due = asleep + TICK;
        if awake.saturating_duration_since(due) > STALL {
            stalls.push((due, awake));
        }
    }
    stalls
}

impl Stalls {
    /// How much of `from..to` the core that was away longest in it was away: the most a sample
    /// taken then can owe the machine rather than the server.
    pub(super) fn within(&self, from: Instant, to: Instant) -> Duration {
        self.0
            .iter()
            .map(|core| {
                core.iter()
                    .map(|&(start, end)| end.min(to).saturating_duration_since(start.max(from)))
                    .sum::<Duration>()
            })
            .max()
            .unwrap_or_default()
    }

    /// The longest stall seen on any core, within a sample or not (said in the verdict, so a
    /// log shows how the machine behaved).
    pub(super) fn longest(&self) -> Duration {
        self.0.iter().flatten().map(|&(start, end)| end - start).max().unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_only_the_overlap_of_each_stall() {
        let t0 = Instant::now();
        let at = |ms: u64| t0 + Duration::from_millis(ms);
        let stalls = Stalls(vec![vec![(at(10), at(30)), (at(50), at(60)), (at(100), at(200))]]);
        assert_eq!(stalls.within(at(20), at(55)), Duration::from_millis(15));
        assert_eq!(stalls.within(at(30), at(50)), Duration::ZERO);
        assert_eq!(stalls.within(at(0), at(300)), Duration::from_millis(130));
        assert_eq!(stalls.longest(), Duration::from_millis(100));
    }

    #[test]
    fn a_sample_owes_at_most_the_core_away_longest_within_it() {
        let t0 = Instant::now();
        let at = |ms: u64| t0 + Duration::from_millis(ms);
        // Core 0 away 10..30 and 40..50, core 1 away 20..45: not summed across cores.
        let stalls = Stalls(vec![vec![(at(10), at(30)), (at(40), at(50))], vec![(at(20), at(45))]]);
        assert_eq!(stalls.within(at(0), at(100)), Duration::from_millis(30));
        assert_eq!(stalls.within(at(20), at(45)), Duration::from_millis(25));
        assert_eq!(stalls.longest(), Duration::from_millis(25));
    }

    #[test]
    fn records_a_late_wake_up() {
        let stop = AtomicBool::new(false);
        let mut ticks = 0;
        let stalls = watch(&stop, || {
            ticks += 1;
            // The fourth sleep is held up 30 ms, as a paused machine would hold it.
            std::thread::sleep(if ticks == 4 { Duration::from_millis(30) } else { TICK });
            if ticks == 10 {
                stop.store(true, Ordering::Relaxed);
            }
        });
        // Punctual ticks may still be late on a busy machine; the held-up one must be there.
        assert!(stalls.iter().any(|&(start, end)| end - start >= Duration::from_millis(29)), "{stalls:?}");
        assert!(stalls.len() <= 10, "{stalls:?}");
    }

    #[test]
    fn one_witness_on_each_core_stops_when_told() {
        let cores = allowed_cores();
        let witness = StallWitness::start();
        std::thread::sleep(Duration::from_millis(20));
        let stalls = witness.finish();
        assert_eq!(stalls.0.len(), cores.len());
        assert!(stalls.longest() < Duration::from_secs(1), "{stalls:?}");
    }
}
