//! Prometheus metrics (`metrics_url`, off by default), with the Prometheus project's own client
//! (`prometheus-client`), served by the core in the OpenMetrics text format:
//!
//! | metric | kind | labels |
//! |---|---|---|
//! | `ferrule_requests_total` | counter | `route` (the template; a static mount's `{prefix}/{*path}`; `unmatched` when no route took it), `method`, `status` |
//! | `ferrule_request_duration_seconds` | histogram (time to the response head) | `route`, `method` |
//! | `ferrule_requests_in_flight` | gauge | |
//! | `ferrule_interpreter_queue_depth` | gauge: requests handed to the language's interpreter, waiting or running | |
//! | `ferrule_interpreter_calls_total` | counter: requests handed to the language's interpreter | |
//!
//! The last counter shows what stays in Rust: a request meets its hooks in the language within
//! its one call, and the built-in layers (CORS, compression, request ids, limits, refusals the
//! core answers) add none, so it grows by one per request a handler answers and by none for a
//! preflight or a refused request that no hook or exception handler must see.
//!
//! Off, the layer is not in the stack and routes do not label their responses. On, a request
//! costs a clock read, two atomic updates, and two lookups of its label set in a map behind a
//! read lock (`Family`); a route's response carries its template as an extension for them.

use http::{Method, Request, Response};
use prometheus_client::encoding::{EncodeLabelSet, EncodeMetric};
use prometheus_client::metrics::counter::{ConstCounter, Counter};
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::{ConstGauge, Gauge};
use prometheus_client::metrics::histogram::Histogram;
use prometheus_client::registry::Registry;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Instant;
use tower::{Layer, Service};

/// The route template a response answered, set by the route for the metrics to label it by.
#[derive(Clone)]
pub(crate) struct RouteLabel(pub(crate) Arc<str>);

/// What the metrics read from the language's interpreter (a binding host's mailbox).
#[derive(Clone)]
pub struct InterpreterStats {
    /// How many requests wait for or run in it now.
    pub queue_depth: Arc<dyn Fn() -> i64 + Send + Sync>,
    /// How many requests were handed to it since the start.
    pub calls: Arc<dyn Fn() -> u64 + Send + Sync>,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct Answered {
    route: Arc<str>,
    method: &'static str,
    status: u16,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct Timed {
    route: Arc<str>,
    method: &'static str,
}

/// Latency buckets (seconds), from half a millisecond to ten seconds.
const BUCKETS: [f64; 14] = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0];

fn histogram() -> Histogram {
    Histogram::new(BUCKETS)
}

pub(crate) struct Metrics {
    registry: Registry,
    answered: Family<Answered, Counter>,
    timed: Family<Timed, Histogram, fn() -> Histogram>,
    in_flight: Gauge,
    unmatched: Arc<str>,
}

impl Metrics {
    pub(crate) fn new(interpreter: Option<InterpreterStats>) -> Arc<Metrics> {
        let mut registry = Registry::default();
        let answered = Family::<Answered, Counter>::default();
        let timed = Family::<Timed, Histogram, fn() -> Histogram>::new_with_constructor(histogram as fn() -> Histogram);
        let in_flight = Gauge::default();
        registry.register("ferrule_requests", "Requests answered, by route, method and status", answered.clone());
        registry.register("ferrule_request_duration_seconds", "Time to the response head, by route and method", timed.clone());
        registry.register("ferrule_requests_in_flight", "Requests being answered", in_flight.clone());
        if let Some(interpreter) = interpreter {
            registry.register_collector(Box::new(InterpreterCollector(interpreter)));
        }
        Arc::new(Metrics { registry, answered, timed, in_flight, unmatched: Arc::from("unmatched") })
    }

    /// The OpenMetrics text of every metric now.
    pub(crate) fn render(&self) -> String {
        let mut text = String::new();
        // Writing to a String cannot fail.
        let _ = prometheus_client::encoding::text::encode(&mut text, &self.registry);
        text
    }

    fn record(&self, route: Option<&RouteLabel>, method: &'static str, status: u16, took: std::time::Duration) {
        let route = route.map_or_else(|| self.unmatched.clone(), |label| label.0.clone());
        self.timed.get_or_create(&Timed { route: route.clone(), method }).observe(took.as_secs_f64());
        self.answered.get_or_create(&Answered { route, method, status }).inc();
    }
}

/// The content type of [`Metrics::render`].
pub(crate) const OPENMETRICS: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";

#[derive(Clone)]
struct InterpreterCollector(InterpreterStats);

impl std::fmt::Debug for InterpreterCollector {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("InterpreterCollector")
    }
}

