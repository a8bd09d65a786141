//! The stream workloads' three routes (see `crate::stream`), as each framework's users write
//! them: `GET /ws/echo`, a WebSocket that sends every message back in kind; `GET /ws/room`, a
//! chat room (every message a member sends goes to every member, itself included: the room
//! is the framework's own broadcast where it has one, else the set of members its docs
//! suggest); and `GET /sse/events?n=N`, `N` events with data `{"i": i}`, written as fast as
//! the client reads (waiting for the socket to drain where the framework leaves that to the
//! handler).

/// Ferrule (Python): `{async}` is `async ` for the async app; its events come from an async
/// generator there and from a generator (on a thread of its own) in the sync one.
pub const FERRULE_PYTHON: &str = r#"

@app.websocket("/ws/echo")
async def ws_echo(ws: WebSocket) -> None:
    async for message in ws:
        await ws.send(message)


room: set[WebSocket] = set()


@app.websocket("/ws/room")
async def ws_room(ws: WebSocket) -> None:
    room.add(ws)
    try:
        async for message in ws:
            for member in list(room):
                try:
                    await member.send(message)
                except WebSocketDisconnect:
                    # A member that has just left: its own handler is ending; the sender's is not.
                    room.discard(member)
    finally:
        room.discard(ws)


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


room: set[WebSocket] = set()


@app.websocket("/ws/room")
async def ws_room(ws: WebSocket):
    await ws.accept()
    room.add(ws)
    try:
        while True:
            text = await ws.receive_text()
            for member in list(room):
                await member.send_text(text)
    except WebSocketDisconnect:
        pass
    finally:
        room.discard(ws)


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
const room = new Set();
app.ws('/ws/room', (socket) => {
  room.add(socket);
  socket.on('close', () => room.delete(socket));
  socket.on('message', (data) => { for (const member of room) member.send(data); });
});
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
  const room = new Set();
  scope.get('/ws/room', {{ websocket: true }}, (socket) => {{
    room.add(socket);
    socket.on('close', () => room.delete(socket));
    socket.on('message', (data, isBinary) => {{ for (const member of room) member.send(data, {{ binary: isBinary }}); }});
  }});
}});
fastify.get('/sse/events', {{ schema: {{ querystring: {{ type: 'object', properties: {{ n: {{ type: 'integer', minimum: 0 }} }}, required: ['n'] }} }} }},
  (request, reply) => {{ reply.hijack(); return writeEvents(reply.raw, request.query.n); }});"
    )
}

/// Express: the events route; the `ws` servers are attached to the listening server
/// ([`EXPRESS_LISTEN`]).
pub fn express() -> String {
    format!(
        "{NODE_EVENTS}
app.get('/sse/events', (req, res) => writeEvents(res, Number(req.query.n)));"
    )
}

/// Two `ws` servers on one HTTP server, each upgrade routed by path (the `ws` docs' way: a
/// server attached with `path` refuses every other path's upgrade). The room is the `ws`
/// server's own set of clients.
pub const EXPRESS_LISTEN: &str = "const server = app.listen(Number(process.argv[2]), '127.0.0.1');
const { WebSocketServer } = require('ws');
const echo = new WebSocketServer({ noServer: true });
echo.on('connection', (socket) => socket.on('message', (data, isBinary) => socket.send(data, { binary: isBinary })));
const room = new WebSocketServer({ noServer: true });
room.on('connection', (socket) => socket.on('message', (data, isBinary) => {
  for (const member of room.clients) member.send(data, { binary: isBinary });
}));
const sockets = { '/ws/echo': echo, '/ws/room': room };
server.on('upgrade', (request, socket, head) => {
  const wss = sockets[new URL(request.url, 'http://localhost').pathname];
  if (!wss) return socket.destroy();
  wss.handleUpgrade(request, socket, head, (ws) => wss.emit('connection', ws, request));
});";

