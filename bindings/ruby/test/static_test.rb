# frozen_string_literal: true

# app.static(prefix, directory): files served by the core, as Sinatra's public folder is.
require "minitest/autorun"
require "rack/test"
require "tmpdir"
require_relative "support"

class StaticTest < Minitest::Test
  include Rack::Test::Methods

  def setup
    @base = Dir.mktmpdir("ferrule-static-", ENV["TEST_TMPDIR"])
    FileUtils.mkdir_p(File.join(@base, "public", "css"))
    File.write(File.join(@base, "public", "css", "site.css"), "body { color: red; }\n")
    File.write(File.join(@base, "public", "index.html"), "<h1>home</h1>")
    File.write(File.join(@base, "public", ".env"), "SECRET=1")
    File.write(File.join(@base, "secret.txt"), "outside")
    File.symlink(File.join(@base, "secret.txt"), File.join(@base, "public", "link.txt"))
  end

  def app
    @app ||= begin
      app = Ferrule::App.new
      app.static("/", File.join(@base, "public"), cache_control: "public, max-age=300")
      app.get("/api/ping") { { pong: true } }
      app.not_found { { missing: request.path } }
      app
    end
  end

  def test_files_are_served_with_validators_and_ranges
    get "/css/site.css"
    assert_equal [200, "body { color: red; }\n", "text/css; charset=utf-8"], [last_response.status, last_response.body, last_response.headers["content-type"]]
    assert_equal "public, max-age=300", last_response.headers["cache-control"]
    etag = last_response.headers["etag"]
    get "/css/site.css", {}, { "HTTP_IF_NONE_MATCH" => etag }
    assert_equal 304, last_response.status
    get "/css/site.css", {}, { "HTTP_RANGE" => "bytes=0-3" }
    assert_equal [206, "body"], [last_response.status, last_response.body]
    get "/"
    assert_equal "<h1>home</h1>", last_response.body
  end

  def test_routes_win_and_a_missing_file_meets_not_found
    get "/api/ping"
    assert_equal({ "pong" => true }, JSON.parse(last_response.body))
    get "/nope.js"
    assert_equal [404, { "missing" => "/nope.js" }], [last_response.status, JSON.parse(last_response.body)]
  end

  def test_climbing_out_and_hidden_files_are_refused
    ["/../secret.txt", "/%2e%2e/secret.txt", "/..%5csecret.txt", "/link.txt", "/.env", "/index.html%00.css"].each do |path|
      get path
      assert_equal 404, last_response.status, path
      refute_includes last_response.body, "outside"
      refute_includes last_response.body, "SECRET"
    end
  end

  def test_a_mount_that_cannot_work_is_refused_at_once
    error = assert_raises(ArgumentError) { Ferrule::App.new.static("/x", File.join(@base, "nope")) }
    assert_match(/cannot open directory/, error.message)
  end

  # Found by a README-driven probe: under `map "/api"`, /api/static/css went to /static/css/
  # (outside the mount, a 404); the app's own redirects keep the location they name.
  def test_a_directory_redirect_stays_under_the_rack_mount
    inner = Ferrule::App.new
    inner.static("/static", File.join(@base, "public"))
    inner.get("/elsewhere") { redirect "/static/css/" }
    mounted = Rack::Builder.new { map("/api") { run inner } }
    request = Rack::MockRequest.new(mounted)
    moved = request.get("/api/static/css?v=1")
    assert_equal [307, "/api/static/css/?v=1"], [moved.status, moved.headers["location"]]
    assert_equal 200, request.get("/api/static/css/site.css").status
    assert_equal "/static/css/", request.get("/api/elsewhere").headers["location"]
  end
end
