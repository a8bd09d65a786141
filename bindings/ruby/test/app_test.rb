# frozen_string_literal: true

# The API: routes from options, typed request values, what each return value becomes on the
# wire, and failures (exceptions, unserialisable results, HTTPError).
require "minitest/autorun"
require_relative "support"

class AppTest < Minitest::Test
  include Support

  SECRET = "SECRET-TOKEN-42"
  ITEM = { type: "object", required: ["name"], properties: { name: { type: "string" }, price: { type: "number", minimum: 0, default: 1.5 } } }.freeze
  Point = Struct.new(:x, :y)

  def self.app
    @app ||= begin
      app = Ferrule::App.new(timeout_ms: 2000)
      app.get("/users/{id:int}", query: { verbose: { type: "boolean", default: false } }) do |req|
        { id: req.params[:id], id_class: req.params[:id].class.name, verbose: req.query[:verbose] }
      end
      app.get("/orders/{order:uuid}/{day:date}") { |req| { order: req.params[:order], day: req.params[:day], day_class: req.params[:day].class.name } }
      app.get("/search", query: { q: { type: "string", minLength: 2 }, page: { type: "integer", minimum: 1, default: 1 }, tags: { type: "array", items: { type: "string" }, required: false } },
                         headers: { "x-count" => { type: "integer", required: false } }) do |req|
        { query: req.query, headers: req.headers }
      end
      app.post("/items", body: ITEM, status: 201) { |req| req.body }
      app.post("/login", form: { type: "object", required: ["user"], properties: { user: { type: "string" }, remember: { type: "boolean", default: false } } }) { |req| req.body }
      app.post("/upload", multipart: { type: "object", required: ["file"], properties: { file: { type: "string", format: "binary" }, note: { type: "string" } } }) do |req|
        file = req.body[:file]
        { note: req.body[:note], filename: file.filename, type: file.content_type, size: file.size, head: file.data.byteslice(0, 2).unpack1("H*"), binary: file.data.encoding.to_s }
      end
      app.get("/text") { "plain words" }
      app.get("/bytes") { "\x00\x01\x02".b }
      app.get("/values") { { time: Time.utc(2024, 1, 15, 10, 30), date: Date.new(2024, 2, 29), sym: :on, big: 2**70, point: Point.new(1, 2.5), list: [nil, true, "x"] } }
      app.get("/explicit") { Ferrule::Response.new({ created: true }, status: 201, headers: { "x-custom" => "yes" }) }
      app.get("/html") { Ferrule::Response.new("<b>hi</b>", type: "text/html") }
      app.get("/rack") { [202, { "x-rack" => "1" }, ["a", "b"]] }
      app.get("/raises") { raise ArgumentError, "#{SECRET} connection string" }
      app.get("/opaque") { { thing: Object.new } }
      app.get("/nan") { { x: Float::NAN } }
      app.get("/missing/{id:int}") { |req| raise Ferrule::HTTPError.new(404, "No item #{req.params[:id]}", headers: { "x-reason" => "gone" }) }
      app.get("/slow") { sleep 5 }
      app
    end
  end

  def with_server(&block)
    serving(self.class.app, threads: 2, &block)
  end

  def test_template_types_and_query_defaults
    with_server do |port|
      assert_equal({ "id" => 7, "id_class" => "Integer", "verbose" => true }, request(port, "GET", "/users/7?verbose=yes").json)
      assert_equal({ "id" => 8, "id_class" => "Integer", "verbose" => false }, request(port, "GET", "/users/8").json)
    end
  end

  def test_uuid_and_date
    with_server do |port|
      reply = request(port, "GET", "/orders/550E8400-E29B-41D4-A716-446655440000/2024-02-29")
      assert_equal({ "order" => "550e8400-e29b-41d4-a716-446655440000", "day" => "2024-02-29", "day_class" => "Date" }, reply.json)
    end
  end

  def test_validation_errors_are_problems_located_in_rust
    with_server do |port|
      reply = request(port, "GET", "/search?q=a&page=0", headers: { "x-count" => "many" })
      assert_equal 422, reply.status
      assert_equal "application/problem+json", reply.headers["content-type"]
      types = reply.json["errors"].to_h { |e| [e["loc"].join("."), e["type"]] }
      assert_equal({ "query.q" => "string_too_short", "query.page" => "greater_than_equal", "header.x-count" => "int_parsing" }, types)
      ok = request(port, "GET", "/search?q=abc&tags=a&tags=b", headers: { "x-count" => "3" })
      assert_equal({ "query" => { "q" => "abc", "page" => 1, "tags" => %w[a b] }, "headers" => { "x-count" => 3 } }, ok.json)
    end
  end

  def test_bodies
    with_server do |port|
      created = request(port, "POST", "/items", json: { name: "pen" })
      assert_equal 201, created.status
      assert_equal({ "name" => "pen", "price" => 1.5 }, created.json)
      assert_equal 422, request(port, "POST", "/items", json: { price: -1 }).status
      form = request(port, "POST", "/login", body: "user=ada&remember=on", headers: { "content-type" => "application/x-www-form-urlencoded" })
      assert_equal({ "user" => "ada", "remember" => true }, form.json)
      boundary = "b0undary"
      payload = "--#{boundary}\r\nContent-Disposition: form-data; name=\"note\"\r\n\r\nhello\r\n" \
                "--#{boundary}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a.bin\"\r\nContent-Type: application/octet-stream\r\n\r\n".b +
                "\xff\x00\x10".b + "\r\n--#{boundary}--\r\n".b
      upload = request(port, "POST", "/upload", body: payload, headers: { "content-type" => "multipart/form-data; boundary=#{boundary}" })
      assert_equal({ "note" => "hello", "filename" => "a.bin", "type" => "application/octet-stream", "size" => 3, "head" => "ff00", "binary" => "ASCII-8BIT" }, upload.json)
    end
  end

  def test_return_values
    with_server do |port|
      text = request(port, "GET", "/text")
      assert_equal ["text/plain; charset=utf-8", "plain words"], [text.headers["content-type"], text.body]
      bytes = request(port, "GET", "/bytes")
      assert_equal ["application/octet-stream", "\x00\x01\x02".b], [bytes.headers["content-type"], bytes.body.b]
      values = request(port, "GET", "/values")
      assert_equal '{"time":"2024-01-15T10:30:00+00:00","date":"2024-02-29","sym":"on","big":1180591620717411303424,"point":{"x":1,"y":2.5},"list":[null,true,"x"]}', values.body
      explicit = request(port, "GET", "/explicit")
      assert_equal [201, "yes", { "created" => true }], [explicit.status, explicit.headers["x-custom"], explicit.json]
      assert_equal "text/html", request(port, "GET", "/html").headers["content-type"]
      rack = request(port, "GET", "/rack")
      assert_equal [202, "1", "ab"], [rack.status, rack.headers["x-rack"], rack.body]
    end
  end

  def test_failures_are_bare_500s_and_the_server_keeps_serving
    with_server do |port|
      %w[/raises /opaque /nan].each do |path|
        reply = request(port, "GET", path)
        assert_equal 500, reply.status, path
        assert_equal "application/problem+json", reply.headers["content-type"]
        refute_includes reply.body, SECRET
        refute_includes reply.body, "Object"
        assert_equal 200, request(port, "GET", "/users/1").status
      end
      missing = request(port, "GET", "/missing/9")
      assert_equal [404, "gone", "No item 9"], [missing.status, missing.headers["x-reason"], missing.json["detail"]]
      assert_equal 504, request(port, "GET", "/slow").status
    end
  end

  def test_bad_declarations_fail_where_they_are_made
    app = Ferrule::App.new
    assert_raises(ArgumentError) { app.route("BREW", "/tea") { "x" } }
    assert_raises(ArgumentError) { app.get("/x", body: {}, form: {}) { "x" } }
    assert_raises(ArgumentError) { Ferrule::App.new(colour: "red") }
    Ferrule::App.new(keep_alive_timeout_ms: 5000, send_timeout_ms: 1000)
    error = assert_raises(ArgumentError) { app.get("/y/{id:integer}") { "x" } }
    assert_match(/unknown type `integer`/, error.message)
  end
end
