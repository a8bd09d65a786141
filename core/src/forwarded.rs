//! Trusted proxies (`trusted_proxies`): what a proxy in front of the server says about the
//! request it passed on (the client's address in `X-Forwarded-For`, the scheme the client used in
//! `X-Forwarded-Proto`, the host it asked for in `X-Forwarded-Host`), believed only from the
//! peers listed.
//!
//! Why: behind a proxy that ends TLS (nginx, a load balancer), every request comes from the
//! proxy over plain HTTP. An app that writes absolute links (a Sinatra redirect, Starlette's
//! `request.url`), sets cookies `Secure` by scheme, or limits clients by address sees only the
//! proxy (found by a Sinatra differential: a redirect went to `http://`). Believing those headers
//! from anyone would let any client choose its own address, so only listed peers are believed,
//! as uvicorn's `forwarded_allow_ips`, Fastify's `trustProxy` and Rack's trusted proxies do.
//!
//! The client is found as uvicorn and Fastify's proxy-addr find it: `X-Forwarded-For` is read
//! from the right (the nearest hop first), each address that is itself a trusted proxy is
//! stepped over, and the first that is not is the client; when every one is trusted, the
//! leftmost. An entry that is no address (`unknown`, an obfuscated name) ends the walk: the hop
//! before it is the client. The scheme and host are the last value (the one the nearest proxy
//! wrote), as Fastify reads them; a scheme other than `http`/`https` (`ws`/`wss` for a socket's
//! handshake) or a host that is no `host[:port]` is not believed.
//!
//! RFC 7239's `Forwarded` is not read: the proxies in use write `X-Forwarded-*`, and two
//! sources of the same facts are two ways for them to disagree.
//!
//! Cost: whether the peer is trusted is decided once per connection, so a peer that is not
//! (and every peer of an app without the setting) pays nothing per request. A trusted peer's
//! request pays one walk over its header names, and the reading of those it sent.

use http::HeaderMap;
use std::net::{IpAddr, SocketAddr};

/// What a trusted proxy said about the request it passed on ([`crate::RequestData::forwarded`]).
/// The client's address it named replaces the peer's in [`crate::RequestData::client`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Forwarded {
    /// `"https"` or `"http"`, from `X-Forwarded-Proto`; `None` when it named none it could.
    pub scheme: Option<&'static str>,
    /// The host (and port) the client asked for, from `X-Forwarded-Host`.
    pub host: Option<String>,
    /// The proxy the request came from (the connection's peer).
    pub proxy: SocketAddr,
}

/// `trusted_proxies`, read once.
#[derive(Debug, Clone, PartialEq)]
pub struct TrustedProxies {
    any: bool,
    networks: Vec<Network>,
}

#[derive(Debug, Clone, Copy, PartialEq)]
struct Network {
    address: IpAddr,
    prefix: u8,
}

impl Network {
    fn contains(&self, ip: IpAddr) -> bool {
        match (self.address, ip) {
            (IpAddr::V4(net), IpAddr::V4(ip)) => masked(u128::from(u32::from(net)), 32, self.prefix) == masked(u128::from(u32::from(ip)), 32, self.prefix),
            (IpAddr::V6(net), IpAddr::V6(ip)) => masked(u128::from(net), 128, self.prefix) == masked(u128::from(ip), 128, self.prefix),
            _ => false,
        }
    }
}

/// The top `prefix` bits of a `bits`-bit address.
fn masked(address: u128, bits: u8, prefix: u8) -> u128 {
    if prefix == 0 {
        0
    } else {
        address >> (bits - prefix)
    }
}

