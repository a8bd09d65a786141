# frozen_string_literal: true

# Response schemas, +response:+: a JSON result keeps only what the schema for its status
# declares, at every depth, whatever Hash or Struct the block returns; validate_responses
# reports a result the schema forbids.
require "minitest/autorun"
require "rack/test"
require_relative "support"

class ResponseTest < Minitest::Test
  include Rack::Test::Methods

  USER_OUT = {
    "title" => "UserOut", "type" => "object",
    "properties" => { "id" => { "type" => "integer" }, "name" => { "type" => "string" },
                      "friends" => { "type" => "array", "items" => { "type" => "object", "properties" => { "name" => { "type" => "string" } } } } },
    "required" => %w[id name]
  }.freeze
  UserRow = Struct.new(:id, :name, :password, :friends)

  def record = { id: 1, name: "ada", password: "hunter2", friends: [{ name: "bob", token: "t-1" }], "admin" => true }

  def users(**settings)
    app = Ferrule::App.new(**settings)
    user = record
    app.get("/user", response: USER_OUT) { user }
    app.get("/struct", response: USER_OUT) { UserRow.new(1, "ada", "hunter2", [{ name: "bob", token: "t-1" }]) }
    app.post("/created", status: 201, response: USER_OUT) { user }
    app.get("/by-status", response: { 200 => USER_OUT, "4XX" => { "type" => "object", "properties" => { "error" => {} } } }) do |req|
      req.query_pairs.empty? ? user : Ferrule::Response.new({ error: "no", trace: "secret" }, status: 404)
    end
    app.route(%w[GET POST], "/both", response: USER_OUT, query: { q: { "type" => "integer", "default" => 0 } }) { user }
    app.get("/free") { user }
    app
  end

  def app = @app ||= users

  def test_a_response_schema_drops_the_password_and_everything_it_does_not_declare
    %w[/user /struct /by-status].each do |path|
      get path
      assert_equal [200, { "id" => 1, "name" => "ada", "friends" => [{ "name" => "bob" }] }], [last_response.status, JSON.parse(last_response.body)], path
      refute_includes last_response.body, "hunter2", path
    end
    post "/created"
    assert_equal [201, %w[friends id name]], [last_response.status, JSON.parse(last_response.body).keys.sort]
    get "/by-status?x=1"
    assert_equal [404, { "error" => "no" }], [last_response.status, JSON.parse(last_response.body)]
    get "/free"
    assert_equal "hunter2", JSON.parse(last_response.body)["password"]
    # Every method of a multi-method route gets all of its options.
    %w[GET POST].each do |m|
      custom_request m, "/both?q=x"
      assert_equal 422, last_response.status, m
    end
    post "/both"
    assert_equal %w[friends id name], JSON.parse(last_response.body).keys.sort
  end

  def test_the_response_schema_is_the_documents
    document = users.openapi
    ok = document["paths"]["/user"]["get"]["responses"]["200"]
    assert_equal({ "$ref" => "#/components/schemas/UserOut" }, ok["content"]["application/json"]["schema"])
    assert document["paths"]["/created"]["post"]["responses"].key?("201")
    assert document["paths"]["/by-status"]["get"]["responses"].key?("4XX")
  end

  def test_validate_responses_reports_a_result_the_schema_forbids
    app = Ferrule::App.new(validate_responses: true)
    app.get("/broken", response: USER_OUT) { { id: "one", password: "hunter2" } }
    response = Rack::MockRequest.new(app).get("/broken")
    assert_equal 500, response.status
    assert_equal [["int_type", %w[response id]], ["missing", %w[response name]]], JSON.parse(response.body)["errors"].map { |e| [e["type"], e["loc"]] }
    refute_includes response.body, "hunter2"
  end

  def test_defaults_fill_what_the_result_lacks_and_a_missing_required_field_is_a_500
    item_out = {
      "type" => "object", "required" => ["id"],
      "properties" => { "id" => { "type" => "integer" }, "tags" => { "type" => "array", "default" => [] },
                        "parts" => { "type" => "array", "items" => { "type" => "object", "properties" => { "k" => { "default" => 7 } } } } }
    }
    app = Ferrule::App.new
    app.get("/item", response: item_out) { { id: 3, parts: [{}, { k: 1 }], secret: "x" } }
    app.get("/broken", response: item_out) { { tags: ["private-tag"] } }
    item = Rack::MockRequest.new(app).get("/item")
    assert_equal [200, { "id" => 3, "tags" => [], "parts" => [{ "k" => 7 }, { "k" => 1 }] }], [item.status, JSON.parse(item.body)]
    broken = Rack::MockRequest.new(app).get("/broken")
    assert_equal [500, "application/problem+json"], [broken.status, broken.content_type]
    refute_includes broken.body, "private-tag"
  end

  def test_a_response_that_is_not_a_schema_is_refused_where_it_is_declared
    app = Ferrule::App.new
    assert_raises(ArgumentError) { app.get("/a", response: "UserOut") { nil } }
    error = assert_raises(ArgumentError) { app.get("/b", response: { 200 => "UserOut" }) { nil } }
    assert_match(/response 200 must be a schema Hash/, error.message)
  end
end
