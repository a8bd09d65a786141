# frozen_string_literal: true

# Sinatra's filters, error blocks, not_found, helpers and groups, the other hooks by phase,
# and on_start/on_stop — through Rack::Test, as Sinatra users test (no socket needed).
require "minitest/autorun"
require "open3"
require "stringio"
require "rack/test"
require_relative "support"

class HooksTest < Minitest::Test
  include Rack::Test::Methods

  OutOfStock = Class.new(StandardError)

  def app
    @app ||= begin
      seen = @seen = []
      app = Ferrule::App.new
      app.helpers do
        def current_user = request.header("authorization")&.delete_prefix("Bearer ")
      end
      app.before { |req| seen << "before #{req.method} #{req.path}" }
      app.before("/admin/*") { halt 401, { "www-authenticate" => "Bearer" }, "who are you?" unless current_user }
      app.hook(:pre_handler) { |req| seen << "pre_handler #{req.params}" }
      app.after { |_req| headers "x-served-by" => "ferrule" }
      app.after("/wrapped/*") { body({ wrapped: body }) }
      app.hook(:on_error) { |error, _req| seen << "on_error #{error.class}" }
      app.error(OutOfStock) { |e| status 409; { detail: e.message } }
      app.error(ArgumentError) { |_e| [400, {}, ["bad argument"]] }
      app.not_found { |_e| { missing: request.path } }
      app.error(Ferrule::ValidationError) { |e| status 400; { invalid: e.errors.map { |i| i["loc"].join(".") } } }
      app.get("/items/{id:int}") { |req| seen << "handler"; { id: req.params[:id] } }
      app.get("/admin/stats") { { users: 3, by: current_user } }
      app.get("/buy/{item}") { |req| raise OutOfStock, "#{req.params[:item]} is out of stock" }
      app.get("/argue") { raise ArgumentError, "no" }
      app.get("/boom") { raise "SECRET-TOKEN-42" }
      app.get("/teapot") { raise Ferrule::HTTPError.new(418, "short and stout") }
      app.get("/wrapped/one") { { a: 1 } }
      app.group("/v1") do |v1|
        v1.before { |req| seen << "v1 #{req.path}" }
        v1.get("/hello") { "hi" }
      end
      app
    end
  end

  def test_filters_and_hooks_run_in_order_around_the_block
    get "/items/3"
    assert_equal 200, last_response.status
    assert_equal({ "id" => 3 }, JSON.parse(last_response.body))
    assert_equal "ferrule", last_response.headers["x-served-by"]
    assert_equal ["before GET /items/3", "pre_handler {:id=>3}", "handler"], @seen
  end

  def test_a_before_filter_with_a_pattern_halts_and_helpers_are_callable
    get "/admin/stats"
    assert_equal 401, last_response.status
    assert_equal "Bearer", last_response.headers["www-authenticate"]
    assert_equal "who are you?", last_response.body
    assert_equal "ferrule", last_response.headers["x-served-by"], "after filters run for halted requests too"
    get "/admin/stats", {}, { "HTTP_AUTHORIZATION" => "Bearer ada" }
    assert_equal({ "users" => 3, "by" => "ada" }, JSON.parse(last_response.body))
  end

  def test_before_sees_requests_the_core_refused_and_error_blocks_answer_them
    get "/items/seven"
    assert_equal 400, last_response.status
    assert_equal({ "invalid" => ["path.id"] }, JSON.parse(last_response.body))
    get "/nowhere"
    assert_equal 404, last_response.status
    assert_equal({ "missing" => "/nowhere" }, JSON.parse(last_response.body))
    assert_equal ["before GET /items/seven", "before GET /nowhere"], @seen
  end

  def test_error_blocks_by_class_and_the_defaults
    get "/buy/pen"
    assert_equal [409, { "detail" => "pen is out of stock" }], [last_response.status, JSON.parse(last_response.body)]
    get "/argue"
    assert_equal [400, "bad argument"], [last_response.status, last_response.body]
    get "/teapot"
    assert_equal 418, last_response.status
    assert_equal "short and stout", JSON.parse(last_response.body)["detail"]
    assert_equal "application/problem+json", last_response.headers["content-type"]
    get "/boom"
    assert_equal 500, last_response.status
    refute_includes last_response.body, "SECRET"
    assert_includes @seen, "on_error HooksTest::OutOfStock"
    assert_includes @seen, "on_error RuntimeError"
  end

  # Sinatra's +error 500+ takes an exception no block names by class; so does Ferrule's now.
  def test_an_error_block_for_500_takes_what_no_block_names
    app = Ferrule::App.new
    app.error(500) { |_e| "error 500 block" }
    app.get("/boom") { raise "plain" }
    app.get("/todo") { raise NotImplementedError }
    %w[/boom /todo].each do |path|
      response = Rack::MockRequest.new(app).get(path)
      assert_equal [500, "error 500 block"], [response.status, response.body], path
    end
  end

  # Found by the same probe: a +halt+ in an after filter kept the route's body; +content_type+
  # sent any other Symbol as it was written; +threads: 0+ served nothing, forever.
  def test_halt_in_an_after_filter_content_type_symbols_and_threads_as_sinatra_and_puma_take_them
    app = Ferrule::App.new
    app.after("/x") { halt 299, "from after" }
    app.get("/x") { "x" }
    app.get("/png") { content_type :png; "\x89PNG".b }
    app.get("/nonsense") { content_type :nonsense; "?" }
    request = Rack::MockRequest.new(app)
    assert_equal [299, "from after"], [request.get("/x").status, request.get("/x").body]
    assert_equal "image/png", request.get("/png").headers["content-type"]
    assert_equal 500, request.get("/nonsense").status
    error = assert_raises(ArgumentError) { app.serve(port: 0, threads: 0, signals: false) }
    assert_equal "ferrule: threads must be at least 1", error.message
  end

  def test_an_after_filter_that_raises_goes_to_on_error_and_the_error_blocks
    seen = []
    refused = Class.new(StandardError)
    app = Ferrule::App.new
    app.after("/refused") { seen << :after; raise refused, "no" }
    app.after("/http") { seen << :after; raise Ferrule::HTTPError.new(409, "taken") }
    app.hook(:on_error) { |error, _req| seen << error.message }
    app.error(refused) { |_error, req| status 403; { refused: req.path } }
    app.get("/refused") { "x" }
    app.get("/http") { "x" }
    request = Rack::MockRequest.new(app)
    refused_response = request.get("/refused")
    assert_equal [403, { "refused" => "/refused" }], [refused_response.status, JSON.parse(refused_response.body)]
    http = request.get("/http")
    assert_equal [409, "taken"], [http.status, JSON.parse(http.body)["detail"]]
    # The recovered answer is sent as it is: the after filters do not run for it again.
    assert_equal [:after, "no", :after, "taken"], seen
  end

  # Sinatra runs its after filters in an `ensure`, so after an exception no error block answers
  # too; they were skipped. The answer is still the core's bare 500, the exception is logged as
  # before, and an after filter that raises then does not take its place.
  def test_after_filters_run_after_an_exception_no_error_block_answers
    out = StringIO.new
    seen = []
    app = Ferrule::App.new(logger: Logger.new(out))
    app.after { |req| seen << [req.path, status, body] }
    app.after("/twice") { raise IOError, "the filter's own" }
    app.after("/twice") { seen << :not_reached }
    app.get("/boom") { raise KeyError, "SECRET-TOKEN-42" }
    app.get("/twice") { raise KeyError, "SECRET-TOKEN-42" }
    bare_app = Ferrule::App.new(logger: false)
    bare_app.get("/boom") { raise KeyError, "SECRET-TOKEN-42" }
    bare = Rack::MockRequest.new(bare_app).get("/boom")

    request = Rack::MockRequest.new(app)
    boom = request.get("/boom")
    assert_equal [500, bare.body, "application/problem+json"], [boom.status, boom.body, boom.headers["content-type"]]
    twice = nil
    _, err = capture_io { twice = request.get("/twice") }
    assert_equal [500, bare.body], [twice.status, twice.body]
    assert_equal [["/boom", 500, bare.body], ["/twice", 500, bare.body]], seen
    assert_includes err, "ferrule: an after filter raised IOError after KeyError"
    # The records reach the Logger on a thread of their own.
    deadline = Time.now + 5
    sleep 0.01 until out.string.scan("the handler raised KeyError").length >= 2 || Time.now > deadline
    assert_equal 2, out.string.scan("the handler raised KeyError: SECRET-TOKEN-42").length, out.string
    assert_includes out.string, "hooks_test.rb", "with the block's backtrace"
    refute_includes out.string, "IOError"
  end

  # As Sinatra's dump_errors: an exception an error block answers with a server error is still
  # logged (with its backtrace); one answered with a 4xx is the app's answer, not a failure.
  def test_an_exception_an_error_block_answers_with_a_500_is_still_logged
    out = StringIO.new
    app = Ferrule::App.new(logger: Logger.new(out))
    app.error(500) { |e| { sorry: e.class.name } }
    app.error(KeyError) { status 404; { missing: true } }
    app.get("/boom") { raise IOError, "SECRET-TOKEN-42" }
    app.get("/find") { raise KeyError, "not logged" }
    request = Rack::MockRequest.new(app)
    boom = request.get("/boom")
    assert_equal [500, { "sorry" => "IOError" }], [boom.status, JSON.parse(boom.body)]
    refute_includes boom.body, "SECRET"
    find = request.get("/find")
    assert_equal [404, { "missing" => true }], [find.status, JSON.parse(find.body)]
    deadline = Time.now + 5
    sleep 0.01 until out.string.include?("the handler raised IOError") || Time.now > deadline
    assert_includes out.string, "the handler raised IOError: SECRET-TOKEN-42"
    assert_includes out.string, "hooks_test.rb", "with the block's backtrace"
    refute_includes out.string, "not logged"
  end

  # What the after filters do to that 500 goes out with it, as in Sinatra: a CORS header, a
  # status; so do the headers the block set before it raised.
  def test_the_after_filters_changes_to_that_500_go_out_with_it
    app = Ferrule::App.new(logger: false)
    app.after { headers "access-control-allow-origin" => "*" }
    app.after("/unavailable") { status 503 }
    app.get("/boom") { headers "x-set-before" => "kept"; raise "SECRET-TOKEN-42" }
    app.get("/unavailable") { raise "SECRET-TOKEN-42" }
    request = Rack::MockRequest.new(app)
    boom = request.get("/boom")
    assert_equal [500, "*", "kept", "application/problem+json"],
                 [boom.status, boom.headers["access-control-allow-origin"], boom.headers["x-set-before"], boom.headers["content-type"]]
    refute_includes boom.body, "SECRET"
    unavailable = request.get("/unavailable")
    assert_equal [503, "*"], [unavailable.status, unavailable.headers["access-control-allow-origin"]]
    refute_includes unavailable.body, "SECRET"
  end

  def test_an_after_filter_may_replace_the_body
    get "/wrapped/one"
    assert_equal({ "wrapped" => { "a" => 1 } }, JSON.parse(last_response.body))
  end

  def test_groups_scope_their_filters_after_the_apps
    get "/v1/hello"
    assert_equal "hi", last_response.body
    assert_equal ["before GET /v1/hello", "v1 /v1/hello", "pre_handler {}"], @seen
  end

  def test_on_start_runs_once_before_the_first_request_and_a_failure_stops_the_app
    started = []
    app = Ferrule::App.new
    app.on_start { started << :once }
    app.get("/") { started.size.to_s }
    2.times { assert_equal "1", Rack::MockRequest.new(app).get("/").body }
    broken = Ferrule::App.new
    broken.on_start { raise IOError, "the database is down" }
    error = assert_raises(Ferrule::StartupFailed) { Rack::MockRequest.new(broken).get("/") }
    assert_equal "ferrule: startup failed: IOError: the database is down", error.message
  end

  def test_run_exits_with_status_3_and_one_line_when_startup_fails
    script = <<~RUBY
      require "ferrule"
      app = Ferrule::App.new
      app.on_start { raise IOError, "the database is down" }
      app.run(port: 0)
    RUBY
    output, status = Open3.capture2e("ruby", "-e", script)
    assert_equal 3, status.exitstatus, output
    assert_equal "ferrule: startup failed: IOError: the database is down", output.lines.last.strip
  end

  def test_a_misspelled_phase_names_the_nearest
    error = assert_raises(ArgumentError) { Ferrule::App.new.hook(:on_sned) { nil } }
    assert_match(/unknown hook on_sned \(did you mean on_send\?\)/, error.message)
  end
end