/// The names proxy-addr (Fastify, Express) gives to the usual ranges.
const NAMED: [(&str, &[&str]); 3] = [
    ("loopback", &["127.0.0.0/8", "::1/128"]),
    ("linklocal", &["169.254.0.0/16", "fe80::/10"]),
    ("uniquelocal", &["10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "fc00::/7"]),
];

impl TrustedProxies {
    /// Reads the list: addresses (`10.0.0.2`, `::1`), networks (`10.0.0.0/8`, `fd00::/8`), the
    /// names `loopback`, `linklocal` and `uniquelocal`, or `*` (every peer: only where nothing
    /// but the proxy can reach the server). Anything else is refused, naming it.
    pub fn new(entries: &[String]) -> Result<Self, String> {
        let mut trusted = TrustedProxies { any: false, networks: Vec::new() };
        // An entry may list several, comma-separated, as uvicorn's `FORWARDED_ALLOW_IPS` and
        // Fastify's `trustProxy` string do: split here, once for every binding.
        for entry in entries.iter().flat_map(|entry| entry.split(',')).map(str::trim).filter(|entry| !entry.is_empty()) {
            if entry == "*" {
                trusted.any = true;
            } else if let Some((_, ranges)) = NAMED.iter().find(|(name, _)| *name == entry) {
                trusted.networks.extend(ranges.iter().map(|range| network(range).expect("the named ranges are networks")));
            } else {
                let named = NAMED.map(|(name, _)| name).join(", ");
                trusted.networks.push(network(entry).ok_or_else(|| {
                    format!("trusted_proxies: `{entry}` is not an address, a network (`10.0.0.0/8`), `*` or one of {named}")
                })?);
            }
        }
        Ok(trusted)
    }

    /// Whether `ip` is a trusted proxy (an IPv4 peer of a dual-stack socket, `::ffff:10.0.0.2`,
    /// is read as the IPv4 address it is).
    pub fn trusts(&self, ip: IpAddr) -> bool {
        let ip = ip.to_canonical();
        self.any || self.networks.iter().any(|network| network.contains(ip))
    }

    /// What the headers of a request from the trusted `proxy` say: `None` when it sent none of
    /// them, else the client's address (`proxy`'s own when it named none) and what it said.
    pub fn read(&self, headers: &HeaderMap, proxy: SocketAddr) -> Option<(SocketAddr, Forwarded)> {
        let (mut for_, mut for_lines, mut proto, mut host) = (None, 0, None, None);
        for (name, value) in headers {
            // One walk: their names are long to hash, three times.
            let Some(rest) = name.as_str().strip_prefix("x-forwarded-") else { continue };
            match rest {
                "for" => {
                    for_.get_or_insert(value);
                    for_lines += 1;
                }
                "proto" => proto = Some(value),
                "host" => host = Some(value),
                _ => {}
            }
        }
        let client = match (for_, for_lines) {
            (None, _) if proto.is_none() && host.is_none() => return None,
            (None, _) => proxy.ip(),
            (Some(line), 1) => self.client_in(std::iter::once(line), proxy.ip()),
            // Every line of it: a proxy may add its own below the client's.
            (Some(_), _) => self.client_in(headers.get_all("x-forwarded-for").iter().rev(), proxy.ip()),
        };
        let forwarded = Forwarded {
            scheme: proto.and_then(|value| last_entry(value)).and_then(scheme_of),
            host: host.and_then(|value| last_entry(value)).filter(|host| is_authority(host)).map(str::to_owned),
            proxy,
        };
        Some((SocketAddr::new(client, 0), forwarded))
    }

    /// The client among `X-Forwarded-For`'s addresses (`lines` from the last), read from the right.
    fn client_in<'a>(&self, lines: impl Iterator<Item = &'a http::HeaderValue>, proxy: IpAddr) -> IpAddr {
        let mut client = proxy;
        let entries = lines.flat_map(|line| from_the_right(line.to_str().unwrap_or("")));
        for entry in entries {
            let Some(address) = address_of(entry.trim_ascii()) else { break };
            client = address.to_canonical();
            if !self.trusts(client) {
                break;
            }
        }
        client
    }
}

/// Puts what the trusted `proxy`'s request says on it: the client it names as the request's
/// [`crate::ClientAddr`], and [`Forwarded`] beside it. A request that says nothing is left as it is.
pub(crate) fn believe<B>(proxies: &TrustedProxies, request: &mut http::Request<B>, proxy: SocketAddr) {
    if let Some((client, forwarded)) = proxies.read(request.headers(), proxy) {
        request.extensions_mut().insert(crate::ClientAddr(client));
        request.extensions_mut().insert(forwarded);
    }
}

/// The forwarded facts a request came with ([`crate::RequestData::forwarded`]).
pub(crate) fn forwarded_of(parts: &http::request::Parts) -> Option<Forwarded> {
    parts.extensions.get::<Forwarded>().cloned()
}

/// A header's comma-separated values, the last first (untrimmed). By hand: `str::rsplit`
/// cost three times as many instructions on a short list.
fn from_the_right(text: &str) -> impl Iterator<Item = &str> {
    let mut end = Some(text.len());
    std::iter::from_fn(move || {
        let until = end?;
        match text.as_bytes()[..until].iter().rposition(|&b| b == b',') {
            Some(comma) => {
                end = Some(comma);
                Some(&text[comma + 1..until])
            }
            None => {
                end = None;
                Some(&text[..until])
            }
        }
    })
}

/// An address as `X-Forwarded-For` may write it: `10.0.0.1`, `2001:db8::1`, `[2001:db8::1]`,
/// or with a port (`10.0.0.1:4711`, `[2001:db8::1]:4711`), which some balancers add.
fn address_of(entry: &str) -> Option<IpAddr> {
    entry
        .parse::<IpAddr>()
        .ok()
        .or_else(|| entry.parse::<SocketAddr>().ok().map(|socket| socket.ip()))
        .or_else(|| entry.strip_prefix('[')?.strip_suffix(']')?.parse::<std::net::Ipv6Addr>().ok().map(IpAddr::V6))
}

/// `10.0.0.0/8`, `fd00::/8`, or an address alone (all its bits).
fn network(text: &str) -> Option<Network> {
    let (address, prefix) = match text.split_once('/') {
        Some((address, prefix)) => (address, Some(prefix)),
        None => (text, None),
    };
    let address = address.trim_start_matches('[').trim_end_matches(']').parse::<IpAddr>().ok()?.to_canonical();
    let bits = if address.is_ipv4() { 32 } else { 128 };
    let prefix = match prefix {
        Some(digits) if !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()) => digits.parse::<u8>().ok().filter(|p| *p <= bits)?,
        Some(_) => return None,
        None => bits,
    };
    Some(Network { address, prefix })
}

