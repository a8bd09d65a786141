# frozen_string_literal: true

# Streamed bodies and Server-Sent Events with real clients (Net::HTTP, a raw socket, Rack's
# mock): stream blocks, Enumerators and Rack each-bodies are sent chunk by chunk; a client that
# leaves ends the producer; one that raises is logged and the response cut off; sse events are
# framed by the core.
require "minitest/autorun"
require "socket"
require "timeout"
require "stringio"
require "rack/mock"
require_relative "support"

class StreamingTest < Minitest::Test
  include Support

  # Opens +path+ on a raw socket; returns it with the response head read.
  def open_stream(port, path, headers = {})
    socket = TCPSocket.new("127.0.0.1", port)
    socket.write("GET #{path} HTTP/1.1\r\nHost: t\r\n#{headers.map { |k, v| "#{k}: #{v}\r\n" }.join}\r\n")
    head = +""
    head << socket.readpartial(4096) until head.include?("\r\n\r\n")
    [socket, head]
  end

  # Reads from +socket+ until +text+ has arrived; returns what was read.
  def read_until(socket, seen, text)
    seen << socket.readpartial(4096) until seen.include?(text)
    seen
  end

  def test_a_stream_block_is_sent_chunk_by_chunk_as_it_writes
    app = Ferrule::App.new
    gate = Queue.new
    app.get("/count/{n:int}") do |req|
      stream do |out|
        out << "first\n"
        gate.pop # the client must have the first chunk before the rest is made
        req.params[:n].times { |i| out << "#{i}\n" }
      end
    end
    serving(app) do |port|
      socket, head = open_stream(port, "/count/3")
      assert_includes head.downcase, "transfer-encoding: chunked"
      seen = head.split("\r\n\r\n", 2)[1]
      read_until(socket, seen, "first\n")
      gate << :go
      read_until(socket, seen, "\r\n0\r\n\r\n")
      %w[0 1 2].each { |i| assert_includes seen, "#{i}\n" }
      socket.close
    end
  end

  def test_an_enumerator_and_a_rack_each_body_stream_and_a_rack_body_is_closed
    app = Ferrule::App.new
    closed = Queue.new
    body = Object.new
    body.define_singleton_method(:each) { |&block| %w[a b c].each(&block) }
    body.define_singleton_method(:close) { closed << true }
    app.get("/enum") { Enumerator.new { |y| y << "x" << "y" } }
    app.get("/rack") { [201, { "content-type" => "text/csv" }, body] }
    app.get("/typed") do
      status 202
      content_type "text/csv"
      stream { |out| out << "id\n" << "1\n" }
    end
    serving(app) do |port|
      enum = request(port, "GET", "/enum")
      # Found by Sinatra's corpus: a stream without a type went as application/octet-stream,
      # which a browser downloads; it is text, as a plain String is.
      assert_equal ["xy", "text/plain; charset=utf-8"], [enum.body, enum.headers["content-type"]]
      csv = request(port, "GET", "/rack")
      assert_equal [201, "text/csv", "abc"], [csv.status, csv.headers["content-type"], csv.body]
      assert Timeout.timeout(10) { closed.pop }, "the Rack body was closed"
      typed = request(port, "GET", "/typed")
      assert_equal [202, "text/csv; charset=utf-8", "id\n1\n"], [typed.status, typed.headers["content-type"], typed.body]
    end
  end

  def test_a_client_that_leaves_ends_the_producer_which_was_held_back_while_unread
    app = Ferrule::App.new
    made = 0
    ended = Queue.new
    app.get("/endless") do
      stream do |out|
        loop do
          made += 1
          out << ("x" * 65_536)
        end
      ensure
        ended << true
      end
    end
    serving(app) do |port|
      socket, = open_stream(port, "/endless")
      sleep 0.3
      assert_operator made * 65_536, :<, 64 * 1024 * 1024, "#{made} chunks made for a client that read none"
      socket.close
      assert Timeout.timeout(10) { ended.pop }, "the stream block's ensure ran when its client left"
    end
  end

  def test_a_stream_that_raises_is_logged_and_the_response_cut_off
    out = StringIO.new
    app = Ferrule::App.new(logger: Logger.new(out))
    app.get("/broken") do
      stream do |o|
        o << "partial"
        raise KeyError, "secret-detail"
      end
    end
    serving(app) do |port|
      socket, head = open_stream(port, "/broken")
      rest = head.split("\r\n\r\n", 2)[1]
      begin
        loop { rest << socket.readpartial(4096) }
      rescue EOFError, Errno::ECONNRESET
        nil
      end
      assert_includes rest, "partial"
      refute rest.end_with?("0\r\n\r\n"), "no last chunk: the client knows it is incomplete"
    end
    assert_match(/the stream raised .*KeyError/m, out.string)
  end

  def test_sse_events_are_framed_by_the_core_and_resume_from_last_event_id
    app = Ferrule::App.new
    app.get("/feed") do |req|
      start = req.header("last-event-id").to_i + 1
      sse do |out|
        out << { data: { n: start }, event: "tick", id: start, retry: 1500 }
        out << { "data" => "two\nlines", "id" => start + 1 }
        out << "plain"
      end
    end
    serving(app) do |port|
      reply = request(port, "GET", "/feed", headers: { "last-event-id" => "41" })
      assert_equal "text/event-stream", reply.headers["content-type"]
      assert_equal "no-cache", reply.headers["cache-control"]
      assert_equal "event: tick\nid: 42\nretry: 1500\ndata: {\"n\":42}\n\nid: 43\ndata: two\ndata: lines\n\ndata: plain\n\n", reply.body
    end
  end

  # Before: { d: 1 } was sent as an empty event, its value lost without a word.
  def test_an_event_hash_with_a_key_that_is_no_event_field_ends_the_stream_and_is_logged
    out = StringIO.new
    app = Ferrule::App.new(logger: Logger.new(out))
    app.get("/feed") do
      sse do |events|
        events << { data: "first" }
        events << { d: 1 }
        events << "never sent"
      end
    end
    serving(app) do |port|
      assert_equal "data: first\n\n", request(port, "GET", "/feed").body
    end
    assert_match(/an event has no field "d"/, out.string)
  end

  def test_a_stream_works_under_rack_too
    app = Ferrule::App.new
    app.get("/enum") { Enumerator.new { |y| 3.times { |i| y << i.to_s } } }
    response = Rack::MockRequest.new(app).get("/enum")
    assert_equal [200, "012"], [response.status, response.body]
  end

  # An event stream's own keep-alive period (sse_starlette's ping=, in Ruby's words).
  def test_sse_keep_alive_sends_its_comment_on_its_own_period
    app = Ferrule::App.new(sse_keep_alive_ms: 3_600_000)
    app.get("/quiet") do
      sse(keep_alive: 0.05) do |out|
        out << "hello"
        sleep 3
      end
    end
    assert_raises(ArgumentError) { Ferrule::EventStream.new(keep_alive: -1) { nil } }
    serving(app) do |port|
      socket = TCPSocket.new("127.0.0.1", port)
      socket.write("GET /quiet HTTP/1.1\r\nHost: x\r\n\r\n")
      seen = +""
      Timeout.timeout(5) { seen << socket.readpartial(4096) until seen.include?(":\n\n") }
      assert_includes seen, "data: hello\n\n"
      socket.close
    end
  end
end
