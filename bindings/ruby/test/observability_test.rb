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

  def test_the_callers_trace_reaches_the_block
    get "/traced", {}, { "HTTP_TRACEPARENT" => TRACEPARENT }
    assert_equal({ "trace_id" => "4bf92f3577b34da6a3ce929d0e0e4736", "traceparent" => TRACEPARENT }, JSON.parse(last_response.body))
    get "/traced", {}, { "HTTP_TRACEPARENT" => "garbage" }
    assert_equal({ "trace_id" => nil, "traceparent" => nil }, JSON.parse(last_response.body))
  end
end
