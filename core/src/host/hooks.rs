//! Route groups and the hooks a binding's language registers on them, as the host keeps them.
//!
//! A hook is a function of the binding's language (a Python callable, a JavaScript function, a
//! Ruby block); the core never calls one. What it decides, once for every language, is which
//! hooks a request meets and in which order, and which requests the core refused on its own
//! (a validation failure, a missing route) the language must see anyway:
//!
//! * Phases follow Fastify's order: `on_request` (first, for every request its group serves,
//!   refused ones included), `pre_handler` (after validation, with the typed request),
//!   `on_send` (may change the response), `on_error` (sees what a handler or hook raised).
//!   The binding runs a request's whole chain in the one crossing that runs its handler: a
//!   hook costs a call in the language, never another trip between threads.
//! * A group (Python's `APIRouter`, Fastify's `register` with a prefix, a Ruby `group`) has a
//!   path prefix and a parent; its routes meet the hooks of the app, then of each group down
//!   to theirs, each level in the order registered. A request no route matched meets the hooks
//!   of the deepest group whose prefix its path is under.
//! * A route's own hooks (Fastify's `preHandler` among a route's options) make a group of that
//!   one route ([`Groups::add_for_route`]): it runs them after its parents', and a request no
//!   route matched never meets them, whatever its path.
//! * A request the core refused (422, 415, 413, 400; 404 and 405 when no route takes it) is
//!   answered by the core, without entering the language, unless its group's hooks must see
//!   it (it has `on_request` or `on_send` hooks) or the binding's exception handlers or error
//!   hooks take its status ([`Catch`]). Only then is it handed over, as a [`super::Reject`].

use http::StatusCode;
use std::sync::Arc;

/// Where in a request's life a hook runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    OnRequest,
    PreHandler,
    OnSend,
    OnError,
}

impl Phase {
    /// `on_request`, `onRequest`, `pre_handler`, `preHandler`, …: each language's spelling.
    pub fn parse(name: &str) -> Result<Phase, String> {
        let folded: String = name.chars().filter(|c| *c != '_').flat_map(char::to_lowercase).collect();
        Ok(match folded.as_str() {
            "onrequest" => Phase::OnRequest,
            "prehandler" => Phase::PreHandler,
            "onsend" => Phase::OnSend,
            "onerror" => Phase::OnError,
            _ => return Err(crate::spec::unknown_option("hook", name, &["on_request", "pre_handler", "on_send", "on_error"])),
        })
    }
}

/// Which of the requests the core refuses the binding's exception handlers take.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Catch {
    /// Those refused with this status (Python's `exception_handler(404)`, Sinatra's `not_found`).
    Status(u16),
    /// Every one (a handler for the language's whole HTTP error class, Fastify's
    /// `setErrorHandler`).
    All,
    /// Every one that is a failure of the request itself (a 400, 413, 415, 422, …), not one no
    /// route takes (404, 405): what Fastify's `onError` hooks see, as Fastify sends those
    /// refusals as errors and a missing route as a plain 404 answer.
    Failures,
}

impl Catch {
    fn takes(self, status: StatusCode) -> bool {
        match self {
            Catch::Status(code) => code == status.as_u16(),
            Catch::All => true,
            Catch::Failures => status != StatusCode::NOT_FOUND && status != StatusCode::METHOD_NOT_ALLOWED,
        }
    }
}

/// A group of routes; [`GroupId::APP`] is the app itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct GroupId(usize);

impl GroupId {
    pub const APP: GroupId = GroupId(0);

    /// Its number, for a binding to hand to its language (a group unknown to the host is
    /// refused where it is used).
    pub fn index(self) -> usize {
        self.0
    }

    pub fn from_index(index: usize) -> GroupId {
        GroupId(index)
    }
}

/// The hooks one request meets, in order, as the binding's own slots (its list of hook
/// functions, indexed as it registered them).
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Hooks {
    pub on_request: Vec<u32>,
    pub pre_handler: Vec<u32>,
    pub on_send: Vec<u32>,
    pub on_error: Vec<u32>,
    catches: Vec<Catch>,
}

