# frozen_string_literal: true

# Forked worker processes share one listening socket, and SIGTERM/SIGINT drain in-flight
# requests before a clean exit.
require "minitest/autorun"
require "set"
require "socket"
require "timeout"
require "tmpdir"
require_relative "support"

class WorkersTest < Minitest::Test
  include Support

  # +@started+: a file each /slow request appends its worker's pid to when its block runs.
  def start(workers)
    @started = File.join(Dir.mktmpdir("ferrule-workers-", ENV["TEST_TMPDIR"]), "started")
    reader, writer = IO.pipe
    # Its own process group, so a failing test can clean up the workers too.
    pid = Process.spawn({ "FERRULE_TEST_STARTED" => @started }, RbConfig.ruby, File.join(__dir__, "workers_app.rb"), "0", workers.to_s, pgroup: true, err: writer)
    writer.close
    port = reported_port(reader, pid)
    deadline = Time.now + 30
    while Time.now < deadline
      begin
        return [pid, port] if request(port, "GET", "/pid").status == 200
      rescue SystemCallError
        sleep 0.05
      end
    end
    Process.kill("-KILL", pid)
    raise "the server did not answer within 30 s"
  end

  # The port in the server's startup line (its stderr is passed on). It binds port 0 itself: a
  # port picked here and closed again could be taken by another program before it binds it.
  def reported_port(reader, pid)
    port = Timeout.timeout(30) do
      loop do
        line = reader.gets or raise "the server exited before it listened"
        $stderr.write(line)
        break Integer(Regexp.last_match(1)) if line =~ %r{serving on http://127\.0\.0\.1:(\d+) }
      end
    end
    Thread.new { IO.copy_stream(reader, $stderr) }
    port
  rescue StandardError # Timeout::Error too
    Process.kill("-KILL", pid)
    raise
  end

  def check_drain(pid, port, signal)
    in_flight = Thread.new { request(port, "GET", "/slow?ms=800") }
    # Signalled once the request is in its block: sent before the request was read, the signal
    # would find nothing in flight, however long a guessed sleep was.
    deadline = Time.now + 10
    sleep 0.01 until (File.exist?(@started) && !File.read(@started).strip.empty?) || Time.now > deadline
    assert File.exist?(@started), "the slow request never reached its block"
    Process.kill(signal, pid)
    assert_equal 200, in_flight.value.status, "the in-flight request was cut off instead of drained"
    _, status = Process.wait2(pid)
    assert status.success?, "exited with #{status.inspect}"
    assert_raises(SystemCallError) { request(port, "GET", "/pid") }
  end

  %w[TERM INT].each do |signal|
    define_method("test_two_workers_share_the_port_and_drain_on_#{signal.downcase}") do
      pid, port = start(2)
      pids = Set.new
      deadline = Time.now + 20
      pids << request(port, "GET", "/pid").json["pid"] while pids.size < 2 && Time.now < deadline
      assert_equal 2, pids.size, "only #{pids.to_a} answered"
      refute_includes pids, pid, "the supervisor itself must not serve"
      check_drain(pid, port, signal)
    ensure
      Process.kill("-KILL", pid) rescue nil # rubocop:disable Style/RescueModifier
    end
  end

  def test_a_single_process_drains_on_sigterm
    pid, port = start(1)
    check_drain(pid, port, "TERM")
  ensure
    Process.kill("-KILL", pid) rescue nil # rubocop:disable Style/RescueModifier
  end
end
