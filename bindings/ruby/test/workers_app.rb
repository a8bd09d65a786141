# frozen_string_literal: true

# Served by test/workers_test.rb with 1 or 2 worker processes (ARGV: port workers).
require "ferrule"

app = Ferrule::App.new
app.get("/pid") { { pid: Process.pid } }
# A test waits for this file to name a worker before it signals: then the request is in flight.
started = ENV.fetch("FERRULE_TEST_STARTED", nil)
app.get("/slow", query: { ms: { type: "integer", default: 500 } }) do |req|
  File.open(started, "a") { |file| file.puts(Process.pid) } if started
  sleep(req.query[:ms] / 1000.0)
  { pid: Process.pid, slept: req.query[:ms] }
end
app.run(host: "127.0.0.1", port: Integer(ARGV[0]), workers: Integer(ARGV[1] || 1), threads: 2, runtime_threads: 1)
