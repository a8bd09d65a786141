# frozen_string_literal: true

# The shared fixture corpus, served by the Ruby API and checked by the same checker
# (ferrule-conformance, a real HTTP client) that checks the Rust API; then the same cases once
# more through App#call(env), the in-process Rack path (the checker hands over each request on
# a pipe), which must answer as the socket did.
require "minitest/autorun"
require "open3"
require "stringio"
require_relative "support"
require_relative "fixture_handlers"

class ConformanceTest < Minitest::Test
  include Support

  FIXTURES = ENV.fetch("FERRULE_FIXTURES_DIR") { File.expand_path("../../../fixtures", __dir__) }
  CHECKER = ENV.fetch("FERRULE_CONFORMANCE", "ferrule-conformance")
  CATEGORIES = Dir[File.join(FIXTURES, "conformance", "*.json")].map { |f| File.basename(f, ".json") }.sort

  def build(category)
    fixture = JSON.parse(File.read(File.join(FIXTURES, "conformance", "#{category}.json")))
    # No proxy trusted unless the fixture says, as in the core (Ruby's default is Rack's list).
    app = Ferrule::App.new(trusted_proxies: [], **(fixture["app"] || {}).transform_keys(&:to_sym))
    fixture["routes"].each do |route|
      spec = route.dup
      handler = FixtureHandlers::HANDLERS.fetch(spec.delete("handler"))
      if spec["websocket"]
        app.add_route(spec) { |ws, req| handler.call(ws, req) }
      else
        app.add_route(spec) { |req| handler.call(req) }
      end
    end
    FixtureHandlers.install_hooks(app, fixture.fetch("hooks", []))
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

  # Requests Rack's env cannot carry: it holds one value per header name, so a header sent on
  # several lines reaches App#call joined into one (as Rack servers join it).
  RACK_CANNOT_SAY = %w[headers/repeated_scalar_header_last_wins headers/repeated_header_makes_a_list].freeze

  CATEGORIES.each do |category|
    define_method("test_#{category}_through_call") do
      app = build(category)
      skips = RACK_CANNOT_SAY.select { |name| name.start_with?("#{category}/") }.flat_map { |name| ["--skip", name] }
      Open3.popen3(CHECKER, "check", "--via", "stdio", "--fixtures", FIXTURES, "--category", category, *skips) do |stdin, stdout, stderr, wait|
        report = Thread.new { stderr.read }
        stdout.each_line do |line|
          stdin.puts(JSON.generate(answer(app, JSON.parse(line))))
          stdin.flush
        end
        stdin.close
        assert wait.value.success?, report.value
      end
    end
  end

  # One request from the checker, as a Rack server would hand it to App#call, and the answer
  # as the checker reads it.
  def answer(app, request)
    path, query = request["path"].split("?", 2)
    body = request["body"].unpack1("m")
    env = { "REQUEST_METHOD" => request["method"], "SCRIPT_NAME" => "", "PATH_INFO" => path, "QUERY_STRING" => query.to_s,
            "SERVER_NAME" => "localhost", "SERVER_PORT" => "80", "rack.input" => StringIO.new(body) }
    request["headers"].each do |name, value|
      key = %w[content-type content-length].include?(name) ? name.upcase.tr("-", "_") : "HTTP_#{name.upcase.tr('-', '_')}"
      value = value.unpack1("m")
      # Rack has one entry per header: a repeated one is joined, as Rack servers join it.
      env[key] = env.key?(key) ? "#{env[key]}#{name == 'cookie' ? '; ' : ', '}#{value}" : value
    end
    status, headers, rack_body = app.call(env)
    chunks = []
    cut_off = false
    begin
      rack_body.each { |chunk| chunks << chunk }
    rescue Ferrule::BodyCutOff
      cut_off = true
    end
    flat = headers.flat_map { |name, value| Array(value).flat_map { |v| v.split("\n") }.map { |v| [name, [v].pack("m0")] } }
    { "status" => status, "headers" => flat, "body" => [chunks.join].pack("m0"), "cut_off" => cut_off }
  end
end
