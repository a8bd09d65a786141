# frozen_string_literal: true

# WebSockets with a real client (websocket-driver, faye-websocket's protocol library, over a
# TCP socket): a chat room across connections, parameters validated before the upgrade, text and
# binary both ways, the close a block's #close or exception sends, and the client leaving.
require "minitest/autorun"
require "socket"
require "timeout"
require "stringio"
require "websocket/driver"
require_relative "support"

# A WebSocket client on its own thread; what it receives waits in #events. websocket-driver
# is not thread-safe: parsing (the reader thread) and sending (the test) take turns.
class WsClient
  attr_reader :url, :events

  def initialize(port, path, protocols: nil, headers: {})
    @url = "ws://127.0.0.1:#{port}#{path}"
    @socket = TCPSocket.new("127.0.0.1", port)
    @events = Queue.new
    @lock = Mutex.new
    @driver = WebSocket::Driver.client(self, protocols: protocols)
    headers.each { |name, value| @driver.set_header(name, value) }
    @driver.on(:open) { @events << [:open] }
    @driver.on(:message) { |e| @events << [:message, e.data] }
    @driver.on(:close) { |e| @events << [:close, e.code, e.reason] }
    @driver.on(:error) { |e| @events << [:error, e.message] }
    @reader = Thread.new do
      loop do
        data = @socket.readpartial(65_536)
        @lock.synchronize { @driver.parse(data) }
      end
    rescue IOError, SystemCallError
      @events << [:gone]
    end
    @lock.synchronize { @driver.start }
  end

  # The driver, for one call at a time: <tt>client.driver { |d| d.text("hi") }</tt>.
  def driver
    @lock.synchronize { yield @driver }
  end

  def write(data)
    @socket.write(data)
  end

  def next_event
    Timeout.timeout(10) { @events.pop }
  end

  # The next message's data (skipping the open).
  def receive
    loop do
      event = next_event
      return event[1] if event[0] == :message
      raise "expected a message, got #{event.inspect}" unless event[0] == :open
    end
  end

  def closed
    loop do
      event = next_event
      return event[1..] if event[0] == :close
      raise "expected a close, got #{event.inspect}" if %i[gone error].include?(event[0])
    end
  end

  def open?
    next_event == [:open]
  end

  def shutdown
    @socket.close
    @reader.join(5)
  end
end

