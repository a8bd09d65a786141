# frozen_string_literal: true

# What a Sinatra or Rack user tries on the first day, each of which once went wrong: :id
# segments, a route declared twice, a busy port, Rack triplets without a Content-Type, Rack 3
# header arrays, and statuses or headers that cannot be sent.
require "minitest/autorun"
require "open3"
require "socket"
require_relative "support"

class FirstDayTest < Minitest::Test
  include Support

  def test_a_colon_segment_is_a_parameter_and_a_clash_fails_where_it_is_declared
    app = Ferrule::App.new
    app.get("/users/:id") { |req| { id: req.params[:id] } }
    error = assert_raises(ArgumentError) { app.get("/users/{id}") { "again" } }
    assert_includes error.message, "GET /users/{id} is already declared as GET /users/:id"
    error = assert_raises(ArgumentError) { app.post("/users/{name}") { "other" } }
    assert_includes error.message, "matches the same paths as /users/:id"
    serving(app) { |port| assert_equal({ "id" => "ada" }, request(port, "GET", "/users/ada").json) }
  end

  def test_a_busy_port_raises_errno_eaddrinuse_with_or_without_workers
    holder = TCPServer.new("127.0.0.1", 0)
    port = holder.addr[1]
    app = Ferrule::App.new
    app.get("/") { "x" }
    error = assert_raises(Errno::EADDRINUSE) { app.serve(host: "127.0.0.1", port: port, signals: false) }
    assert_includes error.message, "ferrule: cannot listen on 127.0.0.1:#{port}: the port is in use"
    assert_raises(Errno::EADDRINUSE) { app.run(host: "127.0.0.1", port: port, workers: 2) }
  ensure
    holder&.close
  end

  def test_rack_triplets_get_a_content_type_and_header_arrays_repeat
    app = Ferrule::App.new
    app.get("/triplet") { [200, {}, ["hello ", "world"]] }
    app.get("/binary") { [200, {}, ["\xff\x00".b]] }
    app.get("/typed") { [201, { "content-type" => "text/html" }, ["<p>hi</p>"]] }
    app.get("/cookies") { [200, { "set-cookie" => ["a=1; Path=/", "b=2; Path=/"] }, ["ok"]] }
    app.get("/wraps") { raise Ferrule::HTTPError.new(65_736, "a 16-bit cast would send 200") }
    app.get("/bad-header") { [200, { "x-bad" => "a\rb" }, ["x"]] }
    app.get("/teapot") { raise Ferrule::HTTPError.new(418, "short and stout", headers: { "retry-after" => ["5"] }) }
    serving(app) do |port|
      triplet = request(port, "GET", "/triplet")
      assert_equal ["hello world", "text/plain; charset=utf-8"], [triplet.body, triplet.headers["content-type"]]
      assert_equal "application/octet-stream", request(port, "GET", "/binary").headers["content-type"]
      typed = request(port, "GET", "/typed")
      assert_equal [201, "text/html"], [typed.status, typed.headers["content-type"]]
      assert_equal ["a=1; Path=/", "b=2; Path=/"], request(port, "GET", "/cookies").fields["set-cookie"]
      %w[/wraps /bad-header].each do |path|
        failed = request(port, "GET", path)
        assert_equal 500, failed.status, path
        refute_includes failed.body, "16-bit"
      end
      teapot = request(port, "GET", "/teapot")
      assert_equal [418, "5", "short and stout"], [teapot.status, teapot.headers["retry-after"], teapot.json["detail"]]
    end
  end

  def helper_defined_outside = "outside"

  def test_blocks_set_status_and_headers_redirect_and_halt_as_in_sinatra
    app = Ferrule::App.new
    app.post("/items", status: 201) do |req|
      headers "x-id" => "7", "set-cookie" => ["a=1", "b=2"]
      { name: req.query[:name] || "none" }
    end
    app.get("/teapot") do
      status 418
      content_type :text
      "short and stout"
    end
    app.get("/old") { redirect "/new" }
    app.post("/old") { redirect "/new" }
    app.get("/secret") do |req|
      halt 401, { "www-authenticate" => "Bearer" }, "who?" unless req.header("authorization")
      "welcome"
    end
    app.get("/halt-triplet") { halt [409, { "x-why" => "conflict" }, ["taken"]] }
    app.get("/request") { request.path }
    app.get("/returns-response") do
      headers "x-extra" => "1"
      Ferrule::Response.new("built", status: 202, headers: { "x-own" => "2" })
    end
    serving(app) do |port|
      created = request(port, "POST", "/items")
      assert_equal [201, "7", ["a=1", "b=2"], { "name" => "none" }], [created.status, created.headers["x-id"], created.fields["set-cookie"], created.json]
      teapot = request(port, "GET", "/teapot")
      assert_equal [418, "text/plain; charset=utf-8", "short and stout"], [teapot.status, teapot.headers["content-type"], teapot.body]
      assert_equal [302, "http://127.0.0.1:#{port}/new"], [request(port, "GET", "/old").status, request(port, "GET", "/old").headers["location"]]
      assert_equal 303, request(port, "POST", "/old").status
      denied = request(port, "GET", "/secret")
      assert_equal [401, "Bearer", "who?"], [denied.status, denied.headers["www-authenticate"], denied.body]
      assert_equal "welcome", request(port, "GET", "/secret", headers: { "authorization" => "Bearer x" }).body
      conflict = request(port, "GET", "/halt-triplet")
      assert_equal [409, "conflict", "taken"], [conflict.status, conflict.headers["x-why"], conflict.body]
      assert_equal "/request", request(port, "GET", "/request").body
      built = request(port, "GET", "/returns-response")
      assert_equal [202, "1", "2", "built"], [built.status, built.headers["x-extra"], built.headers["x-own"], built.body]
    end
  end

  def test_a_misspelled_option_names_the_nearest
    error = assert_raises(ArgumentError) { Ferrule::App.new(body_limt: 5) }
    assert_equal "ferrule: unknown App setting body_limt (did you mean body_limit?)", error.message
    app = Ferrule::App.new
    error = assert_raises(ArgumentError) { app.post("/a", bodyy: { type: "object" }) { "x" } }
    assert_equal "ferrule: unknown route option for POST /a: bodyy (did you mean body?)", error.message
  end

  def test_the_access_log_writes_a_line_per_request_when_switched_on
    script = <<~RUBY
      require "ferrule"
      require "net/http"
      app = Ferrule::App.new(access_log: true)
      app.get("/n/{n:int}") { |req| { n: req.params[:n] } }
      ready = Queue.new
      server = Thread.new { app.serve(host: "127.0.0.1", port: 0, signals: false) { |port| ready << port } }
      port = ready.pop
      Net::HTTP.start("127.0.0.1", port) { |http| http.get("/n/3", "x-request-id" => "rid-7") }
      app.stop
      server.join
    RUBY
    _out, err, status = Open3.capture3(RbConfig.ruby, "-e", script)
    assert status.success?, err
    assert_match %r{^ferrule: GET /n/3 200 7B \d+\.\d\dms id=rid-7$}, err
  end
  # Sinatra code reads request.env["HTTP_AUTHORIZATION"], request.cookies["session"],
  # request.user_agent and JSON.parse(request.body.read) without declaring them: each was a
  # NoMethodError (a 500) or nil.
  def test_request_reads_as_sinatras_rack_request
    app = Ferrule::App.new
    app.before { halt 401, "who?" unless request.env["HTTP_AUTHORIZATION"] == "Bearer ok" }
    app.post("/notes/:id", headers: { "x-count": { type: "integer" } }) do |req|
      {
        data: JSON.parse(request.body.read), agent: request.user_agent, count: req.headers[:"x-count"],
        tag: req.headers["x-tag"], cookies: [request.cookies["session"], req.cookies[:theme]],
        env: request.env.values_at("REQUEST_METHOD", "PATH_INFO", "QUERY_STRING", "CONTENT_TYPE", "HTTP_X_TAG", "rack.input").tap { |v| v[-1] = v[-1].read },
        url: [request.url, request.host, request.port, request.fullpath, request.media_type, request.post?, request.xhr?]
      }
    end
    serving(app) do |port|
      assert_equal 401, request(port, "POST", "/notes/1", json: {}).status
      seen = request(port, "POST", "/notes/7?a=1", json: { "n" => 1 },
                                                   headers: { "authorization" => "Bearer ok", "user-agent" => "probe/1", "x-count" => "5", "x-tag" => "t",
                                                              "cookie" => "session=abc; theme=dark; theme=light" })
      assert_equal 200, seen.status, seen.body
      assert_equal({ "data" => { "n" => 1 }, "agent" => "probe/1", "count" => 5, "tag" => "t", "cookies" => %w[abc dark],
                     "env" => ["POST", "/notes/7", "a=1", "application/json", "t", '{"n":1}'],
                     "url" => ["http://127.0.0.1:#{port}/notes/7?a=1", "127.0.0.1", port, "/notes/7?a=1", "application/json", true, false] }, seen.json)
    end
  end
end
