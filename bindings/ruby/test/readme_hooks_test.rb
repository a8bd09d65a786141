# frozen_string_literal: true

# The README's hooks example, run as written through Rack::Test: the before filter refuses an
# unauthenticated request, the group's route sees the helper, the error blocks answer, and
# on_start/on_stop run around the app's life.
require "minitest/autorun"
require "rack/test"
require_relative "support"

class ReadmeHooksTest < Minitest::Test
  include Rack::Test::Methods

  DB = Struct.new(:connected) do
    def connect = self.connected = true
    def close = self.connected = false
  end.new(false)

  def readme_block
    text = File.read(ENV.fetch("FERRULE_README"), encoding: "UTF-8")
    start = text.index("### Hooks, error handlers, groups and the app's life cycle")
    section = text[start...text.index("\n### ", start + 1)]
    section[/```ruby\n(.*?)```/m, 1] or flunk "no ruby block in the README's hooks section"
  end

  def app
    @app ||= begin
      app = Ferrule::App.new
      binding.local_variable_set(:app, app)
      eval(readme_block, binding, "README.md") # rubocop:disable Security/Eval -- the README's own example
      app.get("/items/{id:int}") { |req| { id: req.params[:id] } }
      app
    end
  end

  def test_the_readme_hooks_example_as_written
    get "/admin/stats"
    assert_equal [401, "who are you?"], [last_response.status, last_response.body]
    assert DB.connected, "on_start ran before the first request"
    header "authorization", "Bearer ada"
    get "/admin/stats"
    assert_equal [200, { "by" => "ada" }], [last_response.status, JSON.parse(last_response.body)]
    assert_equal "ferrule", last_response.headers["x-served-by"]
    get "/items/seven"
    assert_equal [400, { "invalid" => [%w[path id]] }], [last_response.status, JSON.parse(last_response.body)]
    get "/nowhere"
    assert_equal [404, { "missing" => "/nowhere" }], [last_response.status, JSON.parse(last_response.body)]
    app.stop_app
    refute DB.connected, "on_stop ran"
  end
end