/// The last of a header's comma-separated values, trimmed; `None` when it is empty or no text.
fn last_entry(value: &http::HeaderValue) -> Option<&str> {
    let last = from_the_right(value.to_str().ok()?).next()?.trim_ascii();
    (!last.is_empty()).then_some(last)
}

fn scheme_of(value: &str) -> Option<&'static str> {
    ["https", "wss"].iter().any(|s| value.eq_ignore_ascii_case(s)).then_some("https").or_else(|| ["http", "ws"].iter().any(|s| value.eq_ignore_ascii_case(s)).then_some("http"))
}

/// Whether `host` is what a `Host` header may hold and a link may be made with: a name of
/// letters, digits, `-`, `.`, `_` and `~` (RFC 3986's unreserved characters), or an address in
/// brackets, and a port. Nothing that would end or change a URL (`/`, `@`, `?`, `#`, a space).
fn is_authority(host: &str) -> bool {
    let (name_is_one, after) = match host.strip_prefix('[') {
        Some(literal) => match literal.split_once(']') {
            Some((address, after)) => (address.parse::<std::net::Ipv6Addr>().is_ok(), after),
            None => return false,
        },
        None => {
            let end = host.find(':').unwrap_or(host.len());
            let name = &host[..end];
            (!name.is_empty() && name.bytes().all(|b| b.is_ascii_alphanumeric() || b"-._~".contains(&b)), &host[end..])
        }
    };
    let port_is_one = match after.strip_prefix(':') {
        None => after.is_empty(),
        Some(port) => (1..=5).contains(&port.len()) && port.bytes().all(|b| b.is_ascii_digit()),
    };
    name_is_one && port_is_one
}