impl Hooks {
    /// No hook at all: the binding takes its plain path.
    pub fn is_empty(&self) -> bool {
        self.on_request.is_empty() && self.pre_handler.is_empty() && self.on_send.is_empty() && self.on_error.is_empty()
    }

    /// Whether a request refused with `status` must be handed to the language: its hooks see
    /// every request, or an exception handler takes that status.
    pub fn sees(&self, status: StatusCode) -> bool {
        !self.on_request.is_empty()
            || !self.on_send.is_empty()
            || self.catches.iter().any(|catch| catch.takes(status))
    }

    fn list(&mut self, phase: Phase) -> &mut Vec<u32> {
        match phase {
            Phase::OnRequest => &mut self.on_request,
            Phase::PreHandler => &mut self.pre_handler,
            Phase::OnSend => &mut self.on_send,
            Phase::OnError => &mut self.on_error,
        }
    }

    fn extend(&mut self, more: &Hooks) {
        self.on_request.extend(&more.on_request);
        self.pre_handler.extend(&more.pre_handler);
        self.on_send.extend(&more.on_send);
        self.on_error.extend(&more.on_error);
        self.catches.extend(&more.catches);
    }
}

#[derive(Debug, Clone)]
struct Group {
    parent: Option<usize>,
    /// The whole prefix from the app down (`/api/v1`); empty for the app.
    prefix: String,
    own: Hooks,
    /// A group of one route's own hooks: never the group of a request no route matched.
    one_route: bool,
}

/// Every group of an app, with the hooks registered on each.
#[derive(Debug, Clone)]
pub(crate) struct Groups {
    groups: Vec<Group>,
}

impl Default for Groups {
    fn default() -> Self {
        Groups { groups: vec![Group { parent: None, prefix: String::new(), own: Hooks::default(), one_route: false }] }
    }
}

impl Groups {
    /// A group under `parent` whose routes' paths start with `prefix` (`/admin`; a trailing
    /// `/` is dropped, an empty prefix shares the parent's).
    pub(crate) fn add(&mut self, parent: GroupId, prefix: &str) -> Result<GroupId, String> {
        let parent_prefix = &self.get(parent)?.prefix;
        let trimmed = prefix.trim_end_matches('/');
        if !trimmed.is_empty() && !trimmed.starts_with('/') {
            return Err(format!("a group's prefix starts with `/`, not `{prefix}`"));
        }
        if trimmed.contains(['{', '}', '?', '#']) {
            return Err(format!("a group's prefix is a plain path (no parameters, query or fragment), not `{prefix}`"));
        }
        // In the spelling request paths are matched in (`canonical_path`), as route templates are.
        let spelled = crate::canonical_path::canonical(trimmed);
        let group = Group {
            parent: Some(parent.0),
            prefix: format!("{parent_prefix}{}", spelled.as_deref().unwrap_or(trimmed)),
            own: Hooks::default(),
            one_route: false,
        };
        self.groups.push(group);
        Ok(GroupId(self.groups.len() - 1))
    }

    /// A group under `parent` for one route's own hooks, at the parent's prefix. Unlike a
    /// group of [`Groups::add`], a request no route matched never meets its hooks: they are
    /// that route's alone.
    pub(crate) fn add_for_route(&mut self, parent: GroupId) -> Result<GroupId, String> {
        let prefix = self.get(parent)?.prefix.clone();
        self.groups.push(Group { parent: Some(parent.0), prefix, own: Hooks::default(), one_route: true });
        Ok(GroupId(self.groups.len() - 1))
    }

    fn get(&self, group: GroupId) -> Result<&Group, String> {
        self.groups.get(group.0).ok_or_else(|| format!("no route group {}", group.0))
    }

    /// The path a route declared in `group` as `path` is served at.
    pub(crate) fn path(&self, group: GroupId, path: &str) -> Result<String, String> {
        let prefix = &self.get(group)?.prefix;
        Ok(match path {
            "" | "/" if !prefix.is_empty() => prefix.clone(),
            _ => format!("{prefix}{path}"),
        })
    }

    pub(crate) fn hook(&mut self, group: GroupId, phase: Phase, slot: u32) -> Result<(), String> {
        self.get(group)?;
        self.groups[group.0].own.list(phase).push(slot);
        Ok(())
    }