pub const FERRULE_RUBY: &str = r#"
app.websocket("/ws/echo") { |ws, _req| ws.on(:message) { |data| ws.send(data) } }
ROOM = []
ROOM_LOCK = Mutex.new
app.websocket("/ws/room") do |ws, _req|
  ROOM_LOCK.synchronize { ROOM << ws }
  ws.on(:close) { ROOM_LOCK.synchronize { ROOM.delete(ws) } }
  ws.on(:message) { |data| ROOM_LOCK.synchronize { ROOM.dup }.each { |member| member.send(data) } }
end
app.get("/sse/events", query: { n: { "type" => "integer", "minimum" => 0 } }) do |req|
  n = req.query[:n]
  sse { |out| n.times { |i| out << { data: { i: i } } } }
end"#;

/// Rack on Puma: faye-websocket (over Rack's hijack) and an `each` body Puma streams.
pub const RACK: &str = r#"
require "faye/websocket"

ROOM = []
ROOM_LOCK = Mutex.new

def stream_route(env, request)
  if request.path_info == "/ws/echo" && Faye::WebSocket.websocket?(env)
    ws = Faye::WebSocket.new(env)
    ws.on(:message) { |event| ws.send(event.data) }
    return ws.rack_response
  end
  if request.path_info == "/ws/room" && Faye::WebSocket.websocket?(env)
    ws = Faye::WebSocket.new(env)
    ROOM_LOCK.synchronize { ROOM << ws }
    ws.on(:close) { |_| ROOM_LOCK.synchronize { ROOM.delete(ws) } }
    ws.on(:message) { |event| ROOM_LOCK.synchronize { ROOM.dup }.each { |member| member.send(event.data) } }
    return ws.rack_response
  end
  return nil unless request.path_info == "/sse/events"

  n = Integer(Rack::Utils.parse_query(request.query_string)["n"])
  events = Enumerator.new { |out| n.times { |i| out << "data: #{JSON.generate({ i: i })}\n\n" } }
  [200, { "content-type" => "text/event-stream", "cache-control" => "no-cache" }, events]
end"#;

/// Robyn: its channel-backed `@app.websocket` (text messages: the echo workloads send text), its
/// own `broadcast` to the endpoint's connections, and `SSEResponse` over a generator of
/// formatted messages.
pub const ROBYN: &str = r#"

@app.websocket("/ws/echo")
async def ws_echo(websocket):
    try:
        while True:
            await websocket.send_text(await websocket.receive_text())
    except WebSocketDisconnect:
        pass


@app.websocket("/ws/room")
async def ws_room(websocket):
    try:
        while True:
            await websocket.broadcast(await websocket.receive_text())
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

/// Granian's RSGI: the WebSocket transport and the response stream, each awaited as RSGI apps
/// do (`send_str` waits while the client is slow); routed by `app` before the HTTP routes.
pub const GRANIAN: &str = r#"

async def ws_echo(proto):
    transport = await proto.accept()
    try:
        while True:
            message = await transport.receive()
            if message.kind == WebsocketMessageType.close:
                break
            if message.kind == WebsocketMessageType.string:
                await transport.send_str(message.data)
            else:
                await transport.send_bytes(message.data)
    except ProtocolClosed:
        pass
    proto.close(1000)


room = set()


async def ws_room(proto):
    transport = await proto.accept()
    room.add(transport)
    try:
        while True:
            message = await transport.receive()
            if message.kind == WebsocketMessageType.close:
                break
            for member in list(room):
                try:
                    await member.send_str(message.data)
                except ProtocolClosed:
                    room.discard(member)
    except ProtocolClosed:
        pass
    finally:
        room.discard(transport)
    proto.close(1000)


SOCKETS = {"/ws/echo": ws_echo, "/ws/room": ws_room}


async def sse_events(scope, proto):
    n = int(query_dict(scope.query_string, ()).get("n", 0))
    transport = proto.response_stream(200, [("content-type", "text/event-stream"), ("cache-control", "no-cache")])
    try:
        for i in range(n):
            await transport.send_str("data: " + msgspec.json.encode({"i": i}).decode() + "\n\n")
    except ProtocolClosed:
        pass
"#;
