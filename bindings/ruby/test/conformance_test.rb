# frozen_string_literal: true

# The shared fixture corpus, served by the Ruby API and checked by the same checker
# (ferrule-conformance, a real HTTP client) that checks the Rust API.
require "minitest/autorun"
require "open3"
require_relative "support"
require_relative "fixture_handlers"

class ConformanceTest < Minitest::Test
  include Support

  FIXTURES = ENV.fetch("FERRULE_FIXTURES_DIR") { File.expand_path("../../../fixtures", __dir__) }
  CHECKER = ENV.fetch("FERRULE_CONFORMANCE", "ferrule-conformance")
  CATEGORIES = Dir[File.join(FIXTURES, "conformance", "*.json")].map { |f| File.basename(f, ".json") }.sort

  def build(category)
    fixture = JSON.parse(File.read(File.join(FIXTURES, "conformance", "#{category}.json")))
    app = Ferrule::App.new(**(fixture["app"] || {}).transform_keys(&:to_sym))
    fixture["routes"].each do |route|
      spec = route.dup
      handler = FixtureHandlers::HANDLERS.fetch(spec.delete("handler"))
      if spec["websocket"]
        app.add_route(spec) { |ws, req| handler.call(ws, req) }
      else
        app.add_route(spec) { |req| handler.call(req) }
      end
    end
    app
  end

  def test_the_corpus_is_there
    assert_operator CATEGORIES.size, :>=, 14, "only #{CATEGORIES} in #{FIXTURES}"
  end

  CATEGORIES.each do |category|
    define_method("test_#{category}") do
      # Four handler threads: the corpus has handlers that sleep (blocking, as Ruby's sleep is).
      output, status = serving(build(category), threads: 4) do |port|
        Open3.capture2e(CHECKER, "check", "--fixtures", FIXTURES, "--category", category, "--base", "http://127.0.0.1:#{port}")
      end
      assert status.success?, output
    end
  end
end