    pub(crate) fn catch(&mut self, group: GroupId, catch: Catch) -> Result<(), String> {
        self.get(group)?;
        let own = &mut self.groups[group.0].own.catches;
        if !own.contains(&catch) {
            own.push(catch);
        }
        Ok(())
    }

    /// The hooks a request of `group` meets: the app's first, then each group's down to it.
    pub(crate) fn resolve(&self, group: GroupId) -> Arc<Hooks> {
        let mut chain = Vec::new();
        let mut at = Some(group.0);
        while let Some(index) = at.filter(|i| *i < self.groups.len()) {
            chain.push(index);
            at = self.groups[index].parent;
        }
        let mut hooks = Hooks::default();
        for index in chain.into_iter().rev() {
            hooks.extend(&self.groups[index].own);
        }
        Arc::new(hooks)
    }

    /// The deepest group whose prefix `path` is under (at a segment boundary): the one whose
    /// hooks a request no route matched meets.
    pub(crate) fn for_path(&self, path: &str) -> GroupId {
        let under = |prefix: &str| path == prefix || (path.starts_with(prefix) && path.as_bytes().get(prefix.len()) == Some(&b'/'));
        let depth = |mut index: usize| {
            let mut depth = 0;
            while let Some(parent) = self.groups[index].parent {
                depth += 1;
                index = parent;
            }
            depth
        };
        (0..self.groups.len())
            .filter(|&i| !self.groups[i].one_route && (self.groups[i].prefix.is_empty() || under(&self.groups[i].prefix)))
            .max_by_key(|&i| (self.groups[i].prefix.len(), depth(i)))
            .map_or(GroupId::APP, GroupId)
    }