class WebSocketTest < Minitest::Test
  include Support

  # A handshake's headers, for a plain HTTP client to read a refused one's whole answer.
  UPGRADE = { "connection" => "Upgrade", "upgrade" => "websocket", "sec-websocket-version" => "13", "sec-websocket-key" => "dGhlIHNhbXBsZSBub25jZQ==" }.freeze

  def test_a_chat_room_relays_between_connections_and_notices_who_left
    app = Ferrule::App.new
    rooms = Hash.new { |h, k| h[k] = [] }
    lock = Mutex.new
    app.websocket("/rooms/{room:int}", query: { name: { "type" => "string", "minLength" => 1 } }) do |ws, req|
      room = req.params[:room]
      name = req.query[:name]
      lock.synchronize { rooms[room] << ws }
      ws.on(:message) { |text| lock.synchronize { rooms[room].dup }.each { |member| member.send("#{name}: #{text}") } }
      ws.on(:close) do
        lock.synchronize { rooms[room].delete(ws) }.then { lock.synchronize { rooms[room].dup }.each { |m| m.send("#{name} left") } }
      end
    end
    serving(app) do |port|
      ann = WsClient.new(port, "/rooms/1?name=ann")
      bob = WsClient.new(port, "/rooms/1?name=bob")
      assert ann.open? && bob.open?
      # A block joins its room after the handshake; the message must find both there.
      deadline = Time.now + 10
      sleep 0.01 until lock.synchronize { rooms[1].size } == 2 || Time.now > deadline
      ann.driver { |d| d.text("hello") }
      assert_equal "ann: hello", bob.receive
      assert_equal "ann: hello", ann.receive
      bob.driver { |d| d.close }
      assert_equal [1000, ""], bob.closed
      assert_equal "bob left", ann.receive
      ann.shutdown
      bob.shutdown
    end
  end

  def test_the_before_filters_see_a_websockets_handshake_and_a_halt_refuses_it
    app = Ferrule::App.new
    seen = Queue.new
    app.before do |req|
      seen << "before #{req.path}"
      halt 401, { "www-authenticate" => "Bearer" }, "who are you?" unless req.headers["x-key"]
      req.env["app.user"] = "ann" # the socket's request has it, as Rack's env is shared
    end
    app.after { |_req| seen << "after #{status}" }
    app.websocket("/live/{room:int}") do |ws, req|
      seen << "block #{req.params[:room]}"
      ws.on(:message) { |text| ws.send("#{req.env["app.user"]} in #{req.params[:room]}: #{text}") }
    end
    serving(app) do |port|
      refused = request(port, "GET", "/live/3", headers: UPGRADE)
      assert_equal 401, refused.status
      assert_equal "who are you?", refused.body
      assert_equal "Bearer", refused.headers["www-authenticate"]
      assert_equal ["before /live/3", "after 401"], Array.new(seen.size) { seen.pop }, "refused: the block never ran"

      member = WsClient.new(port, "/live/3", headers: { "x-key" => "k" })
      assert member.open?
      member.driver { |d| d.text("hi") }
      assert_equal "ann in 3: hi", member.receive, "what the filter left in the handshake's env"
      assert_empty Ferrule::WebSocket.instance_variable_get(:@admitted), "the socket took it back"
      # As in Sinatra, where the after filters see the route that upgraded (its 101 is not sent).
      assert_equal ["before /live/3", "after 101", "block 3"], Array.new(seen.size) { seen.pop }
      member.shutdown
    end
  end

  # The README's ```ruby blocks in its WebSockets section, in order.
  def readme_websocket_blocks
    text = File.read(ENV.fetch("FERRULE_README"), encoding: "UTF-8")
    start = text.index("### WebSockets")
    text[start...text.index("\n## ", start)].scan(/```ruby\n(.*?)```/m).flatten
  end

  def test_the_readme_before_filter_refuses_a_handshake_without_its_key
    block = readme_websocket_blocks.find { |b| b.include?("key required") }
    refute_nil block, "no before filter in the README's WebSockets section"
    app = Ferrule::App.new
    eval(block, binding, "README.md") # rubocop:disable Security/Eval -- the README's own example
    app.websocket("/echo") { |ws, req| ws.on(:message) { |text| ws.send("#{req.env["app.key"]}: #{text}") } }
    serving(app) do |port|
      refused = request(port, "GET", "/echo", headers: UPGRADE)
      assert_equal [401, "key required"], [refused.status, refused.body]
      member = WsClient.new(port, "/echo", headers: { "x-key" => "k" })
      assert member.open?
      member.driver { |d| d.text("hi") }
      assert_equal "k: hi", member.receive, "the key the filter kept in the env"
      member.shutdown
    end
  end

  def test_bad_parameters_get_a_problem_response_and_no_connection
    app = Ferrule::App.new
    opened = []
    app.websocket("/rooms/{room:int}") { |_ws, req| opened << req.params[:room] }
    serving(app) do |port|
      client = WsClient.new(port, "/rooms/lobby")
      event = client.next_event
      assert_equal :error, event[0]
      assert_match(/422/, event[1])
      plain = request(port, "GET", "/rooms/1")
      assert_equal 426, plain.status
      assert_equal [], opened
      client.shutdown
    end
  end

  def test_text_and_binary_both_ways_and_the_close_the_block_sends
    app = Ferrule::App.new
    app.websocket("/echo") do |ws, _req|
      ws.on(:message) do |data|
        if data == "bye"
          # A close no server may send is the block's mistake, told at once.
          refused = [[1005, ""], [4000, "x" * 124]].map do |code, reason|
            ws.close(code, reason)
          rescue ArgumentError => e
            e.message
          end
          ws.send(refused.join("|"))
          ws.close(4000, "done")
        else
          ws.send(data)
        end
      end
    end
    serving(app) do |port|
      client = WsClient.new(port, "/echo")
      assert client.open?
      client.driver { |d| d.text("héllo") }
      assert_equal "héllo", client.receive
      client.driver { |d| d.binary([0, 255, 7]) }
      assert_equal [0, 255, 7], client.receive
      client.driver { |d| d.text("bye") }
      assert_equal "ferrule: 1005 is not a close code a server may send (1000-1003, 1007-1014, 3000-4999)|" \
                   "ferrule: a WebSocket close reason is at most 123 bytes of UTF-8, not 124", client.receive
      assert_equal [4000, "done"], client.closed
      client.shutdown
    end
  end

  def test_a_callback_that_raises_closes_with_1011_and_is_logged
    lines = StringIO.new
    app = Ferrule::App.new(logger: Logger.new(lines))
    app.websocket("/boom") { |ws, _req| ws.on(:message) { |_| raise ArgumentError, "secret detail" } }
    serving(app) do |port|
      client = WsClient.new(port, "/boom")
      assert client.open?
      client.driver { |d| d.text("go") }
      code, reason = client.closed
      assert_equal 1011, code
      refute_includes reason, "secret"
      client.shutdown
    end
    assert_match(/GET \/boom: ArgumentError: secret detail/, lines.string)
  end

  def test_the_block_learns_how_the_client_left_and_the_subprotocol
    app = Ferrule::App.new
    seen = Queue.new
    app.websocket("/chat", subprotocols: %w[chat.v2 chat.v1]) do |ws, _req|
      ws.send(ws.protocol.to_s)
      ws.on(:close) { |code, reason| seen << [code, reason] }
    end
    serving(app) do |port|
      client = WsClient.new(port, "/chat", protocols: ["chat.v1"])
      assert_equal "chat.v1", client.receive
      client.driver { |d| d.close("bye", 4100) }
      Timeout.timeout(10) { assert_equal [4100, "bye"], seen.pop }
      client.shutdown
    end
  end

  # Found by a README-driven probe: the README says faye-websocket's shape, yet event.data was
  # a NoMethodError, a one-argument close block got the code alone and on(:open) was refused.
  def test_faye_websockets_event_objects_and_open_work_beside_plain_values
    app = Ferrule::App.new
    seen = Queue.new
    app.websocket("/faye") do |ws, _req|
      ws.on(:open) { |event| ws.send("open #{event.socket.equal?(ws)}") }
      ws.on(:message) { |event| ws.send("#{event.data.upcase} #{event.is_a?(String)}") }
      ws.on(:close) { |event| seen << [event.code, event.reason] }
      ws.on(:close) { |code| seen << [code == 4001, Integer(code)] } # written for the code alone
    end
    serving(app) do |port|
      client = WsClient.new(port, "/faye")
      assert_equal "open true", client.receive
      client.driver { |d| d.text("hi") }
      assert_equal "HI true", client.receive
      client.driver { |d| d.close("done", 4001) }
      Timeout.timeout(10) { assert_equal [[4001, "done"], [true, 4001]], [seen.pop, seen.pop] }
      client.shutdown
    end
  end

  def test_the_readme_chat_room_relays_between_the_members_of_a_room
    block = readme_websocket_blocks.first
    assert block, "no ruby block in the README's WebSockets section"
    app = Ferrule::App.new
    example = binding
    eval(block, example, "README.md") # rubocop:disable Security/Eval -- the README's own example
    serving(app) do |port|
      ann = WsClient.new(port, "/chat/lobby?name=ann")
      bob = WsClient.new(port, "/chat/lobby?name=bob")
      eve = WsClient.new(port, "/chat/other?name=eve")
      assert ann.open? && bob.open? && eve.open?
      # A block joins its room after the handshake; the messages must find everyone there.
      rooms = example.local_variable_get(:rooms)
      lock = example.local_variable_get(:lock)
      deadline = Time.now + 10
      sleep 0.01 until lock.synchronize { rooms.values.sum(&:size) } == 3 || Time.now > deadline
      bob.driver { |d| d.text("hi all") }
      assert_equal "bob: hi all", ann.receive
      assert_equal "bob: hi all", bob.receive
      eve.driver { |d| d.text("alone") }
      assert_equal "eve: alone", eve.receive
      [ann, bob, eve].each(&:shutdown)
    end
  end

  def test_a_websocket_route_needs_a_block_and_known_options
    app = Ferrule::App.new
    assert_raises(ArgumentError) { app.websocket("/x") }
    error = assert_raises(ArgumentError) { app.websocket("/x", body_limit: 5) { |_ws, _req| nil } }
    assert_match(/unknown websocket option/, error.message)
  end

  # Found by a Sinatra port: helpers, params, request and session were NoMethodErrors in a
  # WebSocket block (it ran outside any request context), so real code closed with 1011 at once.
  def test_a_websocket_block_runs_in_its_handshakes_context_with_helpers_params_and_session
    app = Ferrule::App.new
    app.sessions(secret: "k" * 64)
    app.helpers { def shout(text) = text.upcase }
    app.websocket("/echo/{room}") do |ws|
      who = "#{params[:room]}:#{request.path_info}:#{session[:user].inspect}"
      ws.on(:message) { |text| ws.send("#{shout(text)} #{who}") }
    end
    serving(app) do |port|
      client = WsClient.new(port, "/echo/lobby")
      assert client.open?
      client.driver { |d| d.text("hi") }
      assert_equal "HI lobby:/echo/lobby:nil", client.receive
      client.shutdown
    end
  end
end
