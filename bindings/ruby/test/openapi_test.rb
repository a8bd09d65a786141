# frozen_string_literal: true

# The OpenAPI document the core builds from the routes: served at /openapi.json to a real
# client, the same as app.openapi, with each route's summary, tags and schema names.
require "minitest/autorun"
require "open3"
require "tmpdir"
require_relative "support"

class OpenapiTest < Minitest::Test
  include Support

  def shop
    app = Ferrule::App.new(title: "Shop", version: "2.1", description: "Sells things.")
    user = { "title" => "User", "type" => "object", "properties" => { "name" => { "type" => "string" } }, "required" => ["name"] }
    app.get("/users/{id:int}", summary: "One user", tags: ["users"], query: { verbose: { "type" => "boolean", "default" => false } }) do |req|
      { id: req.params[:id] }
    end
    app.post("/users", body: user, description: "Creates a user.", operation_id: "createUser", deprecated: true) { |req| req.body }
    app.get("/internal", include_in_schema: false) { "hidden" }
    app
  end

  # The docs page's Authorize button needs the schemes and what each route asks of them; a
  # +before+ filter checks the credentials (found missing with the other languages' security).
  def test_security_requirements_name_the_apps_security_schemes
    app = Ferrule::App.new(security_schemes: { bearerAuth: { type: "http", scheme: "bearer" } })
    app.before("/me") { halt 401, { "WWW-Authenticate" => "Bearer" }, "" unless request.env["HTTP_AUTHORIZATION"].to_s.start_with?("Bearer ") }
    app.get("/me", security: [{ bearerAuth: [] }]) { { me: true } }
    app.get("/health", security: []) { "ok" }
    document = app.openapi
    assert_equal({ "bearerAuth" => { "type" => "http", "scheme" => "bearer" } }, document["components"]["securitySchemes"])
    assert_equal [{ "bearerAuth" => [] }], document["paths"]["/me"]["get"]["security"]
    assert_equal [], document["paths"]["/health"]["get"]["security"]
    serving(app) do |port|
      assert_equal 401, request(port, "GET", "/me").status
      assert_equal({ "me" => true }, request(port, "GET", "/me", headers: { "Authorization" => "Bearer t" }).json)
    end
    error = assert_raises(ArgumentError) { app.get("/x", security: [{ oauth: [] }]) { {} } }
    assert_match(/GET \/x: security names the scheme oauth, which no security scheme of the app or the route defines \(defined: bearerAuth\)/, error.message)
  end

  def test_the_served_document_is_app_openapi_and_describes_each_route
    app = shop
    document = app.openapi
    reply = serving(app) { |port| request(port, "GET", "/openapi.json") }
    assert_equal 200, reply.status
    assert_equal document, reply.json

    assert_equal({ "title" => "Shop", "version" => "2.1", "description" => "Sells things." }, document["info"])
    assert_equal ["/users", "/users/{id}"], document["paths"].keys.sort, "include_in_schema: false is left out"
    read = document["paths"]["/users/{id}"]["get"]
    assert_equal ["One user", ["users"]], [read["summary"], read["tags"]]
    assert_equal [
      { "name" => "id", "in" => "path", "required" => true, "schema" => { "type" => "integer" } },
      { "name" => "verbose", "in" => "query", "required" => false, "schema" => { "type" => "boolean", "default" => false } }
    ], read["parameters"]
    create = document["paths"]["/users"]["post"]
    assert_equal ["Creates a user.", "createUser", true], [create["description"], create["operationId"], create["deprecated"]]
    assert_equal({ "$ref" => "#/components/schemas/User" }, create["requestBody"]["content"]["application/json"]["schema"])
    assert_equal ["name"], document["components"]["schemas"]["User"]["required"]
    assert_equal "#/components/schemas/Problem", create["responses"]["422"]["content"]["application/problem+json"]["schema"]["$ref"]
  end

  # As Sinatra users write a Hash: in order. The core held schemas in sorted maps, so the docs
  # page listed `amount, item, zone` and a 422 reported `amount` first.
  def test_a_schema_keeps_the_order_it_was_written_in_for_the_document_and_the_errors
    app = Ferrule::App.new
    order = { type: "object", properties: { zone: { type: "string" }, item: { type: "string", minLength: 3 }, amount: { type: "integer", minimum: 1 } }, required: %w[zone item] }
    app.post("/orders", body: order) { |req| req.body }
    app.get("/a-status", query: { zeta: { type: "integer" }, alpha: { type: "integer", minimum: 5 } }) { "ok" }
    document = app.openapi
    assert_equal ["/orders", "/a-status"], document["paths"].keys
    assert_equal %w[zone item amount], document["paths"]["/orders"]["post"]["requestBody"]["content"]["application/json"]["schema"]["properties"].keys
    assert_equal %w[zeta alpha], document["paths"]["/a-status"]["get"]["parameters"].map { |p| p["name"] }
    serving(app) do |port|
      refused = request(port, "POST", "/orders", json: { amount: 0, item: "x" })
      assert_equal [%w[missing body.zone], %w[string_too_short body.item], %w[greater_than_equal body.amount]], refused.json["errors"].map { |e| [e["type"], e["loc"].join(".")] }
      query = request(port, "GET", "/a-status?alpha=1&zeta=z")
      assert_equal [%w[int_parsing query.zeta], %w[greater_than_equal query.alpha]], query.json["errors"].map { |e| [e["type"], e["loc"].join(".")] }
    end
  end

  def test_an_arrays_openapi_style_rides_in_its_schema_hash
    app = Ferrule::App.new
    app.get("/find", query: { ids: { "type" => "array", "items" => { "type" => "integer" }, "style" => "pipeDelimited", "required" => false },
                              tags: { "type" => "array", "items" => { "type" => "string" }, "default" => [] } }) { |req| req.query }
    reply = serving(app) { |port| request(port, "GET", "/find?ids=1|2&tags[]=a&tags[]=b") }
    assert_equal({ "ids" => [1, 2], "tags" => %w[a b] }, reply.json)
    ids = app.openapi["paths"]["/find"]["get"]["parameters"].first
    assert_equal({ "name" => "ids", "in" => "query", "required" => false, "style" => "pipeDelimited",
                   "schema" => { "type" => "array", "items" => { "type" => "integer" } } }, ids)
  end

  # Runs the installed gem's `ferrule` command; killed if it has not exited in 30 s.
  def ferrule_command(*args)
    ferrule = File.join(ENV.fetch("GEM_HOME"), "bin", "ferrule")
    Open3.popen3(ferrule, *args) do |stdin, stdout, stderr, wait|
      stdin.close
      out = Thread.new { stdout.read }
      err = Thread.new { stderr.read }
      unless wait.join(30)
        Process.kill("KILL", wait.pid)
        flunk "ferrule #{args.join(' ')} did not exit"
      end
      [out.value, err.value, wait.value]
    end
  end

  def test_the_ferrule_command_prints_the_document_without_serving
    app_source = <<~RUBY
      require "ferrule"
      app = Ferrule::App.new(title: "Shop")
      app.get("/items/{id:int}", summary: "One item", response: { "title" => "Item", "type" => "object" }) { |req| { id: req.params[:id] } }
    RUBY
    expected = Ferrule::App.new(title: "Shop")
    expected.get("/items/{id:int}", summary: "One item", response: { "title" => "Item", "type" => "object" }) { nil }
    # A class-style app serves only when it is the program, or is given to Rack as a class:
    # loading its file made no instance, and the command found no app.
    shop = <<~RUBY
      require "ferrule"
      class Base < Ferrule::App
        set :title, "Shop"
      end
      class Shop < Base
        get("/items/{id:int}", summary: "One item", response: { "title" => "Item", "type" => "object" }) { |req| { id: req.params[:id] } }
      end
    RUBY
    Dir.mktmpdir do |dir|
      # A rackup file too: before, `run` was undefined outside Rack::Builder and the command failed.
      files = {
        "runs.rb" => "#{app_source}app.run(port: 0)\n", "makes.rb" => app_source, "config.ru" => "#{app_source}use Rack::ContentLength\nrun app\n",
        "shop.rb" => "#{shop}Shop.run!(port: 0) if $PROGRAM_NAME == __FILE__\n", "classes.ru" => "#{shop}run Shop\n"
      }
      files.each do |name, source|
        File.write(File.join(dir, name), source)
        out, err, status = ferrule_command("openapi", File.join(dir, name))
        assert status.success?, "#{name}: #{err}"
        assert_equal expected.openapi, JSON.parse(out), name
      end
      File.write(File.join(dir, "two.rb"), "require 'ferrule'\nclass One < Ferrule::App; end\nclass Two < Ferrule::App; end\n")
      _, err, status = ferrule_command("openapi", File.join(dir, "two.rb"))
      assert_equal [1, "ferrule: #{File.join(dir, 'two.rb')} declares 2 Ferrule::App classes (One, Two); run the one to print (Shop.run!)\n"], [status.exitstatus, err]
      File.write(File.join(dir, "needs.rb"), "require 'ferrule'\nclass Needs < Ferrule::App\n  def initialize(**) = raise(ArgumentError, 'set SECRET first')\nend\n")
      _, err, status = ferrule_command("openapi", File.join(dir, "needs.rb"))
      assert_equal [1, "ferrule: cannot make Needs: set SECRET first\n"], [status.exitstatus, err]
      File.write(File.join(dir, "none.rb"), "x = 1\n")
      _, err, status = ferrule_command("openapi", File.join(dir, "none.rb"))
      assert_equal [1, "ferrule: #{File.join(dir, 'none.rb')} makes no Ferrule::App\n"], [status.exitstatus, err]
    end
    _, err, status = ferrule_command("openapi")
    assert_equal [1, "ferrule: usage: ferrule openapi <app.rb|config.ru> | ferrule <app.rb> --reload [--reload-dir DIR]...\n"], [status.exitstatus, err]
  end

  def test_openapi_url_moves_the_document_or_nil_switches_it_off
    moved = Ferrule::App.new(openapi_url: "/api/schema.json")
    moved.get("/x") { "x" }
    off = Ferrule::App.new(openapi_url: nil)
    off.get("/x") { "x" }
    assert_equal 200, serving(moved) { |port| request(port, "GET", "/api/schema.json") }.status
    assert_equal 404, serving(off) { |port| request(port, "GET", "/openapi.json") }.status
    error = assert_raises(ArgumentError) { Ferrule::App.new(openapi_url: "schema.json") }
    assert_includes error.message, "openapi_url must be a path starting with `/`"
  end

  def test_docs_url_serves_the_docs_page_moves_it_or_nil_switches_it_off
    page = serving(Ferrule::App.new(title: "Shop").tap { |app| app.get("/x") { "x" } }) { |port| request(port, "GET", "/docs") }
    assert_equal 200, page.status
    assert_includes page.body, "<title>Shop - Swagger UI</title>"
    [[{ docs_url: "/api/docs" }, "/api/docs", 200], [{ docs_url: nil }, "/docs", 404], [{ openapi_url: nil }, "/docs", 404]].each do |settings, path, status|
      app = Ferrule::App.new(**settings)
      app.get("/x") { "x" }
      assert_equal status, serving(app) { |port| request(port, "GET", path) }.status, settings.inspect
    end
    error = assert_raises(ArgumentError) { Ferrule::App.new(docs_url: "docs") }
    assert_includes error.message, "docs_url must be a path starting with `/`"
  end
end
