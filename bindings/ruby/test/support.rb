# frozen_string_literal: true

# Test helpers: serve an app on 127.0.0.1 (a free port) in a background thread, and a real
# HTTP client (Net::HTTP).
require "json"
require "net/http"
require "socket"
require "ferrule"

module Support
  # +fields+: every header's values as an Array (repeated headers such as set-cookie).
  Reply = Struct.new(:status, :headers, :body, :fields) do
    def json = JSON.parse(body)
  end

  # A port nothing listens on now, for a server started in another process.
  def free_port
    server = TCPServer.new("127.0.0.1", 0)
    server.addr[1]
  ensure
    server&.close
  end

  def serving(app, threads: 2)
    port = Queue.new
    server = Thread.new do
      app.serve(host: "127.0.0.1", port: 0, threads: threads, signals: false) { |bound| port << bound }
    rescue Exception => e # rubocop:disable Lint/RescueException
      port << e
    end
    bound = port.pop
    raise bound if bound.is_a?(Exception)

    begin
      yield bound
    ensure
      app.stop
      server.join(30) or raise "the server did not stop within 30 s"
    end
  end

  def request(port, method, path, json: nil, body: nil, headers: {})
    http = Net::HTTP.new("127.0.0.1", port)
    http.read_timeout = 30
    request = Net::HTTPGenericRequest.new(method, true, true, path, headers)
    if json
      body = JSON.generate(json)
      request["content-type"] = "application/json"
    end
    request.body = body if body
    response = http.request(request)
    Reply.new(response.code.to_i, response.each_header.to_h, response.body || "", response.to_hash)
  end
end
