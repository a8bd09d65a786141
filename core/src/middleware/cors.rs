//! CORS with preflight, from a [`CorsConfig`].

use crate::spec::CorsConfig;
use http::{HeaderName, HeaderValue, Method};
use std::time::Duration;
use tower_http::cors::{AllowHeaders, AllowMethods, AllowOrigin, CorsLayer};

pub(crate) fn cors_layer(config: &CorsConfig) -> Result<CorsLayer, String> {
    let wildcard = |items: &[String]| items.iter().any(|i| i == "*");
    // With credentials, a literal `*` is not allowed by the Fetch standard; like Starlette,
    // answer with the request's own origin/method/headers instead.
    let origin = if wildcard(&config.allow_origins) {
        if config.allow_credentials { AllowOrigin::mirror_request() } else { AllowOrigin::any() }
    } else {
        let origins = config
            .allow_origins
            .iter()
            .map(|o| HeaderValue::from_str(o).map_err(|_| format!("CORS: invalid origin {o:?}")))
            .collect::<Result<Vec<_>, _>>()?;
        AllowOrigin::list(origins)
    };
    let methods = if wildcard(&config.allow_methods) {
        if config.allow_credentials { AllowMethods::mirror_request() } else { AllowMethods::any() }
    } else if config.allow_methods.is_empty() {
        AllowMethods::list([Method::GET, Method::HEAD, Method::POST])
    } else {
        let methods = config
            .allow_methods
            .iter()
            .map(|m| Method::from_bytes(m.to_ascii_uppercase().as_bytes()).map_err(|_| format!("CORS: invalid method {m:?}")))
            .collect::<Result<Vec<_>, _>>()?;
        AllowMethods::list(methods)
    };
    let headers = if wildcard(&config.allow_headers) {
        if config.allow_credentials { AllowHeaders::mirror_request() } else { AllowHeaders::any() }
    } else {
        AllowHeaders::list(header_names(&config.allow_headers)?)
    };
    let mut layer = CorsLayer::new()
        .allow_origin(origin)
        .allow_methods(methods)
        .allow_headers(headers)
        .expose_headers(header_names(&config.expose_headers)?)
        .allow_credentials(config.allow_credentials);
    if let Some(secs) = config.max_age_secs {
        layer = layer.max_age(Duration::from_secs(secs));
    }
    Ok(layer)
}

fn header_names(names: &[String]) -> Result<Vec<HeaderName>, String> {
    names
        .iter()
        .map(|n| HeaderName::from_bytes(n.as_bytes()).map_err(|_| format!("CORS: invalid header name {n:?}")))
        .collect()
}
