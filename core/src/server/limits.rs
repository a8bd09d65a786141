//! What one connection may cost the server: the timeouts and caps of [`AppConfig`], resolved
//! once when the server starts.
//!
//! The defaults follow servers reverse-proxy operators already run (see the README's table):
//! hyper's 30 s for a request head, nginx's 60 s `send_timeout`, nginx's 75 s keep-alive (longer than the 60 s idle timeout
//! of common load balancers, so the balancer, not Ferrule, closes an idle upstream connection
//! first), and Kestrel's minimum body rate of 240 bytes/s after a grace period.

use crate::spec::AppConfig;
use std::time::Duration;

#[derive(Debug, Clone)]
pub(crate) struct ConnectionLimits {
    pub header_read: Option<Duration>,
    pub body_read: Option<Duration>,
    pub min_body_rate: u64,
    pub keep_alive: Option<Duration>,
    pub send: Option<Duration>,
    /// `max_connections`, capped by the descriptor limit less [`fd_reserve`].
    pub max_connections: usize,
    pub http2_max_concurrent_streams: u32,
    pub http2_max_header_list_size: u32,
    pub http2_keep_alive_interval: Option<Duration>,
    pub sse_keep_alive: Option<Duration>,
    /// `trusted_proxies`, `None` when no proxy is trusted: a connection from one of them has
    /// its requests' `X-Forwarded-*` read ([`crate::forwarded`]).
    pub proxies: Option<std::sync::Arc<crate::forwarded::TrustedProxies>>,
}

fn millis(ms: u64) -> Option<Duration> {
    (ms > 0).then(|| Duration::from_millis(ms))
}

impl ConnectionLimits {
    pub fn from_config(config: &AppConfig) -> Self {
        ConnectionLimits {
            header_read: millis(config.header_read_timeout_ms),
            body_read: millis(config.body_read_timeout_ms),
            min_body_rate: config.min_body_rate,
            keep_alive: millis(config.keep_alive_timeout_ms),
            send: millis(config.send_timeout_ms),
            max_connections: config.max_connections.min(descriptor_budget()).max(1),
            http2_max_concurrent_streams: config.http2_max_concurrent_streams,
            http2_max_header_list_size: u32::try_from(config.max_header_bytes).unwrap_or(u32::MAX),
            http2_keep_alive_interval: millis(config.http2_keep_alive_interval_ms),
            sse_keep_alive: millis(config.sse_keep_alive_ms),
            // A list that does not read was refused when the app was made (`AppConfig::check`).
            proxies: config.trusted_proxies().ok().flatten().map(std::sync::Arc::new),
        }
    }
}

/// Descriptors kept free of client connections: the process still needs some to answer
/// (log files, the interpreter's own files, an eventfd per worker) and to accept the
/// connection that makes an idle one give way.
pub(crate) fn fd_reserve(soft_limit: usize) -> usize {
    (soft_limit / 8).clamp(32, 1024)
}

/// How many connections the process's descriptor limit leaves room for.
fn descriptor_budget() -> usize {
    let mut limit = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
    // SAFETY: getrlimit writes one rlimit into a live, properly aligned struct.
    let soft = if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) } == 0 {
        usize::try_from(limit.rlim_cur).unwrap_or(usize::MAX)
    } else {
        1024
    };
    soft.saturating_sub(fd_reserve(soft)).max(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_common_1024_limit_keeps_an_eighth_free() {
        assert_eq!(fd_reserve(1024), 128);
        assert_eq!(fd_reserve(64), 32);
        assert_eq!(fd_reserve(1 << 20), 1024);
    }

    #[test]
    fn zero_switches_a_timeout_off() {
        let limits = ConnectionLimits::from_config(&AppConfig { keep_alive_timeout_ms: 0, ..Default::default() });
        assert_eq!(limits.keep_alive, None);
        assert_eq!(limits.header_read, Some(Duration::from_secs(30)));
    }
}
