//! CORS with preflight, from a [`CorsConfig`].

use crate::spec::CorsConfig;
use axum::extract::Request;
use futures_util::future::Either;
use http::{header, HeaderName, HeaderValue, Method, StatusCode};
use std::future::Future;
use std::pin::Pin;
use std::task::{ready, Context, Poll};
use std::time::Duration;
use tower::util::Oneshot;
use tower::{Layer, Service, ServiceExt};
use tower_http::cors::{AllowHeaders, AllowMethods, AllowOrigin, Cors, CorsLayer};

/// tower-http answers every OPTIONS request as a preflight. Per the Fetch standard (and
/// Starlette) a preflight also carries `Access-Control-Request-Method`; any other OPTIONS
/// request belongs to the route — a declared OPTIONS handler, or the 405 with `Allow`.
///
/// tower-http answers a preflight 200; `preflight_status` may ask for another 2xx (204, as
/// @fastify/cors answers), set on its answer here.
#[derive(Clone)]
pub(crate) struct PreflightAwareCors {
    layer: CorsLayer,
    preflight_status: Option<StatusCode>,
}

impl<S: Clone> Layer<S> for PreflightAwareCors {
    type Service = PreflightAware<S>;

    fn layer(&self, inner: S) -> Self::Service {
        PreflightAware { cors: self.layer.layer(inner.clone()), plain: inner, preflight_status: self.preflight_status }
    }
}

#[derive(Clone)]
pub(crate) struct PreflightAware<S> {
    cors: Cors<S>,
    plain: S,
    preflight_status: Option<StatusCode>,
}

fn is_plain_options(request: &Request) -> bool {
    request.method() == Method::OPTIONS && !request.headers().contains_key(header::ACCESS_CONTROL_REQUEST_METHOD)
}

impl<S> Service<Request> for PreflightAware<S>
where
    S: Service<Request, Response = axum::response::Response> + Clone,
{
    type Response = axum::response::Response;
    type Error = S::Error;
    type Future = Either<Oneshot<S, Request>, WithStatus<Oneshot<Cors<S>, Request>>>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        // Each call drives its own clone to readiness (`oneshot`), as axum's routes do.
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: Request) -> Self::Future {
        if is_plain_options(&request) {
            return Either::Left(self.plain.clone().oneshot(request));
        }
        // Only an OPTIONS request that is no plain one is a preflight, which tower-http
        // answers without the route.
        let status = self.preflight_status.filter(|_| request.method() == Method::OPTIONS);
        Either::Right(WithStatus { inner: self.cors.clone().oneshot(request), status })
    }
}

pin_project_lite::pin_project! {
    /// The inner answer, with `status` in place of its own when there is one.
    pub(crate) struct WithStatus<F> {
        #[pin]
        inner: F,
        status: Option<StatusCode>,
    }
}

impl<F, E> Future for WithStatus<F>
where
    F: Future<Output = Result<axum::response::Response, E>>,
{
    type Output = F::Output;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.project();
        let mut response = ready!(this.inner.poll(cx))?;
        if let Some(status) = *this.status {
            *response.status_mut() = status;
        }
        Poll::Ready(Ok(response))
    }
}

pub(crate) fn cors_layer(config: &CorsConfig) -> Result<PreflightAwareCors, String> {
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
        match &config.allow_origin_regex {
            None => AllowOrigin::list(origins),
            Some(pattern) => {
                // Whole, as Starlette's `re.fullmatch`: `https://.*\.example\.com` must not
                // let `https://a.example.com.evil.test` through.
                let whole = regex::Regex::new(&format!("^(?:{pattern})$")).map_err(|e| format!("CORS: allow_origin_regex {pattern:?} is not a regular expression: {e}"))?;
                AllowOrigin::predicate(move |origin: &HeaderValue, _| origins.contains(origin) || origin.to_str().is_ok_and(|text| whole.is_match(text)))
            }
        }
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
        .allow_credentials(config.allow_credentials)
        .allow_private_network(config.allow_private_network);
    if let Some(secs) = config.max_age_secs {
        layer = layer.max_age(Duration::from_secs(secs));
    }
    let preflight_status = match config.preflight_status {
        None | Some(200) => None,
        Some(code @ 201..=299) => StatusCode::from_u16(code).ok(),
        Some(code) => return Err(format!("CORS: preflight_status {code} is not a success status (200 to 299): a browser fails a preflight answered otherwise")),
    };
    Ok(PreflightAwareCors { layer, preflight_status })
}

