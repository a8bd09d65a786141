# frozen_string_literal: true

# What a Sinatra or Rack user tries on the first day, each of which once went wrong: :id
# segments, a route declared twice, a busy port, Rack triplets without a Content-Type, Rack 3
# header arrays, and statuses or headers that cannot be sent.
require "minitest/autorun"
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
end
