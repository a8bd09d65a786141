//! The stream workloads' two routes (see `crate::stream`), as each framework's users write
//! them: `GET /ws/echo`, a WebSocket that sends every message back in kind, and
//! `GET /sse/events?n=N`, `N` events with data `{"i": i}`, written as fast as the client reads
//! (waiting for the socket to drain where the framework leaves that to the handler).

/// Ferrule (Python): `{async}` is `async ` for the async app; its events come from an async
/// generator there and from a generator (on a thread of its own) in the sync one.
pub const FERRULE_PYTHON: &str = r#"

@app.websocket("/ws/echo")
async def ws_echo(ws: WebSocket) -> None:
    async for message in ws:
        await ws.send(message)


@app.get("/sse/events")
{async}def sse_events(n: int):
    {async}def events():
        for i in range(n):
            yield ServerSentEvent({"i": i})

    return EventSourceResponse(events())
"#;

/// FastAPI: Starlette's WebSocket, sse-starlette's EventSourceResponse (its generator yields to
/// the loop after each event, as any real one does awaiting its source).
pub const FASTAPI: &str = r#"

@app.websocket("/ws/echo")
async def ws_echo(ws: WebSocket):
    await ws.accept()
    while True:
        message = await ws.receive()
        if message["type"] == "websocket.disconnect":
            return
        if message.get("text") is not None:
            await ws.send_text(message["text"])
        else:
            await ws.send_bytes(message["bytes"])


@app.get("/sse/events")
async def sse_events(n: int):
    async def events():
        for i in range(n):
            yield {"data": json.dumps({"i": i})}
            # A generator that never awaits starves sse-starlette's sender: nothing is sent.
            await asyncio.sleep(0)

    return EventSourceResponse(events())
"#;

pub const FERRULE_NODE: &str = "
app.ws('/ws/echo', (socket) => socket.on('message', (data) => socket.send(data)));
app.get('/sse/events', { query: { type: 'object', properties: { n: { type: 'integer', minimum: 0 } }, required: ['n'] } },
  ({ query }) => sse((function* events() { for (let i = 0; i < query.n; i++) yield { data: { i } }; })()));";

/// Node's own response, written while `write` says the socket takes more, as Fastify and
/// Express users write an event stream by hand.
const NODE_EVENTS: &str = "
function drained(res) {
  return new Promise((resolve) => {
    const done = () => { res.off('drain', done); res.off('close', done); resolve(); };
    res.once('drain', done);
    res.once('close', done);
  });
}

async function writeEvents(res, n) {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  for (let i = 0; i < n && !res.destroyed; i++) {
    if (!res.write(`data: ${JSON.stringify({ i })}\\n\\n`)) await drained(res);
  }
  res.end();
}";

pub fn fastify() -> String {
    format!(
        "{NODE_EVENTS}
fastify.register(require('@fastify/websocket'));
fastify.register(async (scope) => {{
  scope.get('/ws/echo', {{ websocket: true }}, (socket) => socket.on('message', (data, isBinary) => socket.send(data, {{ binary: isBinary }})));
}});
fastify.get('/sse/events', {{ schema: {{ querystring: {{ type: 'object', properties: {{ n: {{ type: 'integer', minimum: 0 }} }}, required: ['n'] }} }} }},
  (request, reply) => {{ reply.hijack(); return writeEvents(reply.raw, request.query.n); }});"
    )
}

/// Express: the events route; the `ws` server is attached to the listening server
/// ([`EXPRESS_LISTEN`]).
pub fn express() -> String {
    format!(
        "{NODE_EVENTS}
app.get('/sse/events', (req, res) => writeEvents(res, Number(req.query.n)));"
    )
}

pub const EXPRESS_LISTEN: &str = "const server = app.listen(Number(process.argv[2]), '127.0.0.1');
const { WebSocketServer } = require('ws');
new WebSocketServer({ server, path: '/ws/echo' })
  .on('connection', (socket) => socket.on('message', (data, isBinary) => socket.send(data, { binary: isBinary })));";

pub const FERRULE_RUBY: &str = r#"
app.websocket("/ws/echo") { |ws, _req| ws.on(:message) { |data| ws.send(data) } }
app.get("/sse/events", query: { n: { "type" => "integer", "minimum" => 0 } }) do |req|
  n = req.query[:n]
  sse { |out| n.times { |i| out << { data: { i: i } } } }
end"#;

/// Rack on Puma: faye-websocket (over Rack's hijack) and an `each` body Puma streams.
pub const RACK: &str = r#"
require "faye/websocket"

def stream_route(env, request)
  if request.path_info == "/ws/echo" && Faye::WebSocket.websocket?(env)
    ws = Faye::WebSocket.new(env)
    ws.on(:message) { |event| ws.send(event.data) }
    return ws.rack_response
  end
  return nil unless request.path_info == "/sse/events"

  n = Integer(Rack::Utils.parse_query(request.query_string)["n"])
  events = Enumerator.new { |out| n.times { |i| out << "data: #{JSON.generate({ i: i })}\n\n" } }
  [200, { "content-type" => "text/event-stream", "cache-control" => "no-cache" }, events]
end"#;

/// Robyn: its channel-backed `@app.websocket` (text messages: the echo workloads send text) and
/// `SSEResponse` over a generator of formatted messages.
pub const ROBYN: &str = r#"

@app.websocket("/ws/echo")
async def ws_echo(websocket):
    try:
        while True:
            await websocket.send_text(await websocket.receive_text())
    except WebSocketDisconnect:
        pass


@app.get("/sse/events")
async def sse_events(request: Request):
    n = int(request.query_params.get("n", "0"))

    async def events():
        for i in range(n):
            yield SSEMessage(json.dumps({"i": i}))

    return SSEResponse(events())
"#;
