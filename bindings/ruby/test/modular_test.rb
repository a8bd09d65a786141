# frozen_string_literal: true

# Sinatra's modular style (`class Shop < Ferrule::App`, Ferrule::Modular): an app declared in a
# class body, served by `run Shop` under Rack and by `Shop.new` / `Shop.run!` on its own.
require "minitest/autorun"
require "rack/test"
require "zlib"
require_relative "support"

class ModularTest < Minitest::Test
  include Rack::Test::Methods
  include Support

  module Pricing
    def price_of(sku) = sku.length * 100
  end

  class Shop < Ferrule::App
    set :timeout_ms, 2_000
    set :title, "Shop"
    set :greeting, "welcome"
    set(currency: "EUR", stock: { "ab" => 3 })
    enable :sessions
    set :session_secret, "s" * 64
    configure(:test_never) { set :greeting, "never here" }
    helpers Pricing
    helpers do
      def cart = (session[:cart] ||= [])
    end

    def body_method = "not for blocks"

    before("/items/*") { headers["x-shop"] = settings.greeting }

    get("/") { "#{settings.greeting} #{settings.currency}" }
    get("/items/{sku}", query: { qty: { type: "integer", default: 1 } }) do |req|
      sku = req.params[:sku]
      halt 404, "no #{sku}" unless settings.stock.key?(sku)
      { sku: sku, qty: req.query[:qty], total: price_of(sku) * req.query[:qty] }
    end
    post("/cart/{sku}") { |req| cart << req.params[:sku]; { cart: cart } }
    get("/body-method") { body_method }
    get("/slow") { sleep 3; "late" }
    error(ArgumentError) { |e| [409, "conflict: #{e.message}"] }
    get("/conflict") { raise ArgumentError, "taken" }
    not_found { "nothing at #{request.path_info}" }
  end

  # A subclass serves its parent's routes and adds its own; its settings override.
  class Outlet < Shop
    set :greeting, "sale"
    get("/outlet") { "#{settings.greeting}: #{price_of('abcd') / 2}" }
  end

  def app = Shop

  def test_a_class_body_is_served_under_rack_as_run_shop
    get "/"
    assert_equal [200, "welcome EUR"], [last_response.status, last_response.body]
    get "/items/ab?qty=2"
    assert_equal({ "sku" => "ab", "qty" => 2, "total" => 400 }, JSON.parse(last_response.body))
    assert_equal "welcome", last_response.headers["x-shop"], "the class body's before filter ran"
    get "/items/ab?qty=two"
    assert_equal 422, last_response.status, "the route's query schema is the core's to check"
    get "/items/zz"
    assert_equal [404, "nothing at /items/zz"], [last_response.status, last_response.body], "a 404 goes through not_found, as in Sinatra"
    get "/conflict"
    assert_equal [409, "conflict: taken"], [last_response.status, last_response.body]
    get "/nowhere"
    assert_equal [404, "nothing at /nowhere"], [last_response.status, last_response.body]
  end

  def test_sessions_enabled_in_the_body_keep_the_cart
    post "/cart/ab"
    post "/cart/cd"
    assert_equal({ "cart" => %w[ab cd] }, JSON.parse(last_response.body))
  end

  def test_one_instance_answers_every_rack_call_and_server_settings_reach_the_core
    assert_same Shop.prototype, Shop.prototype
    assert_equal "Shop", Shop.prototype.openapi.dig("info", "title")
    assert_equal "welcome", Shop.settings.greeting
    assert_equal({ timeout_ms: 2_000, title: "Shop" }, Shop.server_settings)
  end

  # Sinatra's `set` defines readers on the class (`Shop.currency`, `Shop.sessions?`): they were
  # NoMethodErrors, so code outside the routes (a rake task, a test, config.ru) could not read
  # what the body set.
  def test_the_class_reads_its_settings_as_sinatras_does
    assert_equal ["EUR", "welcome", "Shop", true], [Shop.currency, Shop.greeting, Shop.title, Shop.sessions?]
    assert_equal [{ "ab" => 3 }, true], [Shop.stock, Shop.stock?]
    assert_equal ["sale", "EUR"], [Outlet.greeting, Outlet.currency], "a subclass reads its own, then its parent's"
    assert_equal "welcome", Shop.greeting
    assert_equal Shop.settings.environment, Shop.environment
    assert_equal Shop.settings.test?, Shop.test?
    assert Shop.respond_to?(:currency)
    refute Shop.respond_to?(:nothing_set)
    error = assert_raises(NoMethodError) { Shop.nothing_set }
    assert_includes error.message, "nothing_set"
    assert_raises(NoMethodError) { Shop.currency("an argument") }
    assert_kind_of Ferrule::Settings, Shop.settings, "the class's own methods come first"
  end

  # Found by a probe against Sinatra 3: a subclass that declared a route its parent has failed
  # with "GET / is declared twice" at its first request; Sinatra serves the subclass's.
  class Storefront < Shop
    get("/") { "storefront #{settings.greeting}" }
    post("/cart/{sku}") { |req| "no cart for #{req.params[:sku]}" }
  end

  def test_a_subclass_route_takes_the_place_of_its_parents
    serving(Storefront.new) do |port|
      assert_equal "storefront welcome", request(port, "GET", "/").body
      assert_equal "no cart for ab", request(port, "POST", "/cart/ab").body
      assert_equal 200, request(port, "GET", "/items/ab").status, "the parent's other routes stay"
    end
    serving(Shop.new) { |port| assert_equal "welcome EUR", request(port, "GET", "/").body }
  end

  def test_a_subclass_serves_its_parents_routes_with_its_own_settings
    outlet = Outlet.new
    serving(outlet) do |port|
      assert_equal "sale: 200", request(port, "GET", "/outlet").body
      assert_equal "sale EUR", request(port, "GET", "/").body
      reply = request(port, "GET", "/items/ab?qty=3")
      assert_equal [600, "sale"], [reply.json["total"], reply.headers["x-shop"]]
    end
    assert_equal "welcome", Shop.settings.greeting, "the parent's settings are its own"
  end

  def test_server_settings_from_the_body_apply_and_new_arguments_win
    serving(Shop.new) do |port|
      started = Process.clock_gettime(Process::CLOCK_MONOTONIC)
      assert_equal 504, request(port, "GET", "/slow").status
      assert_operator Process.clock_gettime(Process::CLOCK_MONOTONIC) - started, :<, 2.9, "timeout_ms from the body: 2 s"
    end
    assert_equal "Other", Shop.new(title: "Other").openapi.dig("info", "title")
  end

  def test_a_method_of_the_class_body_called_from_a_block_says_where_it_belongs
    get "/body-method"
    assert_equal 500, last_response.status
    error = assert_raises(NoMethodError) { Shop.prototype.instance_variable_get(:@context_class).allocate.send(:body_method) }
    assert_match(/body_method is a method of ModularTest::Shop.*helpers do/, error.message)
  end

  def test_declaring_on_app_itself_or_after_serving_began_is_refused
    error = assert_raises(NoMethodError) { Ferrule::App.get("/x") { "x" } }
    assert_match(/Ferrule::App.get: declare on an app/, error.message)
    assert_raises(NoMethodError) { Ferrule::App.call({}) }
    Shop.prototype
    error = assert_raises(ArgumentError) { Shop.get("/late") { "late" } }
    assert_match(/Shop.get after .*Shop began answering requests/, error.message)
  end

  # Found on review: refusing it broke `set :title, "My Blog"` (a common Sinatra setting), which
  # an app reads back; it is kept, and one line says the server's own was read already.
  def test_an_instance_set_of_a_server_setting_is_the_apps_own_and_says_so_once
    app = Ferrule::App.new
    _, said = capture_io do
      app.set :title, "My Blog"
      app.set :title, "My Blog, again"
    end
    assert_equal "My Blog, again", app.settings.title
    assert_equal "Ferrule", app.openapi.dig("info", "title")
    assert_equal 1, said.lines.count { |line| line.include?("ferrule: set :title is read as settings.title only") }, said
  end

  class Blog < Ferrule::App
    set :title, "My Blog"
    get("/") { settings.title }
  end

  def test_a_server_setting_in_the_body_is_read_back_too
    serving(Blog.new) { |port| assert_equal "My Blog", request(port, "GET", "/").body }
    assert_equal "My Blog", Blog.settings.title
    assert_equal "My Blog", Blog.new.openapi.dig("info", "title")
  end

  # Sinatra's own conditions, made in the class body by a setting's block (the README's
  # `set(:auth) { |*roles| condition { ... } }`): the option was refused as unknown. Answers
  # as Sinatra 3.0.5 gives them for the same class.
  class Guarded < Ferrule::App
    set(:role) { |*roles| condition { roles.include?(request.env["HTTP_X_ROLE"]&.to_sym) } }
    set(:even) { |flag| condition { params[:n].to_i.even? == flag } }
    get("/admin", role: %i[admin root]) { "admin area" }
    get("/admin") { "not admin" }
    get("/n/:n", even: true) { "even #{params[:n]}" }
    get("/n/:n") { "odd #{params[:n]}" }
  end

  # A subclass's route takes the condition its parent's setting makes.
  class GuardedMore < Guarded
    get("/root", role: :root) { "root area" }
    get("/root") { "not root" }
  end

  def test_a_condition_a_setting_makes_skips_the_route_it_fails
    guarded = Guarded.new
    session = Rack::Test::Session.new(Rack::MockSession.new(guarded))
    [["/admin", { "HTTP_X_ROLE" => "root" }, "admin area"], ["/admin", {}, "not admin"], ["/n/4", {}, "even 4"], ["/n/5", {}, "odd 5"]].each do |path, env, body|
      session.get(path, {}, env)
      assert_equal [200, body], [session.last_response.status, session.last_response.body], path
    end
    more = Rack::Test::Session.new(Rack::MockSession.new(GuardedMore.new))
    assert_equal ["root area", "not root"], [more.get("/root", {}, { "HTTP_X_ROLE" => "root" }).body, more.get("/root").body]
    # On an app made without a class body, the same.
    app = Ferrule::App.new
    app.set(:weekday) { |day| condition { params[:day] == day } }
    app.get("/d/:day", weekday: "mon") { "monday" }
    app.get("/d/:day") { "another day" }
    session = Rack::Test::Session.new(Rack::MockSession.new(app))
    assert_equal %w[monday another\ day], %w[/d/mon /d/tue].map { |path| session.get(path).body }
  end

  class Zipped < Ferrule::App
    use Rack::Deflater
    use Rack::CommonLogger
    get("/") { "x" * 2_000 }
  end

  # `use Rack::Deflater` in a Sinatra class body was a NoMethodError, so the app did not load.
  def test_use_takes_rack_deflater_and_common_logger_as_the_cores_settings
    assert_equal({ compression: { gzip: true, br: false, zstd: false }, access_log: true }, Zipped.server_settings)
    serving(Zipped.new) do |port|
      answer = request(port, "GET", "/", headers: { "accept-encoding" => "br, gzip" })
      assert_equal "gzip", answer.headers["content-encoding"], "gzip alone, as Rack::Deflater"
      assert_equal "x" * 2_000, Zlib.gunzip(answer.body)
    end
    error = assert_raises(ArgumentError) { Class.new(Ferrule::App) { use Rack::Deflater, include: ["text/html"] } }
    assert_match(/use Rack::Deflater, include:: not offered \(the core compresses every type/, error.message)
    error = assert_raises(ArgumentError) { Class.new(Ferrule::App) { use Rack::Head } }
    assert_match(/use Rack::Head: a Rack middleware cannot wrap Ferrule's core .* wrap the app in config.ru/, error.message)
  end

  class Hosted < Ferrule::App
    set :host_authorization, permitted_hosts: ["shop.example", ".brand.example", "www.blog.example"]
    get("/") { request.host }
  end

  # Sinatra 4's host_authorization (Rack::Protection's HostAuthorization) is the core's allow-list.
  def test_host_authorization_in_the_body_serves_the_permitted_hosts_only
    assert_equal({ allowed_hosts: ["shop.example", "brand.example", "*.brand.example", "www.blog.example"], www_redirect: false }, Hosted.server_settings)
    serving(Hosted.new) do |port|
      host = ->(name) { request(port, "GET", "/", headers: { "host" => name }) }
      served = host.("shop.example:4567")
      assert_equal [200, "shop.example"], [served.status, served.body]
      assert_equal 200, host.("brand.example").status, "a leading dot permits the domain itself"
      assert_equal 200, host.("eu.brand.example").status
      refused = host.("evil.example")
      assert_equal [400, "application/problem+json"], [refused.status, refused.headers["content-type"]]
      assert_equal 400, host.("blog.example").status, "no www redirect: Rack has none"
      assert_equal 400, request(port, "GET", "/").status, "127.0.0.1 is not permitted"
    end
    assert_equal({ permitted_hosts: ["shop.example", ".brand.example", "www.blog.example"] }, Hosted.settings.host_authorization)
    assert_nil Class.new(Ferrule::App) { set :host_authorization, permitted_hosts: [] }.server_settings[:allowed_hosts], "empty: every host"
    error = assert_raises(ArgumentError) { Class.new(Ferrule::App) { set :host_authorization, permitted_hosts: [/.*/] } }
    assert_match(/permitted host \/\.\*\/ is not supported/, error.message)
    error = assert_raises(ArgumentError) { Class.new(Ferrule::App) { set :host_authorization, permitted_hosts: ["a"], status: 404 } }
    assert_match(/host_authorization: :status is not supported/, error.message)
    error = assert_raises(ArgumentError) { Ferrule::App.new.set(:host_authorization, permitted_hosts: ["a"]) }
    assert_match(/Ferrule::App.new\(allowed_hosts: \[...\]\)/, error.message)
  end

  # Found on review: a body's mistake surfaced at the first request, and at every one after.
  def test_a_mistake_in_the_body_is_refused_as_the_body_is_read
    error = assert_raises(ArgumentError) { Class.new(Ferrule::App) { get("/x", bogus: 1) { "x" } } }
    assert_match(/route option for GET \/x: bogus/, error.message)
    error = assert_raises(ArgumentError) { Class.new(Ferrule::App) { set :views, "views" } }
    assert_match(/set :views: templates are not rendered/, error.message)
    assert_raises(ArgumentError) { Class.new(Ferrule::App) { route("GET", "/y") } }
    error = assert_raises(ArgumentError) { Class.new(Ferrule::App) { websocket("/ws", subprotocol: "chat") { |ws, _req| ws } } }
    assert_match(/websocket option for \/ws: subprotocol/, error.message)
  end
end
