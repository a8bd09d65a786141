//! The routes a radix tree cannot hold, matched by regular expression.
//!
//! matchit (axum's router, and the app's route table) holds a parameter only as a whole segment
//! and a catch-all only at the end. Starlette, find-my-way and Mustermann read more:
//! `/files/{name}.{ext}`, `/near/:lat-:lng`, find-my-way's `/at/:hour(^\d{2})h`, and Sinatra's
//! Regexp routes (`RouteSpec::pattern`). Each such path is one regular expression
//! (`PathTemplate::pattern`); its parameters are the expression's groups.
//!
//! Which route answers: Sinatra and Starlette try routes in the order they were declared, and
//! the first that matches the path (Sinatra: and takes the method) answers. Here the tree is
//! walked first, once, before axum's router (`route_table::RouteTable::find`), and its answer
//! says which template route takes the request's method and when it was declared
//! (`route_table::Claim`). An expression route declared before it that takes the method
//! answers instead ([`PatternRoutes::taking`]), as does any that takes it where the template's
//! routes do not. Where the tree has no template for the path ([`PatternRoutes::find`]), the
//! first declared that takes the method answers, else the first that matches answers with its
//! 405 and `Allow`. All of it before the router, whose fallback a static folder at `/` may be.
//!
//! Cost, measured with callgrind (a `GET /items/7` answered through `App::into_router`, release
//! build, 1,000 against 11,000 requests): an app without such routes looks at one `Option`.
//! With one, `Routed::call` (the tree's walk included) went from 1,513 to 1,612 instructions a
//! request when it was declared after the template, and to 1,635 when declared before it (its
//! expression tried on the path, and failing at the first segment); the whole request is about
//! 14,400. A path only these routes take pays the tree's miss, then one expression per route
//! until one matches (linear in the path: `regex` does not backtrack).

use crate::path_expression::PathExpression;
use crate::route::Captured;
use axum::routing::MethodRouter;
use http::Method;
use std::sync::Arc;

/// One expression's routes, by method (a method router with the path's own layers).
struct PatternGroup {
    expression: PathExpression,
    /// Each method with where its route was declared among the app's routes.
    methods: Vec<(Method, usize)>,
    router: MethodRouter,
}

/// A request's parameters as its expression matched them, for the route (see
/// [`Captured::Spans`]); carried to it in the request's extensions through its method router.
#[derive(Clone)]
pub(crate) struct PatternMatch {
    names: Arc<[Arc<str>]>,
    spans: Vec<(usize, usize)>,
}

impl PatternMatch {
    /// What the route reads its parameters from. A group that took no part in the match
    /// (`(\.json)?` without it) is no parameter.
    pub(crate) fn captured(self) -> Captured {
        Captured::Spans { names: self.names, spans: self.spans }
    }
}

#[derive(Default)]
pub(crate) struct PatternRoutes {
    groups: Vec<PatternGroup>,
}

impl PatternRoutes {
    /// `expression` is `PathTemplate::pattern`, anchored and with a group per parameter.
    pub(crate) fn push(&mut self, expression: &str, methods: Vec<(Method, usize)>, router: MethodRouter) -> Result<(), String> {
        let expression = PathExpression::new(expression)?;
        self.groups.push(PatternGroup { expression, methods, router });
        Ok(())
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.groups.is_empty()
    }

    /// The method router that answers `method` at `path`, with the parameters it matched,
    /// where no template matches it: the route declared first that takes the method, else the
    /// first expression that matches (its 405 names the methods it takes).
    pub(crate) fn find(&self, method: &Method, path: &str) -> Option<(MethodRouter, PatternMatch)> {
        self.taking(method, path, usize::MAX).or_else(|| {
            let group = self.groups.iter().find(|group| group.expression.is_match(path))?;
            Some((group.router.clone(), matched(group, path)?))
        })
    }

    /// The methods of every expression that matches `path`, as declared (a 405's `Allow`).
    pub(crate) fn methods_at(&self, path: &str) -> Vec<Method> {
        let matching = self.groups.iter().filter(|group| group.expression.is_match(path));
        matching.flat_map(|group| group.methods.iter().map(|(method, _)| method.clone())).collect()
    }

    /// The route declared first, and before `before`, that takes `method` and matches `path`.
    pub(crate) fn taking(&self, method: &Method, path: &str, before: usize) -> Option<(MethodRouter, PatternMatch)> {
        let mut first: Option<(usize, &PatternGroup)> = None;
        for group in &self.groups {
            let Some(order) = order_for(&group.methods, method).filter(|order| *order < before) else { continue };
            // An expression is tried only where it would come first.
            if first.is_some_and(|(earlier, _)| earlier < order) || !group.expression.is_match(path) {
                continue;
            }
            first = Some((order, group));
        }
        let (_, group) = first?;
        Some((group.router.clone(), matched(group, path)?))
    }
}

/// Where the route of `methods` that takes `method` was declared (a GET's takes HEAD, unless
/// a HEAD of its own is there).
pub(crate) fn order_for(methods: &[(Method, usize)], method: &Method) -> Option<usize> {
    let own = methods.iter().find(|(m, _)| m == method).map(|(_, order)| *order);
    own.or_else(|| (*method == Method::HEAD).then(|| methods.iter().find(|(m, _)| *m == Method::GET).map(|(_, order)| *order)).flatten())
}