#[cfg(test)]
mod tests {
    use super::*;

    fn trusted(entries: &[&str]) -> TrustedProxies {
        TrustedProxies::new(&entries.iter().map(|e| e.to_string()).collect::<Vec<_>>()).unwrap()
    }

    fn headers(pairs: &[(&str, &str)]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for (name, value) in pairs {
            map.append(http::HeaderName::from_bytes(name.as_bytes()).unwrap(), value.parse().unwrap());
        }
        map
    }

    const PROXY: &str = "10.0.0.2:50000";

    fn read(entries: &[&str], pairs: &[(&str, &str)]) -> Option<(SocketAddr, Forwarded)> {
        trusted(entries).read(&headers(pairs), PROXY.parse().unwrap())
    }

    fn client(entries: &[&str], for_: &[&str]) -> String {
        let pairs: Vec<_> = for_.iter().map(|line| ("x-forwarded-for", *line)).collect();
        read(entries, &pairs).unwrap().0.ip().to_string()
    }

    #[test]
    fn peers_are_trusted_by_address_network_or_name() {
        let list = trusted(&["10.0.0.2", "192.168.0.0/16", "fd00::/8", "loopback"]);
        for (ip, expected) in [
            ("10.0.0.2", true),
            ("10.0.0.3", false),
            ("192.168.44.1", true),
            ("192.169.0.1", false),
            ("fd12::1", true),
            ("fe12::1", false),
            ("127.0.0.1", true),
            ("127.9.9.9", true),
            ("::1", true),
            // An IPv4 peer of a dual-stack socket.
            ("::ffff:10.0.0.2", true),
            ("::ffff:10.0.0.3", false),
        ] {
            assert_eq!(list.trusts(ip.parse().unwrap()), expected, "{ip}");
        }
        assert!(trusted(&["*"]).trusts("203.0.113.9".parse().unwrap()));
        assert!(!trusted(&[]).trusts("127.0.0.1".parse().unwrap()));
        assert!(trusted(&["0.0.0.0/0"]).trusts("203.0.113.9".parse().unwrap()));
        assert!(trusted(&["uniquelocal"]).trusts("172.31.255.255".parse().unwrap()));
        assert!(!trusted(&["uniquelocal"]).trusts("172.32.0.0".parse().unwrap()));
    }

    #[test]
    fn an_entry_that_is_none_is_refused_naming_it() {
        for bad in ["10.0.0.0/33", "10.0.0.0/", "10.0.0.0/x", "localhost", "10.0.0", "::1/129"] {
            let error = TrustedProxies::new(&[bad.to_owned()]).unwrap_err();
            assert!(error.starts_with(&format!("trusted_proxies: `{bad}` is not an address")), "{error}");
        }
        let error = TrustedProxies::new(&["10.0.0.2, proxy.internal".to_owned()]).unwrap_err();
        assert!(error.starts_with("trusted_proxies: `proxy.internal` is not an address"), "{error}");
    }

    // Python and Node each split uvicorn's and Fastify's comma-separated spelling themselves.
    #[test]
    fn an_entry_may_list_several_comma_separated() {
        let list = trusted(&["10.0.0.2, 192.168.0.0/16,loopback", " , "]);
        for (ip, expected) in [("10.0.0.2", true), ("192.168.3.4", true), ("::1", true), ("10.0.0.3", false)] {
            assert_eq!(list.trusts(ip.parse().unwrap()), expected, "{ip}");
        }
        assert!(!trusted(&[" , "]).trusts("127.0.0.1".parse().unwrap()), "nothing listed, no one trusted");
    }

