//! A witness of the probe's own stalls: a thread that asks to sleep 1 ms, over and over, and
//! records each time it woke much later than asked.
//!
//! A `/health` sample's latency is measured by the probe, so it includes any time the probe
//! itself could not run: the machine (a virtual one, shared) paused, or its cores were taken.
//! The witness talks to no server, so whatever it overslept is not the server's doing. CI
//! failed slow-clients on Python at one 171 ms sample of 314 (limit 100), with the rest quick
//! (p95 1.2 ms) and the quiet run before it already slow (p95 3.1 ms, p99 9.7, against
//! 0.7 / 0.8 in a quiet run); the other languages' probes in the same run were quiet.
//!
//! Cost: a thousand wake-ups a second of a few microseconds each, well under 1% of a core.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// What the witness asks to sleep each time.
const TICK: Duration = Duration::from_millis(1);

/// How late a wake-up must be to count as a stall: the scheduler's own latency on a busy
/// shared core is a few milliseconds, which the bounds already allow for.
const STALL: Duration = Duration::from_millis(5);

/// The running witness; [`StallWitness::finish`] stops it and returns what it saw.
pub(super) struct StallWitness {
    stop: Arc<AtomicBool>,
    thread: std::thread::JoinHandle<Stalls>,
}

/// The intervals in which the witness should have been awake and was not.
#[derive(Debug, Default)]
pub(super) struct Stalls(Vec<(Instant, Instant)>);

impl StallWitness {
    pub(super) fn start() -> Self {
        let stop = Arc::new(AtomicBool::new(false));
        let stopped = stop.clone();
        let thread = std::thread::spawn(move || watch(&stopped, || std::thread::sleep(TICK)));
        Self { stop, thread }
    }

    /// Stops the witness (within a tick) and returns its stalls; none if its thread panicked.
    pub(super) fn finish(self) -> Stalls {
        self.stop.store(true, Ordering::Relaxed);
        self.thread.join().unwrap_or_default()
    }
}

/// Sleeps a tick (`sleep`) until `stop`, recording every wake-up later than [`STALL`] past due.
fn watch(stop: &AtomicBool, mut sleep: impl FnMut()) -> Stalls {
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
    Stalls(stalls)
}

impl Stalls {
    /// How much of `from..to` the witness spent stalled.
    pub(super) fn within(&self, from: Instant, to: Instant) -> Duration {
        self.0
            .iter()
            .map(|&(start, end)| {
                let (start, end) = (start.max(from), end.min(to));
                end.saturating_duration_since(start)
            })
            .sum()
    }

    /// The longest stall seen.
    pub(super) fn longest(&self) -> Duration {
        self.0.iter().map(|&(start, end)| end - start).max().unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_only_the_overlap_of_each_stall() {
        let t0 = Instant::now();
        let at = |ms: u64| t0 + Duration::from_millis(ms);
        let stalls = Stalls(vec![(at(10), at(30)), (at(50), at(60)), (at(100), at(200))]);
        assert_eq!(stalls.within(at(20), at(55)), Duration::from_millis(15));
        assert_eq!(stalls.within(at(30), at(50)), Duration::ZERO);
        assert_eq!(stalls.within(at(0), at(300)), Duration::from_millis(130));
        assert_eq!(stalls.longest(), Duration::from_millis(100));
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
        assert!(stalls.longest() >= Duration::from_millis(29), "{stalls:?}");
        assert!(stalls.0.len() <= 10, "{stalls:?}");
    }

    #[test]
    fn stops_when_told() {
        let witness = StallWitness::start();
        std::thread::sleep(Duration::from_millis(20));
        assert!(witness.finish().longest() < Duration::from_secs(1));
    }
}
