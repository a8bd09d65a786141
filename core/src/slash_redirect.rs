//! `redirect_slashes`: a path no route takes, whose twin with the trailing slash added or taken
//! away is routed, is answered 307 to that twin, as Starlette's router answers (FastAPI's
//! default, so Python's binding turns it on). Fastify, Sinatra and axum answer 404, the core's
//! default.
//!
//! It is decided where the 404 would be, so a routed request never pays for it; a path no
//! route takes pays one more lookup in a matcher of the route templates (matchit, as axum
//! routes with), and any method is redirected (307 keeps the method and the body), as
//! Starlette does when only the method differs. The `Location` is the path (in the spelling
//! the router matches, `canonical_path`) and the query, relative: an absolute one would be
//! built from the client's `Host`. A twin with an empty or a dot segment is never a target:
//! `//host` is another host to a browser, and `.`/`..` are resolved by the client first.

use http::Uri;

pub(crate) struct SlashRedirect {
    matcher: matchit::Router<()>,
}

impl SlashRedirect {
    /// A redirect among `templates` (axum paths, `/users/{id}`); templates the matcher cannot
    /// hold beside the others are left out, as axum's router already refused them.
    pub(crate) fn new<'a>(templates: impl IntoIterator<Item = &'a str>) -> Self {
        let mut matcher = matchit::Router::new();
        for template in templates {
            let _ = matcher.insert(template, ());
        }
        SlashRedirect { matcher }
    }

    /// Where a request for `uri`, which no route takes, is sent instead, if anywhere.
    pub(crate) fn target(&self, uri: &Uri) -> Option<String> {
        let path = uri.path();
        let twin = match path.strip_suffix('/') {
            Some(_) => path.trim_end_matches('/').to_owned(),
            None => format!("{path}/"),
        };
        let inner = twin.strip_suffix('/').unwrap_or(&twin);
        let odd_segment = inner.split('/').skip(1).any(|segment| segment.is_empty() || segment == "." || segment == "..");
        if twin.is_empty() || odd_segment || twin.starts_with("/\\") || self.matcher.at(&twin).is_err() {
            return None;
        }
        Some(match uri.query() {
            Some(query) => format!("{twin}?{query}"),
            None => twin,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn target(templates: &[&str], uri: &str) -> Option<String> {
        SlashRedirect::new(templates.iter().copied()).target(&uri.parse().unwrap())
    }

    #[test]
    fn a_slash_is_taken_away_or_added_to_reach_a_route() {
        let routes = ["/items", "/users/{id}/", "/files/{*rest}"];
        assert_eq!(target(&routes, "/items/").as_deref(), Some("/items"));
        assert_eq!(target(&routes, "/items//").as_deref(), Some("/items"));
        assert_eq!(target(&routes, "/users/7").as_deref(), Some("/users/7/"));
        assert_eq!(target(&routes, "/items/?q=a%20b&n=1").as_deref(), Some("/items?q=a%20b&n=1"));
    }

    #[test]
    fn no_twin_routed_means_no_redirect() {
        assert_eq!(target(&["/items"], "/things/"), None);
        assert_eq!(target(&["/items"], "/"), None);
        assert_eq!(target(&["/"], "//"), None);
    }

    // `//evil.example` in a Location is another host to a browser: an open redirect.
    #[test]
    fn a_twin_that_names_another_host_is_never_a_target() {
        assert_eq!(target(&["/{*rest}"], "//evil.example/"), None);
        assert_eq!(target(&["/{a}/{b}"], "//evil.example"), None);
        // Found on review: matchit matches an empty segment, and a client resolves `.` first.
        assert_eq!(target(&["/{a}/{b}/{c}/"], "/.//evil.example"), None);
        assert_eq!(target(&["/{a}/{b}/"], "/x/.."), None);
    }
}
