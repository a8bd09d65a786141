# frozen_string_literal: true

# Handler deadlines free the workers: requests given up while they waited behind a blocking
# block are never started, a deadline is a 504, and a full queue is a 503 at once.
require "minitest/autorun"
require_relative "support"

class DeadlinesTest < Minitest::Test
  include Support

  def test_overruns_cost_one_run_not_one_each
    app = Ferrule::App.new(timeout_ms: 200)
    runs = Queue.new
    released = false
    app.get("/block") do
      runs << 1
      # Held until every client has its 504, not for a guessed 0.6 s: then all four arrived
      # while this one run held the thread, however late a loaded machine started a client.
      until_released = Process.clock_gettime(Process::CLOCK_MONOTONIC) + 10
      sleep 0.01 until released || Process.clock_gettime(Process::CLOCK_MONOTONIC) > until_released
      { done: true }
    end
    app.get("/health", timeout_ms: 5000) { "ok" }
    serving(app, threads: 1) do |port|
      statuses = Array.new(4) { Thread.new { request(port, "GET", "/block").status } }.map(&:value)
      released = true
      started = Process.clock_gettime(Process::CLOCK_MONOTONIC)
      assert_equal 200, request(port, "GET", "/health").status
      waited = Process.clock_gettime(Process::CLOCK_MONOTONIC) - started
      assert_equal [504] * 4, statuses
      # Before: every abandoned block still ran, one after another (4 × 0.6 s).
      assert_equal 1, runs.size, "handler runs for requests nobody waited for"
      # The one run ends when released; abandoned runs would have run (and been counted) before it.
      assert_operator waited, :<, 1.5
    end
  end

  def test_beyond_the_queue_limit_requests_get_503_at_once
    app = Ferrule::App.new(max_queued_requests: 1)
    release = Queue.new
    entered = Queue.new
    app.get("/wait") do
      entered << true
      release.pop
    end
    serving(app, threads: 1) do |port|
      holder = Thread.new { request(port, "GET", "/wait").status }
      # The holder's request is in its block, so the next one is beyond the queue.
      Timeout.timeout(10) { entered.pop }
      refused = request(port, "GET", "/wait")
      release << "released"
      assert_equal 503, refused.status
      assert_equal "1", refused.headers["retry-after"]
      assert_equal 200, holder.value
    end
  end
end
