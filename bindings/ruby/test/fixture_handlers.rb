# frozen_string_literal: true

# The fixture corpus's handler kinds (fixtures/README.md), written with the Ruby API. Each
# returns only what it received: the typed, validated values the core handed over.
require "digest"
require "ferrule"

module FixtureHandlers
  module_function

  def plain(value)
    case value
    when Ferrule::UploadedFile
      { filename: value.filename, content_type: value.content_type, size: value.size, sha256: Digest::SHA256.hexdigest(value.data) }
    when Array then value.map { |v| plain(v) }
    when Hash then value.transform_values { |v| plain(v) }
    when Date then value.iso8601
    when Time
      value.utc_offset.zero? && value.utc? ? value.strftime("%Y-%m-%dT%H:%M:%S+00:00") : value.strftime("%Y-%m-%dT%H:%M:%S%:z")
    else value
    end
  end

  def echo(req)
    out = {}
    { path: req.params, query: req.query, headers: req[:headers], cookies: req[:cookies] }.each do |key, values|
      out[key] = plain(values) unless values.empty?
    end
    body = req[:body] # the parsed body alone (+body+ is an IO of the bytes when none is declared)
    if body.is_a?(String) && body.encoding == Encoding::BINARY
      out[:body] = body.dup.force_encoding(Encoding::UTF_8).scrub("\uFFFD")
    elsif !body.nil?
      out[:body] = plain(body)
    end
    out
  end

  # A stream of +kind+ that writes "partial", then raises as "fail" does.
  def partial_then_fail(kind)
    kind.new do |out|
      out << "partial"
      raise "SECRET-TOKEN-42 database password"
    end
  end

  # What the request carried and the subprotocol, then every message back in kind; "close CODE"
  # closes with that code, "raise" fails as "fail" does.
  def socket_echo(ws, req)
    ws.send(JSON.generate(echo(req).merge("subprotocol" => ws.protocol)))
    ws.on(:message) do |data|
      raise "SECRET-TOKEN-42 database password" if data == "raise"

      if data.encoding != Encoding::BINARY && data.start_with?("close ")
        ws.close(Integer(data[6..]), "requested")
      else
        ws.send(data)
      end
    end
  end

  # Where the +file+ kind's files are (fixtures/served).
  SERVED = File.join(ENV.fetch("FERRULE_FIXTURES_DIR") { File.expand_path("../../../fixtures", __dir__) }, "served")

  HANDLERS = {
    "echo" => ->(req) { echo(req) },
    "status" => lambda do |req|
      code = req.params[:code]
      Ferrule::Response.new([204, 304].include?(code) ? nil : { status: code }, status: code)
    end,
    "fail" => ->(_req) { raise "SECRET-TOKEN-42 database password" },
    "sleep" => lambda do |req|
      sleep(req.query[:ms] / 1000.0)
      echo(req)
    end,
    "repeat" => ->(req) { { data: req.query[:char] * req.query[:n] } },
    "text" => ->(req) { req.query[:text] },
    # Outside a block's Context there is no +send_file+: the Rack body it answers with, which
    # names its file.
    "file" => ->(req) { [200, {}, Ferrule::Context::FileBody.new(File.join(SERVED, req.query[:name]))] },
    "raw" => lambda do |req|
      { n: req.query[:n], query: req.query_pairs, extra: req.header("x-extra"), cookies: req.cookie_pairs,
        body: req.raw_body.dup.force_encoding(Encoding::UTF_8).scrub("\uFFFD") }
    end,
    "origin" => ->(req) { { client: req.ip, scheme: req.scheme, host: req.host_with_port } },
    "part_headers" => lambda do |req|
      files = (req.body || {}).select { |_, v| v.is_a?(Ferrule::UploadedFile) || (v.is_a?(Array) && v.first.is_a?(Ferrule::UploadedFile)) }
      files.transform_values { |v| v.is_a?(Array) ? v.map(&:headers) : v.headers }
    end,
    # The JSON body as the handler's result: the route's declared response schema decides what
    # of it is sent.
    "result" => lambda do |req|
      code = req.query[:status]
      code.nil? ? req.body : Ferrule::Response.new(req.body, status: code)
    end,
    # The JSON body as the text it arrived in, sent as JSON (what `content_type :json` and a
    # String give a block): the declared response schema still decides what of it is sent.
    "result_text" => lambda do |req|
      Ferrule::Response.new(req.raw_body, headers: { "content-type" => "application/json" })
    end,
    "stream" => lambda do |req|
      Ferrule::Stream.new { |out| req.query[:n].times { |i| out << "#{i}:#{req.query[:word]}\n" } }
    end,
    # These lambdas run outside a block's Context, so they build the streams directly (a
    # route block would call +stream+ and +sse+).
    "events" => lambda do |req|
      start = req.header("last-event-id").to_i
      Ferrule::EventStream.new do |out|
        req.query[:n].times { |i| out << { data: { i: i, word: req.query[:word] }, event: "tick", id: start + i + 1 } }
        out << req.query[:word]
      end
    end,
    "stream_fail" => ->(_req) { partial_then_fail(Ferrule::Stream) },
    "events_fail" => ->(_req) { partial_then_fail(Ferrule::EventStream) },
    "socket_echo" => ->(ws, req) { socket_echo(ws, req) },
  }.freeze

  # The hook setups of fixtures/README.md ("Hooks"), in Sinatra's idiom, registered in order.
  def self.install_hooks(app, names)
    names.each do |name|
      case name
      when "trace"
        app.before { @trace = ["on_request"] }
        app.hook(:pre_handler) { @trace << "pre_handler" }
        app.after { headers "x-trace" => [*@trace, "on_send"].join(",") }
      when "key_required"
        app.before { |req| halt 401, { error: "key required" } unless req.header("x-key") }
      when "invalid_is_400"
        app.error(Ferrule::ValidationError) { |e| status 400; { invalid: e.errors.map { |issue| issue["loc"].join(".") } } }
      when "missing_is_404"
        app.not_found { { missing: request.path } }
      else
        raise ArgumentError, "unknown hook setup #{name}"
      end
    end
  end
end