fn header_names(names: &[String]) -> Result<Vec<HeaderName>, String> {
    names
        .iter()
        .map(|n| HeaderName::from_bytes(n.as_bytes()).map_err(|_| format!("CORS: invalid header name {n:?}")))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::routing::{get, MethodRouter};

    async fn send(request: http::Request<axum::body::Body>) -> axum::response::Response {
        let config = CorsConfig { allow_origins: vec!["https://a.example".into()], ..Default::default() };
        let methods: MethodRouter = get(|| async { "got" }).options(|| async { "options handler" });
        let service: MethodRouter = methods.layer(cors_layer(&config).unwrap());
        service.oneshot(request).await.unwrap()
    }

    async fn body(response: axum::response::Response) -> String {
        let bytes = http_body_util::BodyExt::collect(response.into_body()).await.unwrap().to_bytes();
        String::from_utf8(bytes.to_vec()).unwrap()
    }

    #[tokio::test]
    async fn an_origin_regex_admits_the_origins_it_matches_whole_besides_those_listed() {
        let config = CorsConfig { allow_origins: vec!["https://listed.test".into()], allow_origin_regex: Some(r"https://[a-z]+\.example\.com".into()), ..Default::default() };
        let service: MethodRouter = get(|| async { "got" }).layer(cors_layer(&config).unwrap());
        for (origin, admitted) in [
            ("https://app.example.com", true),
            ("https://listed.test", true),
            ("https://app.example.com.evil.test", false),
            ("http://app.example.com", false),
            ("https://example.com", false),
        ] {
            let request = http::Request::get("/").header("origin", origin).body(axum::body::Body::empty()).unwrap();
            let response = service.clone().oneshot(request).await.unwrap();
            assert_eq!(response.headers().get("access-control-allow-origin").map(|v| v.to_str().unwrap()), admitted.then_some(origin), "{origin}");
        }
        let bad = CorsConfig { allow_origin_regex: Some("(".into()), ..Default::default() };
        assert!(cors_layer(&bad).err().unwrap().contains("allow_origin_regex \"(\" is not a regular expression"));
    }

    #[tokio::test]
    async fn a_preflight_is_answered_by_cors() {
        let request = http::Request::options("/")
            .header("origin", "https://a.example")
            .header("access-control-request-method", "GET")
            .body(axum::body::Body::empty())
            .unwrap();
        let response = send(request).await;
        assert_eq!(response.status(), StatusCode::OK, "tower-http's and Starlette's status when none is asked for");
        assert_eq!(response.headers()["access-control-allow-origin"], "https://a.example");
        assert_eq!(body(response).await, "");
    }

    #[tokio::test]
    async fn a_preflight_takes_the_status_asked_for_and_other_answers_keep_theirs() {
        let config = CorsConfig { allow_origins: vec!["https://a.example".into()], preflight_status: Some(204), ..Default::default() };
        let methods: MethodRouter = get(|| async { "got" }).options(|| async { (StatusCode::ACCEPTED, "options handler") });
        let service: MethodRouter = methods.layer(cors_layer(&config).unwrap());
        let preflight = http::Request::options("/")
            .header("origin", "https://a.example")
            .header("access-control-request-method", "GET")
            .body(axum::body::Body::empty())
            .unwrap();
        let response = service.clone().oneshot(preflight).await.unwrap();
        assert_eq!(response.status(), StatusCode::NO_CONTENT);
        assert_eq!(response.headers()["access-control-allow-origin"], "https://a.example");
        let plain_options = http::Request::options("/").header("origin", "https://a.example").body(axum::body::Body::empty()).unwrap();
        assert_eq!(service.clone().oneshot(plain_options).await.unwrap().status(), StatusCode::ACCEPTED);
        let get = http::Request::get("/").header("origin", "https://a.example").body(axum::body::Body::empty()).unwrap();
        assert_eq!(service.oneshot(get).await.unwrap().status(), StatusCode::OK);
        for refused in [199, 300, 404] {
            let config = CorsConfig { preflight_status: Some(refused), ..Default::default() };
            let error = cors_layer(&config).err().unwrap();
            assert!(error.starts_with(&format!("CORS: preflight_status {refused} is not a success status")), "{error}");
        }
    }

    #[tokio::test]
    async fn other_options_requests_reach_the_route() {
        let request = http::Request::options("/").header("origin", "https://a.example").body(axum::body::Body::empty()).unwrap();
        assert_eq!(body(send(request).await).await, "options handler");
    }

    #[tokio::test]
    async fn simple_requests_get_cors_headers() {
        let request = http::Request::get("/").header("origin", "https://a.example").body(axum::body::Body::empty()).unwrap();
        let response = send(request).await;
        assert_eq!(response.headers()["access-control-allow-origin"], "https://a.example");
        assert_eq!(body(response).await, "got");
    }
}
