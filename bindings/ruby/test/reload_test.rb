# frozen_string_literal: true

# `ferrule app.rb --reload`: the app is served again when its source changes, and the
# supervisor stops cleanly on SIGTERM.
require "minitest/autorun"
require "net/http"
require "open3"
require "socket"
require "tmpdir"
require_relative "support"

class ReloadTest < Minitest::Test
  include Support

  def source(port, version)
    <<~RUBY
      require "ferrule"
      app = Ferrule::App.new
      app.get("/version") { "#{version}" }
      app.run(port: #{port})
    RUBY
  end

  def answer(port)
    Net::HTTP.start("127.0.0.1", port, open_timeout: 2, read_timeout: 2) { |http| http.get("/version").body }
  rescue StandardError
    ""
  end

  def wait_for(port, wanted)
    until_time = Process.clock_gettime(Process::CLOCK_MONOTONIC) + 20
    while Process.clock_gettime(Process::CLOCK_MONOTONIC) < until_time
      return true if answer(port) == wanted

      sleep 0.1
    end
    false
  end

  def test_a_changed_source_is_served_again
    Dir.mktmpdir("ferrule-reload-", ENV["TEST_TMPDIR"]) do |dir|
      port = free_port
      file = File.join(dir, "app.rb")
      File.write(file, source(port, "one"))
      command = [RbConfig.ruby, Gem.bin_path("ferrule", "ferrule"), file, "--reload", "--reload-dir", dir]
      Open3.popen3(*command) do |_in, _out, err, wait|
        stderr = Thread.new { err.read }
        begin
          assert wait_for(port, "one"), "the app started"
          File.write(file, source(port, "two"))
          assert wait_for(port, "two"), "the changed app is served"
        ensure
          Process.kill("TERM", wait.pid)
        end
        assert_equal 0, wait.value.exitstatus, stderr.value
        assert_match(/app\.rb changed; restarting/, stderr.value)
      end
      assert_equal "", answer(port), "the app stopped with its supervisor"
    end
  end
end
