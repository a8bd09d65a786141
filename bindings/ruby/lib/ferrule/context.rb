# frozen_string_literal: true

module Ferrule
  # What a route block runs in, as in Sinatra: the block is evaluated with +self+ a fresh
  # Context, so it can call +status+, +headers+, +content_type+, +redirect+ and +halt+, and
  # still receives the Request as its argument (<tt>app.get("/") { |req| ... }</tt>) or as
  # +request+. Methods defined at the top level stay callable; the declaring object's
  # instance variables do not (as in Sinatra).
  #
  # What the block sets joins a plain result: <tt>status 201; { id: 7 }</tt> sends the Hash as
  # JSON with 201. A Ferrule::Response or Rack triplet the block returns is sent as it is,
  # with the headers set here added.
  class Context
    attr_reader :request

    def initialize(request, default_status)
      @request = request
      @status = nil
      @headers = nil
      @default_status = default_status
    end

    # Runs +block+ for the request; returns what the core sends.
    def run(block)
      result = catch(:halt) { instance_exec(@request, &block) }
      finish(result)
    end

    # Sets the status (or returns the one set so far).
    def status(code = nil)
      @status = Integer(code) unless code.nil?
      @status || @default_status
    end

    # Adds headers (a value may be an Array: one header line each), or returns those set.
    def headers(hash = nil)
      (@headers ||= {}).merge!(hash.transform_keys { |k| k.to_s.downcase }) if hash
      @headers || {}
    end

    # Sets Content-Type: a media type, or :json, :html, :text, :xml.
    def content_type(type)
      headers("content-type" => MEDIA_TYPES.fetch(type.to_sym) { type.to_s })
    end

    # Stops the block and redirects (302 after GET and HEAD, 303 otherwise, as Sinatra does).
    def redirect(location, code = nil)
      code ||= %w[GET HEAD].include?(@request.method) ? 302 : 303
      halt code, { "location" => location.to_s }, ""
    end

    # Stops the block and answers: <tt>halt</tt>, <tt>halt 404</tt>, <tt>halt 401, "no"</tt>,
    # <tt>halt 302, { "location" => "/" }, ""</tt>, <tt>halt "body"</tt>, or a Rack triplet.
    def halt(*response)
      response = response.first if response.length == 1 && response.first.is_a?(Array)
      status_code = response.first.is_a?(Integer) ? response.shift : nil
      status(status_code) if status_code
      headers(response.shift) if response.first.is_a?(Hash) && response.length > 1
      body = response.first
      # A Rack body (an Array of Strings) is its Strings, not a JSON Array.
      body = body.join if body.is_a?(Array) && body.all?(String)
      throw :halt, Halted.new(body)
    end

    # A body sent as the block produces it (Sinatra's +stream+): <tt>stream { |out| out << "a" }</tt>.
    def stream(&producer)
      Stream.new(&producer)
    end

    # Server-Sent Events: <tt>sse { |out| out << { data: "hi", id: 1 } }</tt> (see Ferrule::EventStream).
    def sse(&producer)
      EventStream.new(&producer)
    end

    MEDIA_TYPES = { json: "application/json", html: "text/html; charset=utf-8", text: "text/plain; charset=utf-8",
                    xml: "application/xml" }.freeze
    private_constant :MEDIA_TYPES

    # The body a +halt+ left (nil: an empty one).
    Halted = Struct.new(:body)
    private_constant :Halted

    private

    def finish(result)
      if result.is_a?(Halted)
        return Response.new(result.body.nil? ? "" : result.body, status: status, headers: @headers)
      end
      return result if @status.nil? && @headers.nil?

      case result
      when Response
        Response.new(result.body, status: @status || result.status, headers: merged(result.headers), type: result.type)
      when Array
        return result unless result.length == 3 && result[0].is_a?(Integer)

        [@status || result[0], merged(result[1]), result[2]]
      else
        Response.new(result, status: status, headers: @headers)
      end
    end

    def merged(given)
      return @headers if given.nil?

      (@headers || {}).merge(given.transform_keys { |k| k.to_s.downcase })
    end
  end
end
