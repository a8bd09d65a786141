use super::*;

fn queued(level: LogLevel) -> Logs {
    Logs::queued(level, LogWake::Doorbell).unwrap()
}

fn taken(logs: &Logs) -> Vec<LogRecord> {
    let mut records = Vec::new();
    logs.take(&mut records);
    records
}

#[test]
fn an_event_becomes_a_record_with_typed_fields() {
    let logs = queued(LogLevel::Info);
    logs.in_scope(|| tracing::info!(target: "ferrule::access", status = 201u64, took_ms = 1.5, route = "GET /x", "GET /x 201"));
    assert_eq!(
        taken(&logs),
        vec![LogRecord {
            level: LogLevel::Info,
            target: "ferrule::access",
            message: "GET /x 201".into(),
            fields: vec![("status", FieldValue::Uint(201)), ("took_ms", FieldValue::Float(1.5)), ("route", FieldValue::Text("GET /x".into()))],
        }]
    );
}

#[test]
fn records_below_the_level_and_other_crates_events_are_left_out() {
    let logs = queued(LogLevel::Warn);
    logs.in_scope(|| {
        tracing::info!(target: "ferrule::server", "below the level");
        tracing::error!(target: "h2::codec", "not ours");
        tracing::warn!(target: "ferrule::server", "kept");
    });
    let messages: Vec<String> = taken(&logs).into_iter().map(|r| r.message).collect();
    assert_eq!(messages, ["kept"]);

    let off = queued(LogLevel::Off);
    off.in_scope(|| tracing::error!(target: "ferrule::handler", "nothing at all"));
    assert!(taken(&off).is_empty());
}

#[test]
fn a_logger_that_falls_behind_loses_the_newest_records_and_is_told_how_many() {
    let logs = queued(LogLevel::Info);
    logs.in_scope(|| {
        for i in 0..QUEUE_LIMIT + 5 {
            tracing::info!(target: "ferrule::access", "request {i}");
        }
    });
    let records = taken(&logs);
    assert_eq!(records.len(), QUEUE_LIMIT + 1);
    assert_eq!(records[0].level, LogLevel::Warn);
    assert_eq!(records[0].fields, vec![("dropped", FieldValue::Uint(5))]);
    assert_eq!(records[1].message, "request 0");
    assert_eq!(records[QUEUE_LIMIT].message, format!("request {}", QUEUE_LIMIT - 1));
    // Drained, the queue takes records again, and the count starts over.
    logs.in_scope(|| tracing::info!(target: "ferrule::access", "again"));
    let again = taken(&logs);
    assert_eq!(again.len(), 1);
    assert_eq!(again[0].message, "again");
}

#[test]
fn each_runtime_thread_logs_to_its_own_app() {
    let (first, second) = (queued(LogLevel::Info), queued(LogLevel::Info));
    for (logs, name) in [(&first, "first"), (&second, "second")] {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .on_thread_start(logs.on_thread_start())
            .build()
            .unwrap();
        runtime.block_on(async move {
            tokio::spawn(async move { tracing::info!(target: "ferrule::server", "from {name}") }).await.unwrap();
        });
    }
    assert_eq!(taken(&first).iter().map(|r| r.message.as_str()).collect::<Vec<_>>(), ["from first"]);
    assert_eq!(taken(&second).iter().map(|r| r.message.as_str()).collect::<Vec<_>>(), ["from second"]);
}

#[test]
fn a_queued_record_rings_the_doorbell() {
    let logs = queued(LogLevel::Info);
    let fd = logs.doorbell_fd().unwrap();
    let readable = || {
        let mut poll = libc::pollfd { fd, events: libc::POLLIN, revents: 0 };
        // SAFETY: one live pollfd, a zero timeout.
        unsafe { libc::poll(&mut poll, 1, 0) == 1 }
    };
    assert!(!readable());
    logs.in_scope(|| tracing::warn!(target: "ferrule::server", "ring"));
    assert!(readable());
    taken(&logs);
    assert!(!readable());
}

#[test]
fn a_line_on_standard_error_is_the_message_after_the_prefix() {
    let record = LogRecord { level: LogLevel::Info, target: "ferrule::server", message: "serving on http://127.0.0.1:1".into(), fields: vec![] };
    let mut out = Vec::new();
    record.write_line(&mut out);
    assert_eq!(out, b"ferrule: serving on http://127.0.0.1:1\n");
    assert_eq!(record.logger_name(), "ferrule.server");
}
