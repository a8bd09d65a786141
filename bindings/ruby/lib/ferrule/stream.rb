# frozen_string_literal: true

module Ferrule
  # A body sent as it is produced: <tt>Ferrule::Stream.new { |out| out << "chunk" }</tt>, or
  # +stream+ inside a route block (Sinatra's shape). The block runs on a thread of its own;
  # <tt>out << chunk</tt> (a String) returns at once while fewer than 64 chunks (64 KiB) wait for
  # the client, and waits when that many do, so the block runs at most that far ahead of its
  # client. A client that leaves ends the block: +out <<+ raises Ferrule::Stream::Closed, so its
  # +ensure+ runs. The block sees the fiber-locals of the request that made the stream
  # (<tt>Thread.current[:request_id]</tt> a filter set, RequestStore's), as it would on Puma's
  # thread; when it ends, for whatever reason, +out.callback+ blocks run.
  class Stream
    # Raised by <tt>out <<</tt> once the client has gone.
    class Closed < StandardError; end

    def initialize(&producer)
      raise ArgumentError, "Ferrule::Stream needs a block" unless producer

      @producer = producer
      @made_on = Thread.current
      @locals = @made_on.keys.to_h { |key| [key, @made_on[key]] }
    end

    # Runs the producer, yielding each chunk it writes (what Rack calls +each+).
    def each(&block)
      current = Thread.current
      @locals.each { |key, value| current[key] = value } unless current.equal?(@made_on)
      output = self.class::Output.new(block)
      begin
        @producer.call(output)
      ensure
        output.ended
      end
    end

    # What the producer writes to (Sinatra's +out+).
    class Output
      def initialize(sink)
        @sink = sink
        @closed = false
        @callbacks = []
        @ended = false
      end

      # Sinatra's <tt>out.callback { conns.delete(out) }</tt>: runs once the stream has ended
      # (its block returned or raised, or its client left); at once if it has. +errback+ is the
      # same, as in Sinatra on a threaded server.
      def callback(&block)
        return block.call if @ended

        @callbacks << block
        self
      end
      alias errback callback

      # The stream is over: its callbacks run (one that raises is logged; the rest still run).
      def ended
        @ended = true
        @closed = true
        callbacks, @callbacks = @callbacks, []
        callbacks.each do |callback|
          callback.call
        rescue StandardError => e
          warn "ferrule: a stream's callback raised: #{e.class}: #{e.message}"
        end
      end

      # Sends +chunk+ (a String; anything else as its +to_s+, as Sinatra sends a Symbol or a
      # number). Once +close+d, a write is dropped.
      def <<(chunk)
        return self if @closed

        @sink.call(sendable(chunk))
        self
      rescue Closed
        @closed = true
        raise
      end
      alias write <<

      # Nothing more is sent (Sinatra's +out.close+); the response ends when the block returns.
      def close
        @closed = true
        nil
      end

      # Whether +close+ was called or the client has gone.
      def closed?
        @closed
      end

      private

      def sendable(chunk)
        chunk.is_a?(String) ? chunk : chunk.to_s
      end
    end
  end

  # A stream of Server-Sent Events: <tt>sse { |out| out << { data: { n: 1 }, event: "tick", id: 1 } }</tt>.
  # An event is a Hash of +data+ (a String as it is, anything else as JSON), +event+, +id+,
  # +retry+ (milliseconds) and +comment+, or plain data. The core frames the events, keeps a
  # quiet stream alive (+sse_keep_alive_ms+) and ends it at shutdown; read
  # <tt>req.header("last-event-id")</tt> to resume after a reconnect.
  class EventStream < Stream
    # Its own keep-alive period, in seconds (0: none), in place of the app's +sse_keep_alive_ms+.
    attr_reader :keep_alive

    def initialize(keep_alive: nil, &producer)
      unless keep_alive.nil? || (keep_alive.is_a?(Numeric) && keep_alive >= 0)
        raise ArgumentError, "ferrule: sse keep_alive is seconds, 0 or more (0: none), not #{keep_alive.inspect}"
      end

      super(&producer)
      @keep_alive = keep_alive
    end

    # An event is a Hash or plain data, which the core frames: sent as it is given.
    class Output < Stream::Output
      private

      def sendable(event)
        event
      end
    end
  end

  # Runs streamed bodies: one Ruby thread per stream (as Puma gives a streaming response its
  # thread), so a long stream never holds a worker that serves requests.
  module Streaming
    # +out+ is the core's end of the stream (Ferrule::StreamOut): +write+ waits, with the GVL
    # released, only while a whole batch waits for the client, and returns false once it has left.
    def self.start(out, body)
      Thread.new do
        Thread.current.report_on_exception = false
        begin
          body.each do |chunk|
            next if out.write(chunk)

            # The client left: end the producer (a Ferrule::Stream's block sees Closed).
            raise Stream::Closed, "the client has gone"
          end
          out.finish
        rescue Stream::Closed
          nil
        rescue StandardError => e
          out.fail(e)
        ensure
          body.close if body.respond_to?(:close)
        end
      end
    end
  end
end
