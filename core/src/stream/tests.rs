use super::*;
use futures_util::StreamExt;
use std::time::Duration;

fn text(event: Event) -> String {
    String::from_utf8(event.encode().unwrap().to_vec()).unwrap()
}

#[test]
fn data_is_split_on_every_kind_of_line_break() {
    assert_eq!(text(Event::data("one")), "data: one\n\n");
    assert_eq!(text(Event::data("a\nb\r\nc\rd")), "data: a\ndata: b\ndata: c\ndata: d\n\n");
    assert_eq!(text(Event::data("")), "data: \n\n", "empty data still dispatches an event");
    assert_eq!(text(Event::data("trailing\n")), "data: trailing\ndata: \n\n", "a client joins it back to the same text");
}

#[test]
fn fields_come_in_one_order_with_comments_first() {
    let event = Event::data("{\"n\":1}").with_name("tick").with_id("41").with_retry(Duration::from_millis(2500)).with_comment("hi\nthere");
    assert_eq!(text(event), ": hi\n: there\nevent: tick\nid: 41\nretry: 2500\ndata: {\"n\":1}\n\n");
    assert_eq!(text(Event::comment("")), ":\n\n");
}

#[test]
fn a_name_or_id_that_would_split_into_another_field_is_refused() {
    assert!(Event::data("x").with_name("a\nretry: 1").encode().is_err());
    assert!(Event::data("x").with_id("1\r").encode().is_err());
    assert!(Event::data("x").with_id("a\0b").encode().is_err(), "clients ignore an id holding NUL");
}

#[tokio::test]
async fn a_failure_ends_an_event_stream_but_cuts_a_byte_stream_off() {
    let failing = || futures_util::stream::iter([Ok::<_, BoxError>(Bytes::from_static(b"a")), Err("broken".into())]);
    let bytes: Vec<_> = BodyStream::new(failing()).logged("GET /".into(), false).collect().await;
    assert!(bytes[0].is_ok(), "the chunk before the failure is still sent");
    assert_eq!(bytes.len(), 2);
    assert!(bytes[1].is_err(), "the error reaches the connection, which cuts the response off");
    let events: Vec<_> = BodyStream::new(failing()).logged("GET /".into(), true).collect().await;
    assert_eq!(events.len(), 1, "the event stream ends after its last whole event");
    assert!(events[0].is_ok());
}

#[test]
fn a_batch_is_bounded_by_items_and_by_bytes() {
    let mut small = Batch::new();
    for _ in 0..batch::MAX_ITEMS {
        assert!(small.has_room());
        small.push(Bytes::from_static(b"x"));
    }
    assert!(!small.has_room(), "{} items fill it", batch::MAX_ITEMS);
    let mut large = Batch::new();
    large.push(Bytes::from(vec![0u8; batch::MAX_BYTES]));
    assert!(!large.has_room(), "{} bytes fill it", batch::MAX_BYTES);
    assert_eq!(large.into_chunks().len(), 1);
}

#[test]
fn an_event_field_outside_the_five_is_named_in_its_error() {
    assert!(EVENT_FIELDS.iter().all(|name| unknown_field(name).is_none()));
    let error = unknown_field("d").expect("refused");
    assert!(error.contains("no field \"d\"") && error.contains("give it as data"), "{error}");
    assert!(unknown_field("Data").is_some(), "names are exact, as in every language's own spelling");
}

// Found by a Fastify port and a Sinatra port: a stream's Content-Length was dropped, so a
// download showed no progress (and Ruby's send_file read whole files into memory to keep it).
#[tokio::test]
async fn a_declared_length_is_sent_and_the_stream_is_held_to_it() {
    use hyper::body::Body as _;
    let chunks = |parts: &'static [&'static [u8]]| futures_util::stream::iter(parts.iter().map(|p| Ok::<_, BoxError>(Bytes::from_static(p))));
    let declared = |parts: &'static [&'static [u8]], length: u64| {
        let mut stream = BodyStream::new(chunks(parts));
        stream.declare_length(length);
        stream.logged("GET /file".into(), false)
    };
    let exact: Vec<_> = declared(&[b"abc", b"de"], 5).collect().await;
    assert!(exact.iter().all(Result::is_ok) && exact.len() == 2);
    assert_eq!(declared(&[b"abc"], 3).into_body().size_hint().exact(), Some(3), "hyper sends it as Content-Length");
    let long: Vec<_> = declared(&[b"abc", b"de"], 4).collect().await;
    assert!(long[0].is_ok() && long.last().unwrap().is_err(), "a chunk past the length fails the stream");
    // More after the length is complete fails it too, before its last chunk goes out: hyper
    // stops asking once it has the length (found by a probe: 15 bytes for 10 sent 10, silently).
    let after: Vec<_> = declared(&[b"abcde", b"fghij", b"klmno"], 10).collect().await;
    assert_eq!(after.len(), 2, "{after:?}");
    assert!(after[0].is_ok() && after[1].is_err(), "{after:?}");
    let ended: Vec<_> = declared(&[b"abcde", b"fghij", b""], 10).collect().await;
    assert_eq!(ended.iter().map(|c| c.as_ref().map(|b| b.len()).unwrap_or(99)).collect::<Vec<_>>(), vec![5, 5], "an empty chunk is no more bytes");
    let short: Vec<_> = declared(&[b"ab"], 5).collect().await;
    assert!(short[0].is_ok() && short.last().unwrap().is_err(), "an end before the length fails it");
    // An event stream has no length.
    let mut events = BodyStream::new(chunks(&[b"data: x\n\n"]));
    events.declare_length(3);
    assert_eq!(events.logged("GET /e".into(), true).into_body().size_hint().exact(), None);
}
