# frozen_string_literal: true

# The core's log records reach a Ruby Logger: the access log, a block's exception with its
# backtrace, records of an app under Rack; log_level, logger: false, and refusals by name.
require "minitest/autorun"
require "open3"
require "stringio"
require "rack/mock"
require_relative "support"

class LoggingTest < Minitest::Test
  include Support

  def logged
    out = StringIO.new
    logger = Logger.new(out)
    logger.formatter = ->(severity, _time, progname, message) { "#{severity}|#{progname}|#{message}\n" }
    [logger, out]
  end

  def test_a_logger_gets_the_access_log_and_a_blocks_exception_with_its_backtrace
    logger, out = logged
    app = Ferrule::App.new(logger: logger, access_log: true)
    app.get("/n/{n:int}") { |req| { n: req.params[:n] } }
    app.get("/boom") { raise KeyError, "secret-detail" }
    serving(app) do |port|
      assert_equal 200, request(port, "GET", "/n/3", headers: { "x-request-id" => "rid-7" }).status
      boom = request(port, "GET", "/boom")
      assert_equal 500, boom.status
      refute_includes boom.body, "secret-detail"
    end
    lines = out.string.lines(chomp: true)
    assert lines.any? { |l| l.match?(%r{\AINFO\|ferrule\|GET /n/3 200 7B \d+\.\d\dms id=rid-7\z}) }, lines.inspect
    assert lines.any? { |l| l.match?(%r{\AINFO\|ferrule\|GET /boom 500 }) }, lines.inspect
    raised = out.string[/^ERROR\|ferrule\|GET \/boom: the handler raised .*?(?=^[A-Z]+\|ferrule\||\z)/m]
    refute_nil raised, out.string
    assert_includes raised, "KeyError"
    assert_includes raised, "logging_test.rb", "the backtrace names the block's file"
  end

  def test_log_level_leaves_out_what_is_below_it
    logger, out = logged
    app = Ferrule::App.new(logger: logger, access_log: true, log_level: "error")
    app.get("/ok") { "ok" }
    app.get("/boom") { raise "no" }
    serving(app) do |port|
      request(port, "GET", "/ok")
      request(port, "GET", "/boom")
    end
    # The core's records reach the Logger on a thread of their own, after the answer: under
    # load (the whole suite in parallel) the record could still be on its way here.
    deadline = Time.now + 5
    sleep 0.01 until out.string.include?("ERROR") || Time.now > deadline
    severities = out.string.lines.map { |l| l[/\A[A-Z]+(?=\|ferrule\|)/] }.compact.uniq
    assert_equal ["ERROR"], severities, out.string
  end

  def test_an_app_under_rack_logs_to_its_logger_too
    logger, out = logged
    app = Ferrule::App.new(logger: logger, access_log: true)
    app.get("/hi") { "hi" }
    response = Rack::MockRequest.new(app).get("/hi", "HTTP_X_REQUEST_ID" => "rack-1")
    assert_equal 200, response.status
    deadline = Time.now + 5
    sleep 0.01 until out.string.include?("rack-1") || Time.now > deadline
    assert_match %r{^INFO\|ferrule\|GET /hi 200 2B \d+\.\d\dms id=rack-1$}, out.string
  end

  def test_logger_false_writes_nothing_and_the_default_writes_lines_to_stderr
    script = lambda do |options|
      <<~RUBY
        require "ferrule"
        require "net/http"
        app = Ferrule::App.new(#{options})
        app.get("/") { "hi" }
        ready = Queue.new
        server = Thread.new { app.serve(host: "127.0.0.1", port: 0, signals: false) { |port| ready << port } }
        Net::HTTP.start("127.0.0.1", ready.pop) { |http| http.get("/") }
        app.stop
        server.join
      RUBY
    end
    _out, err, status = Open3.capture3(RbConfig.ruby, "-e", script.call("logger: false, access_log: true"))
    assert status.success?, err
    assert_equal "", err
    _out, err, status = Open3.capture3(RbConfig.ruby, "-e", script.call("access_log: true"))
    assert status.success?, err
    assert_match %r{\Aferrule: GET / 200 2B \d+\.\d\dms id=[0-9a-f-]{36}\n\z}, err
  end

  def test_a_logger_that_is_not_one_and_an_unknown_level_are_refused_by_name
    error = assert_raises(ArgumentError) { Ferrule::App.new(logger: Object.new) }
    assert_equal "ferrule: logger must be a Logger (anything with Logger#add), or false", error.message
    error = assert_raises(ArgumentError) { Ferrule::App.new(log_level: "loud") }
    assert_includes error.message, "log_level: unknown variant `loud`"
    error = assert_raises(ArgumentError) { Ferrule::App.new(loger: Logger.new(nil)) }
    assert_equal "ferrule: unknown App setting loger (did you mean logger?)", error.message
  end

  # A Logger whose first record takes 0.5 s to write (the next ones wait in the core meanwhile)
  # and that raises on the records +failing+ names (by their order).
  class SlowLogger
    attr_reader :messages, :writing

    def initialize(failing: [])
      @messages = Queue.new
      @writing = Queue.new
      @failing = failing
      @calls = 0
    end

    def add(_severity, message, _progname)
      @calls += 1
      raise IOError, "disk full" if @failing.include?(@calls)

      if @writing.empty?
        @writing << true
        sleep 0.5
      end
      @messages << message
    end

    def paths
      Array.new(@messages.size) { @messages.pop }.filter_map { |m| m[%r{\AGET (/n/\d) }, 1] }.sort
    end
  end

  def serve_three(logger)
    app = Ferrule::App.new(logger: logger, access_log: true)
    app.get("/n/{n:int}") { |req| req.params[:n].to_s }
    serving(app) do |port|
      3.times { |n| assert_equal 200, request(port, "GET", "/n/#{n}").status }
      Timeout.timeout(5) { logger.writing.pop }
    end
  end

  # Before: stopping killed the logging thread wherever it was, and the records of the batch it
  # had taken from the core but not yet written were lost (here the first, of three).
  def test_records_taken_before_the_stop_are_all_written
    logger = SlowLogger.new
    serve_three(logger)
    assert_equal ["/n/0", "/n/1", "/n/2"], logger.paths
  end

  # Before: the Logger's exception on one record dropped the rest of its batch (the two records
  # that waited while the first was written come as one).
  def test_a_record_the_logger_raises_on_is_skipped_alone
    logger = SlowLogger.new(failing: [2])
    _, err = capture_io { serve_three(logger) }
    assert_equal ["/n/0", "/n/2"], logger.paths
    assert_includes err, "ferrule: the logger raised IOError: disk full"
  end

end
