# frozen_string_literal: true

module Ferrule
  # A body sent as it is produced: <tt>Ferrule::Stream.new { |out| out << "chunk" }</tt>, or
  # +stream+ inside a route block (Sinatra's shape). The block runs on a thread of its own;
  # <tt>out << chunk</tt> (a String) returns at once while fewer than 64 chunks (64 KiB) wait for
  # the client, and waits when that many do, so the block runs at most that far ahead of its
  # client. A client that leaves ends the block: +out <<+ raises Ferrule::Stream::Closed, so its
  # +ensure+ runs.
  class Stream
    # Raised by <tt>out <<</tt> once the client has gone.
    class Closed < StandardError; end

    def initialize(&producer)
      raise ArgumentError, "Ferrule::Stream needs a block" unless producer

      @producer = producer
    end

    # Runs the producer, yielding each chunk it writes (what Rack calls +each+).
    def each(&block)
      @producer.call(self.class::Output.new(block))
    end

    # What the producer writes to (Sinatra's +out+).
    class Output
      def initialize(sink)
        @sink = sink
        @closed = false
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