    /// Whether any group has any hook or catch: an app without them installs no fallback.
    pub(crate) fn is_empty(&self) -> bool {
        self.groups.iter().all(|g| g.own.is_empty() && g.own.catches.is_empty())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_route_meets_the_apps_hooks_then_each_groups_down_to_its_own_in_the_order_registered() {
        let mut groups = Groups::default();
        let api = groups.add(GroupId::APP, "/api").unwrap();
        let admin = groups.add(api, "/admin/").unwrap();
        groups.hook(admin, Phase::OnRequest, 3).unwrap();
        groups.hook(GroupId::APP, Phase::OnRequest, 1).unwrap();
        groups.hook(api, Phase::OnRequest, 2).unwrap();
        groups.hook(GroupId::APP, Phase::OnRequest, 0).unwrap();
        groups.hook(api, Phase::OnSend, 4).unwrap();
        assert_eq!(groups.resolve(admin).on_request, vec![1, 0, 2, 3]);
        assert_eq!(groups.resolve(admin).on_send, vec![4]);
        assert_eq!(groups.resolve(GroupId::APP).on_request, vec![1, 0]);
        assert_eq!(groups.path(admin, "/users").unwrap(), "/api/admin/users");
        assert_eq!(groups.path(admin, "/").unwrap(), "/api/admin");
        assert_eq!(groups.path(GroupId::APP, "/").unwrap(), "/");
    }

    #[test]
    fn sibling_groups_do_not_share_hooks_even_under_one_prefix() {
        let mut groups = Groups::default();
        let (one, two) = (groups.add(GroupId::APP, "").unwrap(), groups.add(GroupId::APP, "").unwrap());
        groups.hook(one, Phase::PreHandler, 7).unwrap();
        assert_eq!(groups.resolve(one).pre_handler, vec![7]);
        assert!(groups.resolve(two).is_empty());
    }

    #[test]
    fn an_unmatched_path_meets_the_deepest_group_it_is_under_at_a_segment_boundary() {
        let mut groups = Groups::default();
        let api = groups.add(GroupId::APP, "/api").unwrap();
        let v1 = groups.add(api, "/v1").unwrap();
        assert_eq!(groups.for_path("/api/v1/missing"), v1);
        assert_eq!(groups.for_path("/api/v1"), v1);
        assert_eq!(groups.for_path("/api/v10"), api);
        assert_eq!(groups.for_path("/apiary"), GroupId::APP);
        assert_eq!(groups.for_path("/"), GroupId::APP);
    }

    #[test]
    fn a_routes_own_hooks_come_after_its_scopes_and_never_meet_an_unmatched_request() {
        let mut groups = Groups::default();
        let api = groups.add(GroupId::APP, "/api").unwrap();
        groups.hook(api, Phase::OnRequest, 0).unwrap();
        let route = groups.add_for_route(api).unwrap();
        groups.hook(route, Phase::OnRequest, 1).unwrap();
        assert_eq!(groups.resolve(route).on_request, vec![0, 1]);
        assert_eq!(groups.path(route, "/items").unwrap(), "/api/items");
        // A group of the same prefix made by `add` would be chosen here (deeper than `api`).
        assert_eq!(groups.for_path("/api/missing"), api);
        let at_root = groups.add_for_route(GroupId::APP).unwrap();
        groups.hook(at_root, Phase::OnSend, 2).unwrap();
        assert_eq!(groups.for_path("/missing"), GroupId::APP);
        assert!(groups.add_for_route(GroupId(99)).unwrap_err().contains("no route group"));
    }

    #[test]
    fn a_refused_request_enters_the_language_only_when_something_there_must_see_it() {
        let mut groups = Groups::default();
        let quiet = groups.add(GroupId::APP, "/quiet").unwrap();
        let catching = groups.add(GroupId::APP, "/catching").unwrap();
        let hooked = groups.add(GroupId::APP, "/hooked").unwrap();
        groups.catch(catching, Catch::Status(404)).unwrap();
        groups.hook(hooked, Phase::OnSend, 0).unwrap();
        groups.hook(quiet, Phase::PreHandler, 1).unwrap();
        assert!(!groups.resolve(quiet).sees(StatusCode::UNPROCESSABLE_ENTITY), "a pre-handler hook never sees a refused request");
        assert!(groups.resolve(catching).sees(StatusCode::NOT_FOUND));
        assert!(!groups.resolve(catching).sees(StatusCode::UNPROCESSABLE_ENTITY));
        assert!(groups.resolve(hooked).sees(StatusCode::UNPROCESSABLE_ENTITY));
        groups.catch(GroupId::APP, Catch::All).unwrap();
        assert!(groups.resolve(quiet).sees(StatusCode::UNSUPPORTED_MEDIA_TYPE));
    }

    #[test]
    fn a_group_that_catches_failures_sees_a_refused_request_but_not_a_missing_route() {
        let mut groups = Groups::default();
        let api = groups.add(GroupId::APP, "/api").unwrap();
        let route = groups.add_for_route(GroupId::APP).unwrap();
        groups.catch(api, Catch::Failures).unwrap();
        groups.catch(route, Catch::Failures).unwrap();
        for group in [api, route] {
            for status in [StatusCode::BAD_REQUEST, StatusCode::PAYLOAD_TOO_LARGE, StatusCode::UNSUPPORTED_MEDIA_TYPE, StatusCode::UNPROCESSABLE_ENTITY] {
                assert!(groups.resolve(group).sees(status), "{status}");
            }
            assert!(!groups.resolve(group).sees(StatusCode::NOT_FOUND));
            assert!(!groups.resolve(group).sees(StatusCode::METHOD_NOT_ALLOWED));
        }
        assert!(!groups.resolve(GroupId::APP).sees(StatusCode::UNPROCESSABLE_ENTITY), "a group's catch is not its parent's");
    }

    #[test]
    fn a_prefix_is_a_plain_path() {
        let mut groups = Groups::default();
        assert!(groups.add(GroupId::APP, "admin").unwrap_err().contains("starts with `/`"));
        assert!(groups.add(GroupId::APP, "/users/{id}").unwrap_err().contains("plain path"));
        assert!(groups.add(GroupId(9), "/x").unwrap_err().contains("no route group"));
        assert_eq!(Phase::parse("preHandler").unwrap(), Phase::PreHandler);
        assert_eq!(Phase::parse("on_send").unwrap(), Phase::OnSend);
        assert!(Phase::parse("onSned").unwrap_err().contains("did you mean"));
    }
}
