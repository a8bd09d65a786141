# frozen_string_literal: true

# The README's streaming example, served as written and read by a real client (a socket): the
# CSV report arrives row by row and the client may leave half-way; the tick feed resumes after
# the Last-Event-ID it is sent.
require "minitest/autorun"
require "socket"
require_relative "support"

class ReadmeStreamingTest < Minitest::Test
  include Support

  # The first +language+ block of the README's streaming section.
  def readme_block(language)
    text = File.read(ENV.fetch("FERRULE_README"), encoding: "UTF-8")
    start = text.index("### Streaming and Server-Sent Events")
    section = text[start...text.index("\n## ", start)]
    found = section.match(/```#{language}\n(.*?)```/m)
    assert found, "no #{language} block in the README's streaming section"
    found[1]
  end

  # The response head and the first +count+ body lines of +path+ (chunk framing removed), then
  # the client leaves.
  def first_lines(port, path, count, headers = {})
    socket = TCPSocket.new("127.0.0.1", port)
    socket.write("GET #{path} HTTP/1.1\r\nHost: t\r\n#{headers.map { |k, v| "#{k}: #{v}\r\n" }.join}\r\n")
    raw = +""
    raw << socket.readpartial(4096) until raw.include?("\r\n\r\n")
    head, body = raw.split("\r\n\r\n", 2)
    body << socket.readpartial(4096) until dechunk(body).count("\n") >= count
    socket.close
    [head.downcase, dechunk(body).split("\n", -1).first(count)]
  end

  # The data of the whole chunks in +body+ (HTTP/1.1 chunked framing removed).
  def dechunk(body)
    out = +""
    rest = body
    while (size_line = rest.match(/\A([0-9a-f]+)\r\n/))
      size = size_line[1].to_i(16)
      start = size_line[0].bytesize
      break if size.zero? || rest.bytesize < start + size + 2

      out << rest.byteslice(start, size)
      rest = rest.byteslice((start + size + 2)..)
    end
    out
  end

  def test_the_readme_streaming_example_serves_a_report_and_a_resumable_feed
    app = Ferrule::App.new # the README's block calls app.get on it
    eval(readme_block("ruby"), binding, "README.md") # rubocop:disable Security/Eval
    serving(app) do |port|
      head, lines = first_lines(port, "/report.csv", 3)
      assert_includes head, "content-type: text/csv"
      assert_equal ["id,name", "0,user0", "1,user1"], lines
      head, lines = first_lines(port, "/ticks", 4, "last-event-id" => "41")
      assert_includes head, "content-type: text/event-stream"
      assert_equal ["event: tick", "id: 42", 'data: {"n":42}', ""], lines
    end
  end
end