fn matched(group: &PatternGroup, path: &str) -> Option<PatternMatch> {
    let all = group.expression.names();
    let mut names = Vec::with_capacity(all.len());
    let mut spans = Vec::with_capacity(all.len());
    for (name, found) in all.iter().zip(group.expression.spans(path)?) {
        if let Some(span) = found {
            names.push(name.clone());
            spans.push(span);
        }
    }
    let names = if names.len() == all.len() { all.clone() } else { names.into() };
    Some(PatternMatch { names, spans })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::path::PathTemplate;

    fn routes(templates: &[(&str, Method)]) -> PatternRoutes {
        let mut routes = PatternRoutes::default();
        for (template, method) in templates {
            let parsed = PathTemplate::parse(template).unwrap();
            routes.push(parsed.pattern.as_deref().expect("a pattern template"), vec![(method.clone(), 0)], MethodRouter::new()).unwrap();
        }
        routes
    }

    fn params(routes: &PatternRoutes, method: Method, path: &str) -> Option<Vec<(String, String)>> {
        let (_, found) = routes.find(&method, path)?;
        Some(found.names.iter().zip(&found.spans).map(|(name, &(start, len))| (name.to_string(), path[start..start + len].to_owned())).collect())
    }

    fn pairs(list: &[(&str, &str)]) -> Option<Vec<(String, String)>> {
        Some(list.iter().map(|(n, v)| ((*n).to_owned(), (*v).to_owned())).collect())
    }

    #[test]
    fn a_parameter_beside_text_is_greedy_as_starlette_mustermann_and_find_my_way_read_it() {
        let table = routes(&[("/files/{name}.{ext}", Method::GET), ("/near/:lat-:lng", Method::GET)]);
        assert_eq!(params(&table, Method::GET, "/files/a.b.c"), pairs(&[("name", "a.b"), ("ext", "c")]));
        assert_eq!(params(&table, Method::GET, "/near/-1.5--2.3"), pairs(&[("lat", "-1.5-"), ("lng", "2.3")]));
        assert_eq!(params(&table, Method::GET, "/files/abc"), None, "the dot is part of the path");
        assert_eq!(params(&table, Method::GET, "/files/a/b.c"), None, "a parameter is inside one segment");
    }

    #[test]
    fn a_parameter_with_an_expression_of_its_own_takes_only_what_it_matches() {
        let table = routes(&[("/at/:hour(^\\d{2})h:minute(^\\d{2}$)m", Method::GET), ("/img/:file(^\\d+).png", Method::GET)]);
        assert_eq!(params(&table, Method::GET, "/at/12h30m"), pairs(&[("hour", "12"), ("minute", "30")]));
        assert_eq!(params(&table, Method::GET, "/at/1h30m"), None);
        assert_eq!(params(&table, Method::GET, "/img/12.png"), pairs(&[("file", "12")]));
        assert_eq!(params(&table, Method::GET, "/img/12a.png"), None);
    }

    #[test]
    fn the_first_expression_that_takes_the_method_answers_else_the_first_that_matched() {
        let mut table = PatternRoutes::default();
        for (at, (expression, method)) in [(r"\A/a/(?P<x>[^/]+)\.txt\z", Method::POST), (r"\A/a/(?P<y>.+)\z", Method::GET)].into_iter().enumerate() {
            table.push(expression, vec![(method, at)], MethodRouter::new()).unwrap();
        }
        assert_eq!(params(&table, Method::GET, "/a/b.txt"), pairs(&[("y", "b.txt")]));
        assert_eq!(params(&table, Method::HEAD, "/a/b.txt"), pairs(&[("y", "b.txt")]), "a GET takes HEAD");
        assert_eq!(params(&table, Method::POST, "/a/b.txt"), pairs(&[("x", "b")]));
        assert_eq!(params(&table, Method::DELETE, "/a/b.txt"), pairs(&[("x", "b")]), "the first that matched answers its 405");
        assert_eq!(params(&table, Method::GET, "/b"), None);
    }

    #[test]
    fn groups_are_parameters_by_name_or_number_and_one_that_took_no_part_is_none() {
        let parsed = PathTemplate::from_pattern("%r{/hello}", r"/hello/(\w+)(\.json)?").unwrap();
        assert_eq!(parsed.params.iter().map(|p| p.name.as_str()).collect::<Vec<_>>(), ["1", "2"]);
        let mut table = PatternRoutes::default();
        table.push(parsed.pattern.as_deref().unwrap(), vec![(Method::GET, 0)], MethodRouter::new()).unwrap();
        assert_eq!(params(&table, Method::GET, "/hello/bob.json"), pairs(&[("1", "bob"), ("2", ".json")]));
        assert_eq!(params(&table, Method::GET, "/hello/bob"), pairs(&[("1", "bob")]));
        assert_eq!(params(&table, Method::GET, "/x/hello/bob"), None, "anchored at both ends");
        let error = PathTemplate::from_pattern("%r{/(?=x)}", "/(?=x)").unwrap_err();
        assert!(error.starts_with("%r{/(?=x)}: the pattern is not one this router reads: ") && !error.contains('\n'), "{error}");
    }
}
