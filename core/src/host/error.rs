//! What can go wrong in the host, typed so that each binding raises its own language's
//! exception for it (a bad setting or route is the program's mistake: Python `ValueError`,
//! Node `TypeError`, Ruby `ArgumentError`; a socket that cannot be had is the machine's:
//! `OSError`, `Error` with `code`, `SystemCallError`), with one message in every language.

use std::fmt;

#[derive(Debug)]
pub enum HostError {
    /// An app setting that cannot work (unknown name, wrong type, impossible value).
    Settings(String),
    /// A route that cannot be served: its template, schemas or options, or a clash with an
    /// earlier route.
    Route(String),
    /// The listening socket could not be had (the port is in use, the address is not this
    /// machine's, an inherited descriptor is not a socket).
    Listen { addr: String, source: std::io::Error },
    /// `serve` on an app that is serving.
    AlreadyServing,
    /// The runtime or its threads could not start.
    Runtime(String),
}

impl HostError {
    /// The OS error number behind a `Listen` error (`EADDRINUSE`, ...), for bindings whose
    /// exceptions carry one.
    pub fn os_error(&self) -> Option<i32> {
        match self {
            HostError::Listen { source, .. } => source.raw_os_error(),
            _ => None,
        }
    }

    /// The POSIX name of a `Listen` error's cause (`EADDRINUSE`), as Node's errors carry it.
    pub fn os_code(&self) -> Option<&'static str> {
        let HostError::Listen { source, .. } = self else { return None };
        Some(match source.kind() {
            std::io::ErrorKind::AddrInUse => "EADDRINUSE",
            std::io::ErrorKind::AddrNotAvailable => "EADDRNOTAVAIL",
            std::io::ErrorKind::PermissionDenied => "EACCES",
            std::io::ErrorKind::InvalidInput => "EINVAL",
            _ => "EIO",
        })
    }

    /// A mistake in the program (settings, routes) rather than in its surroundings.
    pub fn is_usage(&self) -> bool {
        matches!(self, HostError::Settings(_) | HostError::Route(_))
    }
}

impl fmt::Display for HostError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            HostError::Settings(reason) => write!(f, "app settings: {reason}"),
            HostError::Route(reason) => f.write_str(reason),
            HostError::Listen { addr, source } if source.kind() == std::io::ErrorKind::AddrInUse => {
                write!(f, "cannot listen on {addr}: the port is in use by another process (stop it, or choose another port)")
            }
            HostError::Listen { addr, source } => write!(f, "cannot listen on {addr}: {source}"),
            HostError::AlreadyServing => f.write_str("this app is already serving"),
            HostError::Runtime(reason) => f.write_str(reason),
        }
    }
}

impl std::error::Error for HostError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            HostError::Listen { source, .. } => Some(source),
            _ => None,
        }
    }
}
