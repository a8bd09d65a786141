//! The broadcast workload's client: `members` WebSockets join `/ws/room`; one of them sends a
//! numbered message, waits until every member (itself included) has it, and sends the next.
//! One message at a time keeps the measure honest: a round's deliveries are all the server's
//! fan-out work, and no queue grows on either side.
//!
//! A member counts only once the server has it in the room, which a 101 does not say (the
//! handler adds it after the upgrade): rounds before the measured ones are sent until one
//! reaches every member.

use super::client::{open, Outcome, WebSocket, ANSWER_WITHIN, SMALL};
use futures_util::stream::{SplitStream, StreamExt};
use futures_util::SinkExt;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;
use tokio::sync::{watch, Notify, Semaphore};
use tokio::time::Instant;
use tokio_tungstenite::tungstenite::Message;

/// Handshakes in progress at once: a thousand at one go overflow a listen backlog of 511
/// (Node's), and a dropped SYN is retried after a second.
const OPENING_AT_ONCE: usize = 100;
/// How long a round before the measured ones waits for members still joining.
const JOINING_ROUND: Duration = Duration::from_millis(500);
const JOINING_WITHIN: Duration = Duration::from_secs(20);

#[derive(Default)]
struct Round {
    number: u64,
    sent: Option<Instant>,
    measured: bool,
    arrived: usize,
}

struct Room {
    members: usize,
    round: Mutex<Round>,
    everyone_has_it: Notify,
}

impl Room {
    fn round(&self) -> MutexGuard<'_, Round> {
        self.round.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// A member received message `number`: its latency when that round is measured.
    fn arrived(&self, number: u64) -> Option<Duration> {
        let mut round = self.round();
        if round.number != number {
            return None; // a round given up on while members were joining
        }
        round.arrived += 1;
        if round.arrived == self.members {
            self.everyone_has_it.notify_one();
        }
        round.measured.then(|| round.sent.map(|sent| sent.elapsed())).flatten()
    }

    fn start(&self, number: u64, measured: bool) {
        *self.round() = Round { number, sent: Some(Instant::now()), measured, arrived: 0 };
    }

    /// Waits until every member has the current round's message; false after `within`.
    async fn everyone(&self, within: Duration) -> bool {
        let until = Instant::now() + within;
        loop {
            if self.round().arrived == self.members {
                return true;
            }
            // A permit left by a round given up on wakes this early; the count decides.
            if tokio::time::timeout_at(until, self.everyone_has_it.notified()).await.is_err() {
                return self.round().arrived == self.members;
            }
        }
    }
}

pub(super) async fn run(port: u16, members: usize, deadline: Instant) -> Vec<Outcome> {
    let room = Arc::new(Room { members, round: Mutex::default(), everyone_has_it: Notify::new() });
    let opening = Arc::new(Semaphore::new(OPENING_AT_ONCE));
    let (stop, stopped) = watch::channel(false);
    let joined: Vec<_> = (0..members)
        .map(|_| {
            let opening = opening.clone();
            tokio::spawn(async move {
                let _permit = opening.acquire_owned().await;
                open(port, "/ws/room").await
            })
        })
        .collect();
    let mut outcomes = Vec::new();
    let mut sender = None;
    let mut listening = Vec::new();
    for joining in joined {
        match joining.await.map_err(|e| e.to_string()).and_then(|opened| opened) {
            Ok(ws) => {
                let (sink, stream) = ws.split();
                sender.get_or_insert(sink);
                listening.push(tokio::spawn(listen(room.clone(), stream, stopped.clone())));
            }
            Err(failure) => outcomes.push(Outcome { failed: Some(failure), ..Default::default() }),
        }
    }
    if let Some(mut sender) = sender.filter(|_| outcomes.is_empty()) {
        let sending = async {
            let mut number = 0;
            let joining_until = Instant::now() + JOINING_WITHIN;
            loop {
                number += 1;
                room.start(number, false);
                sender.send(message(number)).await.map_err(|e| format!("send: {e}"))?;
                if room.everyone(JOINING_ROUND).await {
                    break;
                }
                if Instant::now() > joining_until {
                    return Err(format!("{} of {members} members had a message after 20 s of trying", room.round().arrived));
                }
            }
            // At least one measured round, even when joining took the whole run (a 1 s smoke
            // run, a slow peer): a room that fans out is measured, not "no message completed".
            loop {
                number += 1;
                room.start(number, true);
                sender.send(message(number)).await.map_err(|e| format!("send: {e}"))?;
                if !room.everyone(ANSWER_WITHIN).await {
                    return Err(format!("message {number} reached {} of {members} members in 10 s", room.round().arrived));
                }
                if Instant::now() >= deadline {
                    break;
                }
            }
            Ok(sender)
        };
        let sent = sending.await;
        let _ = stop.send(true); // before the close, whose answer would end a member's stream
        match sent {
            Ok(mut sender) => {
                let _ = sender.close().await;
            }
            Err(failure) => outcomes.push(Outcome { failed: Some(failure), ..Default::default() }),
        }
    }
    let _ = stop.send(true);
    for member in listening {
        outcomes.push(member.await.unwrap_or_else(|e| Outcome { failed: Some(e.to_string()), ..Default::default() }));
    }
    outcomes
}

fn message(number: u64) -> Message {
    Message::text(format!("{number:0>width$}", width = SMALL))
}

/// One member: counts the messages of measured rounds until told to stop.
async fn listen(room: Arc<Room>, mut stream: SplitStream<WebSocket>, mut stopped: watch::Receiver<bool>) -> Outcome {
    let mut outcome = Outcome::default();
    loop {
        let next = tokio::select! {
            biased; // told to stop first: the publisher's close follows the stop
            _ = stopped.wait_for(|stop| *stop) => break,
            next = stream.next() => next,
        };
        match next {
            Some(Ok(Message::Text(text))) => {
                let Ok(number) = text.parse::<u64>() else {
                    outcome.failed = Some(format!("a message that is not the room's: {text:?}"));
                    break;
                };
                if let Some(latency) = room.arrived(number) {
                    outcome.latencies.push(latency);
                    outcome.messages += 1;
                    outcome.bytes += text.len() as u64;
                }
            }
            Some(Ok(_)) => {}
            Some(Err(e)) => {
                outcome.failed = Some(format!("receive: {e}"));
                break;
            }
            None => {
                outcome.failed = Some("the server closed the connection".into());
                break;
            }
        }
    }
    outcome
}