impl prometheus_client::collector::Collector for InterpreterCollector {
    fn encode(&self, mut encoder: prometheus_client::encoding::DescriptorEncoder) -> Result<(), std::fmt::Error> {
        let gauge = ConstGauge::new((self.0.queue_depth)());
        let metric = encoder.encode_descriptor(
            "ferrule_interpreter_queue_depth",
            "Requests handed to the language's interpreter, waiting or running",
            None,
            gauge.metric_type(),
        )?;
        gauge.encode(metric)?;
        let calls = ConstCounter::new((self.0.calls)());
        let metric = encoder.encode_descriptor("ferrule_interpreter_calls", "Requests handed to the language's interpreter", None, calls.metric_type())?;
        calls.encode(metric)
    }
}

/// A method as a label: the standard ones by name, anything else as `OTHER` (a client's
/// invented methods must not grow the label space).
fn method_label(method: &Method) -> &'static str {
    match *method {
        Method::GET => "GET",
        Method::POST => "POST",
        Method::PUT => "PUT",
        Method::PATCH => "PATCH",
        Method::DELETE => "DELETE",
        Method::HEAD => "HEAD",
        Method::OPTIONS => "OPTIONS",
        _ => "OTHER",
    }
}

#[derive(Clone)]
pub(crate) struct MetricsLayer(pub(crate) Arc<Metrics>);

impl<S> Layer<S> for MetricsLayer {
    type Service = Measured<S>;

    fn layer(&self, inner: S) -> Self::Service {
        Measured { inner, metrics: self.0.clone() }
    }
}

#[derive(Clone)]
pub(crate) struct Measured<S> {
    inner: S,
    metrics: Arc<Metrics>,
}

/// Counts a request in flight until it is answered or given up.
struct InFlight(Gauge);

impl Drop for InFlight {
    fn drop(&mut self) {
        self.0.dec();
    }
}

impl<S, B, R> Service<Request<B>> for Measured<S>
where
    S: Service<Request<B>, Response = Response<R>>,
    S::Future: Send + 'static,
{
    type Response = S::Response;
    type Error = S::Error;
    type Future = Pin<Box<dyn Future<Output = Result<Self::Response, Self::Error>> + Send>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: Request<B>) -> Self::Future {
        let started = Instant::now();
        let method = method_label(request.method());
        self.metrics.in_flight.inc();
        let in_flight = InFlight(self.metrics.in_flight.clone());
        let metrics = self.metrics.clone();
        let answer = self.inner.call(request);
        Box::pin(async move {
            let _in_flight = in_flight;
            let response = answer.await?;
            metrics.record(response.extensions().get::<RouteLabel>(), method, response.status().as_u16(), started.elapsed());
            Ok(response)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_are_counted_by_route_method_and_status_and_timed() {
        let metrics = Metrics::new(Some(InterpreterStats { queue_depth: Arc::new(|| 3), calls: Arc::new(|| 41) }));
        let route = RouteLabel(Arc::from("/users/{id:int}"));
        metrics.record(Some(&route), "GET", 200, std::time::Duration::from_millis(2));
        metrics.record(Some(&route), "GET", 200, std::time::Duration::from_millis(30));
        metrics.record(None, "OTHER", 404, std::time::Duration::from_micros(100));
        let text = metrics.render();
        assert!(text.contains(r#"ferrule_requests_total{route="/users/{id:int}",method="GET",status="200"} 2"#), "{text}");
        assert!(text.contains(r#"ferrule_requests_total{route="unmatched",method="OTHER",status="404"} 1"#), "{text}");
        assert!(text.contains(r#"ferrule_request_duration_seconds_bucket{le="0.0025",route="/users/{id:int}",method="GET"} 1"#), "{text}");
        assert!(text.contains(r#"ferrule_request_duration_seconds_count{route="/users/{id:int}",method="GET"} 2"#), "{text}");
        assert!(text.contains("ferrule_requests_in_flight 0"), "{text}");
        assert!(text.contains("ferrule_interpreter_queue_depth 3"), "{text}");
        assert!(text.contains("# TYPE ferrule_interpreter_calls counter"), "{text}");
        assert!(text.contains("ferrule_interpreter_calls_total 41"), "{text}");
        assert!(text.ends_with("# EOF\n"));
    }

    #[test]
    fn invented_methods_share_one_label() {
        assert_eq!(method_label(&Method::from_bytes(b"BREW").unwrap()), "OTHER");
        assert_eq!(method_label(&Method::PATCH), "PATCH");
    }
}
