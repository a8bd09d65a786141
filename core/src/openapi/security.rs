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
            Some(Json::Object(flows)) if !flows.is_empty() => flows.iter().try_for_each(|(flow, body)| check_flow(name, flow, body)),
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

/// One OAuth2 flow: a name OpenAPI knows, the URLs that flow needs, and its `scopes` (an
/// object, `{}` for none).
fn check_flow(name: &str, flow: &str, body: &Json) -> Result<(), String> {
    let urls: &[&str] = match flow {
        "implicit" => &["authorizationUrl"],
        "password" | "clientCredentials" => &["tokenUrl"],
        "authorizationCode" => &["authorizationUrl", "tokenUrl"],
        other => return Err(format!("{name}: an oauth2 flow is implicit, password, clientCredentials or authorizationCode, not `{other}`")),
    };
    let Some(body) = body.as_object() else { return Err(format!("{name}: the {flow} flow is an object")) };
    if let Some(url) = urls.iter().find(|url| body.get(**url).and_then(Json::as_str).is_none_or(str::is_empty)) {
        return Err(format!("{name}: the {flow} flow needs \"{url}\""));
    }
    if !body.get("scopes").is_some_and(Json::is_object) {
        return Err(format!("{name}: the {flow} flow needs \"scopes\" (an object of scope names and descriptions, {{}} for none)"));
    }
    Ok(())
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
        self.check_schemes(spec)?;
        for (name, scheme) in &spec.security_schemes {
            if !self.by_name.contains_key(name) {
                self.by_name.insert(name.clone(), (scheme.clone(), label(spec)));
            }
        }
        Ok(())
    }

    /// A route being declared: its schemes and requirements checked against these (the app's
    /// and the routes' before it), its schemes kept only when all of it holds. One map kept
    /// as routes come, so a declaration costs what it brings, not what came before it.
    pub(crate) fn admit(&mut self, spec: &RouteSpec) -> Result<(), String> {
        if spec.security.is_none() && spec.security_schemes.is_empty() {
            return Ok(());
        }
        self.check_schemes(spec)?;
        self.check_requirements_with(spec, |name| spec.security_schemes.contains_key(name))?;
        self.add_route(spec)
    }

    fn check_schemes(&self, spec: &RouteSpec) -> Result<(), String> {
        for (name, scheme) in &spec.security_schemes {
            check_scheme(name, scheme).map_err(|e| format!("{}: security scheme {e}", label(spec)))?;
            if let Some((known, place)) = self.by_name.get(name) {
                if known != scheme {
                    return Err(format!("{}: security scheme {name} is already defined otherwise, by {place}; one name is one scheme", label(spec)));
                }
            }
        }
        Ok(())
    }

    /// Refuses a requirement of `spec` that names a scheme no one defines.
    pub(crate) fn check_requirements(&self, spec: &RouteSpec) -> Result<(), String> {
        self.check_requirements_with(spec, |_| false)
    }

    fn check_requirements_with(&self, spec: &RouteSpec, also_known: impl Fn(&str) -> bool) -> Result<(), String> {
        for requirement in spec.security.iter().flatten() {
            if let Some(name) = requirement.keys().find(|name| !self.by_name.contains_key(*name) && !also_known(name)) {
                let known: Vec<&str> = self.by_name.keys().map(String::as_str).collect();
                let known = if known.is_empty() { "none is defined".to_owned() } else { format!("defined: {}", known.join(", ")) };
                return Err(format!("{}: security names the scheme {name}, which no security scheme of the app or the route defines ({known})", label(spec)));
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

fn label(spec: &RouteSpec) -> String {
    format!("{} {}", spec.method.to_ascii_uppercase(), spec.path)
}
