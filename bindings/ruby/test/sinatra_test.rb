# frozen_string_literal: true

# What Sinatra's own tests (routing, filter, halt, mapped_error, result, streaming, helpers)
# expect of the DSL Ferrule shares with it, where Ferrule answered otherwise: each found by
# running Sinatra's corpus beside Ferrule, each failing before its fix.
require "minitest/autorun"
require "rack/test"
require_relative "support"

class SinatraTest < Minitest::Test
  include Rack::Test::Methods

  attr_reader :app

  def test_a_filter_pattern_reads_as_sinatras
    @app = Ferrule::App.new
    seen = []
    # `*` crosses `/`: read as a glob, it let /admin/users/7 past this guard.
    @app.before("/admin/*") { halt 401, "who are you?" unless request.header("authorization") }
    # `:id` is one segment: read as a glob, it was literal text and the filter never ran.
    @app.before("/users/:id") { |req| seen << req.path }
    @app.before("/posts/?") { |req| seen << "posts #{req.path}" }
    @app.get("/admin/users/{id}") { "secret" }
    @app.get("/users/{id}") { "user" }
    @app.get("/users/{id}/posts") { "posts of a user" }
    @app.get("/posts") { "posts" }

    get "/admin/users/7"
    assert_equal [401, "who are you?"], [last_response.status, last_response.body]
    get "/users/7"
    get "/users/7/posts"
    assert_equal ["/users/7"], seen, "one segment, not the rest of the path"
    get "/posts"
    assert_equal ["/users/7", "posts /posts"], seen
  end

  def test_halt_or_status_with_a_code_meets_its_error_block
    @app = Ferrule::App.new
    @app.not_found { |e| "nothing at #{request.path} (#{e.status})" }
    @app.error(403) { "go away" }
    @app.error(500..599) { nil }
    @app.get("/halted") { halt 404 }
    @app.get("/forbidden") { status 403; "the route's own body" }
    @app.get("/gone") { [404, {}, ["from the triplet"]] }
    @app.get("/broken") { status 503; "down" }

    get "/halted"
    assert_equal [404, "nothing at /halted (404)"], [last_response.status, last_response.body]
    get "/forbidden"
    assert_equal [403, "go away"], [last_response.status, last_response.body]
    get "/gone"
    assert_equal [404, "nothing at /gone (404)"], [last_response.status, last_response.body]
    get "/broken"
    assert_equal [503, "down"], [last_response.status, last_response.body], "a block answering nil keeps the body"
  end

  def test_nil_is_an_empty_body_and_an_integer_the_status
    @app = Ferrule::App.new
    @app.get("/nil") { nil }
    @app.get("/no-content") { 204 }
    @app.get("/status-then-integer") { status 201; 202 }

    get "/nil"
    assert_equal [200, ""], [last_response.status, last_response.body]
    refute_equal "application/json", last_response.headers["content-type"]
    get "/no-content"
    assert_equal [204, ""], [last_response.status, last_response.body]
    get "/status-then-integer"
    assert_equal 202, last_response.status
  end

  def test_halt_with_an_array_of_strings_sends_them_all
    @app = Ferrule::App.new
    @app.get("/words") { halt %w[Hello World How Are You] }
    @app.get("/pair") { halt [402, "pay up"] }

    get "/words"
    assert_equal [200, "HelloWorldHowAreYou"], [last_response.status, last_response.body]
    get "/pair"
    assert_equal [402, "pay up"], [last_response.status, last_response.body]
  end
end
