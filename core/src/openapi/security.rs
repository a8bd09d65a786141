//! Security schemes and requirements in the document: what the docs page's Authorize button
//! offers, and what a generated client sends. The core only describes them; credentials are
//! checked by the app (a hook, a dependency), as FastAPI's security dependencies and
//! @fastify/swagger's `security` leave it to the app.
//!
//! A scheme comes from the app's `security_schemes` or with a route (`RouteSpec::
//! security_schemes`: Python declares a security dependency's scheme where it is used, as
//! FastAPI collects them). One name means one scheme in the whole document, so a second,
//! different definition is refused when its route is declared, naming both places.

use crate::spec::{AppConfig, RouteSpec};
use serde_json::{Map, Value as Json};
use std::collections::BTreeMap;

/// Refuses a Security Scheme Object that OpenAPI 3.1 would not take, naming what is missing:
/// its `type`, and the field that type needs (`in` and `name` for `apiKey`, `scheme` for
/// `http`, `flows` for `oauth2`, `openIdConnectUrl` for `openIdConnect`).
pub(crate) fn check_scheme(name: &str, scheme: &Json) -> Result<(), String> {
    let Some(object) = scheme.as_object() else { return Err(format!("{name}: a security scheme is an object ({{\"type\": \"http\", \"scheme\": \"bearer\"}})")) };
    let text = |field: &str| object.get(field).and_then(Json::as_str);
    let needs = |field: &str, what: &str| -> Result<(), String> {
        match text(field) {
            Some(value) if !value.is_empty() => Ok(()),
            _ => Err(format!("{name}: an {} scheme needs \"{field}\" ({what})", text("type").unwrap_or_default())),
        }
    };
    match text("type") {
        Some("apiKey") => {
            needs("name", "the header, query parameter or cookie that carries the key")?;
            match text("in") {
                Some("header" | "query" | "cookie") => Ok(()),
                _ => Err(format!("{name}: an apiKey scheme needs \"in\": \"header\", \"query\" or \"cookie\"")),
            }
        }
        Some("http") => needs("scheme", "bearer, basic, …"),
        Some("oauth2") => match object.get("flows") {
            Some(Json::Object(flows)) if !flows.is_empty() => Ok(()),
            _ => Err(format!("{name}: an oauth2 scheme needs \"flows\" (password, clientCredentials, authorizationCode or implicit)")),
        },
        Some("openIdConnect") => needs("openIdConnectUrl", "the provider's discovery URL"),
        Some("mutualTLS") => Ok(()),
        other => Err(format!(
            "{name}: \"type\" must be apiKey, http, oauth2, openIdConnect or mutualTLS, not {}",
            other.map_or_else(|| "missing".to_owned(), |t| format!("`{t}`"))
        )),
    }
}

/// The document's `components.securitySchemes`: the app's, then each route's.
#[derive(Default)]
pub(crate) struct Schemes {
    by_name: BTreeMap<String, (Json, String)>,
}

impl Schemes {
    pub(crate) fn of_app(config: &AppConfig) -> Schemes {
        let by_name = config.security_schemes.iter().map(|(name, scheme)| (name.clone(), (scheme.clone(), "the app's security_schemes".to_owned()))).collect();
        Schemes { by_name }
    }

    /// Adds the schemes `spec` brings (checked), refusing a name another place defined otherwise.
    pub(crate) fn add_route(&mut self, spec: &RouteSpec) -> Result<(), String> {
        let label = format!("{} {}", spec.method.to_ascii_uppercase(), spec.path);
        for (name, scheme) in &spec.security_schemes {
            check_scheme(name, scheme).map_err(|e| format!("{label}: security scheme {e}"))?;
            match self.by_name.get(name) {
                Some((known, _)) if known == scheme => {}
                Some((_, place)) => return Err(format!("{label}: security scheme {name} is already defined otherwise, by {place}; one name is one scheme")),
                None => {
                    self.by_name.insert(name.clone(), (scheme.clone(), label.clone()));
                }
            }
        }
        Ok(())
    }

    /// Refuses a requirement of `spec` that names a scheme no one defines.
    pub(crate) fn check_requirements(&self, spec: &RouteSpec) -> Result<(), String> {
        for requirement in spec.security.iter().flatten() {
            if let Some(name) = requirement.keys().find(|name| !self.by_name.contains_key(*name)) {
                let known: Vec<&str> = self.by_name.keys().map(String::as_str).collect();
                let known = if known.is_empty() { "none is defined".to_owned() } else { format!("defined: {}", known.join(", ")) };
                return Err(format!("{} {}: security names the scheme {name}, which no security scheme of the app or the route defines ({known})", spec.method.to_ascii_uppercase(), spec.path));
            }
        }
        Ok(())
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.by_name.is_empty()
    }

    pub(crate) fn into_json(self) -> Json {
        Json::Object(self.by_name.into_iter().map(|(name, (scheme, _))| (name, scheme)).collect::<Map<String, Json>>())
    }
}

/// Checks `spec`'s schemes and requirements against the app's and those of `declared` (the
/// routes before it), so a mistake is reported by the declaration that made it.
pub(crate) fn check_route<'a>(config: &AppConfig, declared: impl IntoIterator<Item = &'a RouteSpec>, spec: &RouteSpec) -> Result<(), String> {
    if spec.security.is_none() && spec.security_schemes.is_empty() {
        return Ok(());
    }
    let mut schemes = Schemes::of_app(config);
    for earlier in declared {
        // Each was checked when declared: only its names matter here.
        let _ = schemes.add_route(earlier);
    }
    schemes.add_route(spec)?;
    schemes.check_requirements(spec)
}
