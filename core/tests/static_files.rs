//! Static files on a real socket: a 100 MB file is streamed from disk, whole or by range,
//! without the server holding it in memory.

use ferrule_core::{App, StaticSpec};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::time::Duration;

const SIZE: u64 = 100 * 1024 * 1024;

fn rss_kib() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let line = status.lines().find(|l| l.starts_with("VmRSS:")).unwrap();
    line.split_whitespace().nth(1).unwrap().parse().unwrap()
}

/// Sends `request`, returns the status line and headers, and reads the body in 64 KiB pieces
/// that are dropped as they come (counted, and the bytes at `probe` kept).
fn fetch(addr: std::net::SocketAddr, request: &str, probe: u64) -> (String, Vec<String>, u64, u8) {
    let stream = TcpStream::connect(addr).unwrap();
    stream.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    let mut writer = stream.try_clone().unwrap();
    writer.write_all(request.as_bytes()).unwrap();
    let mut reader = BufReader::with_capacity(64 * 1024, stream);
    let mut status = String::new();
    reader.read_line(&mut status).unwrap();
    let (mut headers, mut length) = (Vec::new(), 0u64);
    loop {
        let mut line = String::new();
        reader.read_line(&mut line).unwrap();
        if line == "\r\n" {
            break;
        }
        if let Some(v) = line.to_ascii_lowercase().strip_prefix("content-length:") {
            length = v.trim().parse().unwrap();
        }
        headers.push(line.trim().to_owned());
    }
    let (mut read, mut at_probe, mut chunk) = (0u64, 0u8, vec![0u8; 64 * 1024]);
    while read < length {
        let n = reader.read(&mut chunk[..((length - read) as usize).min(64 * 1024)]).unwrap();
        assert!(n > 0, "the body ended after {read} of {length} bytes");
        if (read..read + n as u64).contains(&probe) {
            at_probe = chunk[(probe - read) as usize];
        }
        read += n as u64;
    }
    (status.trim().to_owned(), headers, read, at_probe)
}

#[test]
fn a_100_mb_file_is_streamed_whole_and_by_range_without_being_held_in_memory() {
    let base = std::env::var_os("TEST_TMPDIR").map(std::path::PathBuf::from).unwrap_or_else(std::env::temp_dir);
    let dir = base.join(format!("ferrule-big-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = std::fs::File::create(dir.join("big.bin")).unwrap();
    file.set_len(SIZE).unwrap(); // sparse: reads as zeros, written at two places below
    std::os::unix::fs::FileExt::write_at(&file, b"M", SIZE / 2).unwrap();
    std::os::unix::fs::FileExt::write_at(&file, b"E", SIZE - 1).unwrap();

    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    let mut app = App::new();
    app.mount_static(StaticSpec::new("/files", dir.to_string_lossy())).unwrap();
    let server = runtime.block_on(async { app.serve(tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap()).await.unwrap() });
    let addr = server.local_addr();

    // Warm up the server's and allocator's steady state on a small range first.
    let (status, _, _, _) = fetch(addr, "GET /files/big.bin HTTP/1.1\r\nHost: t\r\nRange: bytes=0-9\r\n\r\n", 0);
    assert_eq!(status, "HTTP/1.1 206 Partial Content");
    let before = rss_kib();

    let (status, headers, read, end) = fetch(addr, "GET /files/big.bin HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n", SIZE - 1);
    assert_eq!(status, "HTTP/1.1 200 OK");
    assert_eq!((read, end), (SIZE, b'E'));
    assert!(headers.iter().any(|h| h.to_ascii_lowercase() == "accept-ranges: bytes"), "{headers:?}");

    let request = format!("GET /files/big.bin HTTP/1.1\r\nHost: t\r\nRange: bytes={}-{}\r\nConnection: close\r\n\r\n", SIZE / 2, SIZE / 2 + 99);
    let (status, headers, read, middle) = fetch(addr, &request, 0);
    assert_eq!((status.as_str(), read, middle), ("HTTP/1.1 206 Partial Content", 100, b'M'));
    let range = format!("content-range: bytes {}-{}/{SIZE}", SIZE / 2, SIZE / 2 + 99);
    assert!(headers.iter().any(|h| h.to_ascii_lowercase() == range), "{headers:?}");

    let grown = rss_kib().saturating_sub(before);
    println!("RSS grew by {grown} KiB serving {SIZE} bytes");
    assert!(grown < 8 * 1024, "serving a 100 MB file grew RSS by {grown} KiB");
    runtime.block_on(server.shutdown()).unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
}
