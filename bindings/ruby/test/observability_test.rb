# frozen_string_literal: true

# Prometheus metrics (metrics_url) and the caller's W3C trace (traceparent).
require "minitest/autorun"
require "rack/test"
require_relative "support"

class ObservabilityTest < Minitest::Test
  include Rack::Test::Methods

  TRACEPARENT = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"

  def app
    @app ||= begin
      app = Ferrule::App.new(metrics_url: "/metrics")
      app.get("/users/{id:int}") { |req| { id: req.params[:id] } }
      app.get("/traced") { |req| { trace_id: req.trace_id, traceparent: req.traceparent } }
      app
    end
  end

  def test_metrics_count_requests_by_route_and_show_the_interpreter_queue
    get "/users/1"
    get "/users/x"
    get "/metrics"
    assert_match(/\Aapplication\/openmetrics-text/, last_response.headers["content-type"])
    assert_includes last_response.body, 'ferrule_requests_total{route="/users/{id:int}",method="GET",status="200"} 1'
    assert_includes last_response.body, 'ferrule_requests_total{route="/users/{id:int}",method="GET",status="422"} 1'
    assert_includes last_response.body, "ferrule_interpreter_queue_depth"
  end

  def test_hooks_and_the_built_in_layers_add_no_call_into_ruby
    seen = []
    hooked = Ferrule::App.new(metrics_url: "/metrics", cors: { allow_origins: ["*"] }, compression: { min_size: 10 }, request_id: true)
    hooked.hook(:pre_handler) { |req| seen << req.path }
    hooked.get("/users/{id:int}") { |req| { id: req.params[:id], padding: "x" * 100 } }
    session = Rack::MockRequest.new(hooked)
    3.times do |id|
      served = session.get("/users/#{id}", "HTTP_ORIGIN" => "https://a.example", "HTTP_ACCEPT_ENCODING" => "gzip")
      assert_equal "gzip", served.headers["content-encoding"]
      assert_equal "*", served.headers["access-control-allow-origin"]
    end
    preflight = session.options("/users/1", "HTTP_ORIGIN" => "https://a.example", "HTTP_ACCESS_CONTROL_REQUEST_METHOD" => "GET")
    assert_equal 200, preflight.status
    assert_equal 422, session.get("/users/x").status
    scraped = session.get("/metrics")
    assert_equal ["/users/0", "/users/1", "/users/2"], seen
    # One call per handled request, the pre-handler hook within it; the preflight, the refusal
    # and the scrape were the core's alone.
    assert_includes scraped.body, "ferrule_interpreter_calls_total 3\n"
  end

  def test_the_callers_trace_reaches_the_block
    get "/traced", {}, { "HTTP_TRACEPARENT" => TRACEPARENT }
    assert_equal({ "trace_id" => "4bf92f3577b34da6a3ce929d0e0e4736", "traceparent" => TRACEPARENT }, JSON.parse(last_response.body))
    get "/traced", {}, { "HTTP_TRACEPARENT" => "garbage" }
    assert_equal({ "trace_id" => nil, "traceparent" => nil }, JSON.parse(last_response.body))
  end
end
