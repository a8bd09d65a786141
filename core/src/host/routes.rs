//! The route table as routes are declared: every mistake found at the declaration that made
//! it, never as a panic when the app starts.
//!
//! Two declarations clash when they name the same method and template, and also when their
//! templates differ only in a parameter's name (`/users/{id}` and `/users/{name}` match the same
//! paths, so the router could not tell which parameter to fill). The second is what axum finds
//! when it builds its router and reports by panicking; here the same matcher (matchit, which
//! axum routes with) is asked at declaration, once per new template.

use crate::path::PathTemplate;
use http::Method;

#[derive(Default)]
pub(crate) struct RouteTable {
    declared: Vec<Entry>,
    matcher: matchit::Router<()>,
}

struct Entry {
    method: Method,
    template: String,
    matched_as: String,
}

impl RouteTable {
    /// Records `method template`, or says why it cannot be served next to the routes so far.
    pub(crate) fn admit(&mut self, method: &Method, template: &str, parsed: &PathTemplate) -> Result<(), String> {
        // A path the router cannot hold is matched by its expression, in declared order
        // (`pattern_routes`): two are the same route only when the expression is the same.
        let matched_as = parsed.pattern.as_deref().unwrap_or(parsed.axum_path.as_str());
        if let Some(same) = self.declared.iter().find(|e| e.matched_as == matched_as && e.method == *method) {
            return Err(if same.template == template {
                format!("{method} {template} is declared twice")
            } else {
                format!("{method} {template} is already declared as {} {}", same.method, same.template)
            });
        }
        if parsed.pattern.is_none() && !self.declared.iter().any(|e| e.matched_as == matched_as) {
            self.matcher.insert(matched_as, ()).map_err(|error| self.explain(template, error))?;
        }
        self.declared.push(Entry { method: method.clone(), template: template.to_owned(), matched_as: matched_as.to_owned() });
        Ok(())
    }

    fn explain(&self, template: &str, error: matchit::InsertError) -> String {
        match error {
            matchit::InsertError::Conflict { with } => {
                let earlier = self.declared.iter().find(|e| e.matched_as == with).map_or(with.as_str(), |e| e.template.as_str());
                format!(
                    "{template} matches the same paths as {earlier}, declared earlier; give a parameter in the same place the same name"
                )
            }
            other => format!("{template}: {other}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn admit(table: &mut RouteTable, method: Method, template: &str) -> Result<(), String> {
        table.admit(&method, template, &PathTemplate::parse(template)?)
    }

    #[test]
    fn one_template_takes_every_method_once() {
        let mut table = RouteTable::default();
        admit(&mut table, Method::GET, "/users/{id:int}").unwrap();
        admit(&mut table, Method::POST, "/users/{id:int}").unwrap();
        let twice = admit(&mut table, Method::GET, "/users/{id:int}").unwrap_err();
        assert_eq!(twice, "GET /users/{id:int} is declared twice");
        let alias = admit(&mut table, Method::GET, "/users/:id").unwrap_err();
        assert_eq!(alias, "GET /users/:id is already declared as GET /users/{id:int}");
    }

    #[test]
    fn differently_named_parameters_in_one_place_are_refused_whatever_the_method() {
        let mut table = RouteTable::default();
        admit(&mut table, Method::GET, "/users/{id}").unwrap();
        let clash = admit(&mut table, Method::DELETE, "/users/{name}").unwrap_err();
        assert!(clash.contains("matches the same paths as /users/{id}"), "{clash}");
        admit(&mut table, Method::GET, "/users/{id}/posts").unwrap();
        admit(&mut table, Method::GET, "/users/me").unwrap();
    }
}