    #[test]
    fn the_client_is_the_first_address_from_the_right_that_is_no_trusted_proxy() {
        let list = ["10.0.0.0/8"];
        assert_eq!(client(&list, &["203.0.113.7"]), "203.0.113.7");
        // A client that writes its own header cannot choose its address: the proxy appended the real one.
        assert_eq!(client(&list, &["1.2.3.4, 203.0.113.7"]), "203.0.113.7");
        // Proxies of the list in between are stepped over, on one line or several.
        assert_eq!(client(&list, &["203.0.113.7, 10.0.0.9, 10.0.0.5"]), "203.0.113.7");
        assert_eq!(client(&list, &["198.51.100.1, 203.0.113.7", "10.0.0.9"]), "203.0.113.7");
        // Every one trusted: the leftmost.
        assert_eq!(client(&list, &["10.1.1.1, 10.0.0.9"]), "10.1.1.1");
        // Ports and brackets, as some balancers write them.
        assert_eq!(client(&list, &["203.0.113.7:4711"]), "203.0.113.7");
        assert_eq!(client(&list, &["[2001:db8::7]:4711"]), "2001:db8::7");
        assert_eq!(client(&list, &["[2001:db8::7]"]), "2001:db8::7");
        assert_eq!(client(&list, &["2001:db8::7"]), "2001:db8::7");
        // No address: the walk ends at the hop before it.
        assert_eq!(client(&list, &["203.0.113.7, unknown"]), "10.0.0.2");
        assert_eq!(client(&list, &["unknown, 10.0.0.9"]), "10.0.0.9");
        assert_eq!(client(&list, &["203.0.113.7, "]), "10.0.0.2");
        // With every peer trusted, the leftmost address is whatever the first hop wrote.
        assert_eq!(client(&["*"], &["1.2.3.4, 203.0.113.7"]), "1.2.3.4");
    }

    #[test]
    fn scheme_and_host_are_the_last_values_believed() {
        let (client, forwarded) = read(&["10.0.0.2"], &[("x-forwarded-proto", "https"), ("x-forwarded-host", "shop.example")]).unwrap();
        assert_eq!(client, "10.0.0.2:0".parse().unwrap(), "no For: the proxy is the client");
        assert_eq!(forwarded, Forwarded { scheme: Some("https"), host: Some("shop.example".into()), proxy: PROXY.parse().unwrap() });
        let (_, forwarded) = read(&["10.0.0.2"], &[("x-forwarded-proto", "http, HTTPS"), ("x-forwarded-host", "a.example, shop.example:8443")]).unwrap();
        assert_eq!((forwarded.scheme, forwarded.host.as_deref()), (Some("https"), Some("shop.example:8443")));
        assert_eq!(read(&["10.0.0.2"], &[("x-forwarded-proto", "wss")]).unwrap().1.scheme, Some("https"));
        for host in ["[2001:db8::1]:8443", "[::1]", "shop-1.example", "10.0.0.1:80", "xn--bcher-kva.example"] {
            assert_eq!(read(&["10.0.0.2"], &[("x-forwarded-host", host)]).unwrap().1.host.as_deref(), Some(host));
        }
        for (proto, host) in [("gopher", "evil.example/path"), ("", "user@evil.example"), ("https, ", "a b"), ("x", "a.example:"), ("x", "a.example:80:80"), ("x", "[::1"), ("x", "[nope]:80"), ("x", "a.example:123456"), ("x", "a%2fb")] {
            let (_, forwarded) = read(&["10.0.0.2"], &[("x-forwarded-proto", proto), ("x-forwarded-host", host)]).unwrap();
            assert_eq!((forwarded.scheme, forwarded.host), (None, None), "{proto} {host}");
        }
        assert_eq!(read(&["10.0.0.2"], &[("x-forwarded-port", "443"), ("host", "a.example")]), None, "none of the three");
    }
}
