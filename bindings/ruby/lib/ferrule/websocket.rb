# frozen_string_literal: true

module Ferrule
  # A WebSocket connection, as a block of <tt>app.websocket(path)</tt> gets it (faye-websocket's
  # shape):
  #
  #   app.websocket("/echo") do |ws, request|
  #     ws.on(:message) { |data| ws.send(data) }   # data.data too, as faye's event
  #     ws.on(:close) { |code, reason| ... }       # or { |event| event.code }
  #   end
  #
  # The block runs once the route's parameters have passed and the connection is upgraded; it
  # registers callbacks and returns. Messages are delivered in order on one of the app's
  # threads: everything that arrived is taken in one call, and a thread waits for more in the
  # core's mailbox, without the GVL. Text arrives as a UTF-8 String, binary as a binary
  # (ASCII-8BIT) String, and #send sends them back the same way. Sends never wait; a client that
  # leaves more than +ws_send_buffer_bytes+ unread is closed with 1008. A block or callback
  # that raises closes the connection with 1011 (logged with its backtrace).
  class WebSocket
    CALLBACKS = %i[open message close].freeze

    # A message as a +message+ callback gets it: the String itself (text in UTF-8, binary as
    # ASCII-8BIT), which also answers faye-websocket's <tt>event.data</tt>.
    class Message < String
      def data
        self
      end
    end

    # What a one-argument +close+ callback gets, as faye-websocket's: <tt>event.code</tt>,
    # <tt>event.reason</tt>. A callback taking two gets <tt>(code, reason)</tt>. A block written
    # for the code alone (<tt>{ |code| code == 1000 }</tt>, as before) still reads it: the event
    # compares equal to its code and converts to it.
    CloseEvent = Struct.new(:code, :reason) do
      def ==(other)
        other.is_a?(Integer) ? code == other : super
      end

      def to_i = code
      def to_int = code
    end
    # What an +open+ callback gets: the socket is open once the route's block has run.
    OpenEvent = Struct.new(:socket)

    # The open sockets by the core's id: where a wake-up finds its socket.
    @open = {}
    # The env each handshake's +before+ filters left in its request (<tt>req.env["user"] =
    # …</tt>), by the core's handshake id, until its socket opens or never will.
    @admitted = {}
    @lock = Mutex.new

    class << self
      # What runs where a handshake's route block would, once its +before+ filters let it
      # through: keeps its request's env for the socket's request, and answers 101, which
      # tells the core to upgrade it (the route's block runs once the socket is open).
      def admission(handshake, request)
        proc do
          env = request.__ferrule_env_if_made
          WebSocket.__send__(:keep, handshake, env) if handshake && env
          [101, {}, []]
        end
      end

      # A handshake the filters saw will not open: what they left is let go of.
      def unopened(handshake)
        @lock.synchronize { @admitted.delete(handshake) }
      end

      # Runs the route's +handler+ for a new connection and delivers what has arrived since.
      # Its request's env is the one its handshake's filters left, if they left one.
      def open(native, handler, request, handshake = nil)
        env = handshake && @lock.synchronize { @admitted.delete(handshake) }
        request.__ferrule_adopt_env(env) if env
        ws = new(native)
        @lock.synchronize { @open[native.id] = ws }
        ws.__run { handler.call(ws, request) }
        ws.__opened
        ws.__deliver
      end

      # Messages (or the end) wait for the socket filed under +id+.
      def arrived(id)
        ws = @lock.synchronize { @open[id] }
        ws&.__deliver
      end

      def forget(id)
        @lock.synchronize { @open.delete(id) }
      end

      private

      def keep(handshake, env)
        @lock.synchronize { @admitted[handshake] = env }
      end
    end

    def initialize(native)
      @native = native
      @callbacks = { open: [], message: [], close: [] }
      @closed = false
    end

    # The subprotocol chosen in the handshake (nil when none).
    def protocol
      @native.subprotocol
    end

    # Bytes sent and not yet taken by the client.
    def buffered_amount
      @native.buffered
    end

    # Registers a callback: <tt>on(:message) { |data| }</tt>, <tt>on(:close) { |code, reason| }</tt>.
    def on(event, &block)
      raise ArgumentError, "ferrule: WebSocket events are #{CALLBACKS.join(', ')}, not #{event.inspect}" unless CALLBACKS.include?(event.to_sym)
      raise ArgumentError, "ferrule: on(#{event.inspect}) needs a block" unless block

      @callbacks[event.to_sym] << block
      self
    end

    # Sends a String: binary (ASCII-8BIT) ones as binary messages, others as text. An Array of
    # bytes is binary too (as faye-websocket takes it). False once the socket is closed.
    def send(data) # rubocop:disable Lint/UselessMethodDefinition -- faye-websocket's name
      case data
      when Array then @native.send_binary(data.pack("C*"))
      when String then data.encoding == Encoding::BINARY ? @native.send_binary(data) : @native.send_text(data.encode(Encoding::UTF_8))
      else @native.send_text(data.to_s)
      end
    end

    def send_text(text)
      @native.send_text(text.to_s.encode(Encoding::UTF_8))
    end

    def send_binary(data)
      @native.send_binary(data.to_s.b)
    end

    def ping(data = "")
      @native.ping(data.to_s.b)
    end

    # Closes with +code+ once what was sent before has gone; on(:close) callbacks follow. A
    # code no server may send (1005, say) or a reason over 123 bytes is an ArgumentError.
    def close(code = 1000, reason = "")
      @native.close(Integer(code || 1000), reason.to_s)
    end

    # Delivers what arrived, until a take finds nothing (which arms the next wake-up).
    def __deliver
      loop do
        code, reason, *messages = @native.take
        messages.each { |data| __run { @callbacks[:message].each { |callback| callback.call(Message.new(data)) } } }
        if code
          __finish(code, reason)
          return
        end
        return if messages.empty?
      end
    end

    # faye-websocket's +open+, for callbacks the route's block registered.
    def __opened
      return if @callbacks[:open].empty?

      event = OpenEvent.new(self)
      __run { @callbacks[:open].each { |callback| callback.call(event) } }
    end

    def __run
      yield
    rescue StandardError => e
      @native.fail("#{e.class}: #{e.message}\n#{Array(e.backtrace).first(20).join("\n")}")
    end

    private

    def __finish(code, reason)
      return if @closed

      @closed = true
      WebSocket.forget(@native.id)
      __run do
        @callbacks[:close].each do |callback|
          callback.arity == 1 ? callback.call(CloseEvent.new(code, reason)) : callback.call(code, reason)
        end
      end
    end
  end
end
