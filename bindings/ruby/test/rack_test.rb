# frozen_string_literal: true

# App#call(env): the app is a Rack application, so Rack::Test (Debian's ruby-rack-test) and
# Rack servers host it; requests run through the whole core without a socket.
require "minitest/autorun"
require "rack/test"
require_relative "support"

class RackTest < Minitest::Test
  include Rack::Test::Methods

  def app
    @app ||= begin
      app = Ferrule::App.new
      app.get("/users/{id:int}", query: { verbose: { type: "boolean", default: false } }) do |req|
        { id: req.params[:id], verbose: req.query[:verbose] }
      end
      app.post("/items", body: { type: "object", required: ["name"], properties: { name: { type: "string" } } }, status: 201) do |req|
        headers "set-cookie" => ["a=1", "b=2"]
        req.body
      end
      app.get("/old") { redirect "/new" }
      app
    end
  end

  def test_a_get_is_routed_validated_and_answered
    get "/users/7?verbose=true"
    assert_equal 200, last_response.status
    assert_equal({ "id" => 7, "verbose" => true }, JSON.parse(last_response.body))
    assert_equal "application/json", last_response.headers["content-type"]
  end

  def test_a_bad_request_is_a_problem_from_the_core
    get "/users/seven"
    assert_equal 422, last_response.status
    assert_equal "application/problem+json", last_response.headers["content-type"]
    assert_equal ["path", "id"], JSON.parse(last_response.body)["errors"][0]["loc"]
    get "/nowhere"
    assert_equal 404, last_response.status
  end

  def test_a_body_goes_in_and_repeated_headers_come_out
    post "/items", JSON.generate(name: "tea"), { "CONTENT_TYPE" => "application/json" }
    assert_equal 201, last_response.status
    assert_equal({ "name" => "tea" }, JSON.parse(last_response.body))
    assert_equal %w[a=1 b=2], last_response.headers["set-cookie"].split("\n").sort
    post "/items", "{}", { "CONTENT_TYPE" => "application/json" }
    assert_equal 422, last_response.status
  end

  # Found by a README-driven probe: mounted under a prefix, every route was a 404 (the core
  # matched SCRIPT_NAME + PATH_INFO); and a 204 named a type, which Rack::Lint refuses.
  def test_mounted_under_a_prefix_it_routes_on_path_info_and_passes_rack_lint
    inner = app
    inner.delete("/items/{id:int}", status: 204) { nil }
    mounted = Rack::Builder.new do
      use Rack::Lint
      map("/api") { run inner }
    end
    request = Rack::MockRequest.new(mounted)
    assert_equal [200, { "id" => 7, "verbose" => false }], [request.get("/api/users/7").status, JSON.parse(request.get("/api/users/7").body)]
    deleted = request.delete("/api/items/1")
    assert_equal [204, nil], [deleted.status, deleted.headers["content-type"]]
  end

  def test_redirects_are_followable
    get "/old"
    assert_equal 302, last_response.status
    # Absolute, as Sinatra's absolute_redirects makes it (it was "/new": found by a probe).
    assert_equal "http://example.org/new", last_response.headers["location"]
  end
end
