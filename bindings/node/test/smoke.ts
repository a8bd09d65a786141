// Type-checked (tsc --strict) against the installed package's index.d.ts: the README's usage,
// with path parameter types inferred from the template.
import { App, compress, Context, cors, HttpError, Reply, Response, sse, version, WebSocket } from "ferrule";

const app = new App({ bodyLimit: 1 << 20, metricsUrl: "/metrics" }); // metricsUrl was once missing from AppOptions
app.register(cors, { origin: ["https://shop.example", /\.preview\.example$/], credentials: true });
app.register(compress, { threshold: 2048, encodings: ["gzip", "br"] });
new App({ cors: true, compression: { level: 9 } });

app.get("/users/{id:int}", ({ params, query }) => {
  const id: number = params.id;
  return { id, verbose: query.verbose };
});

app.get("/orders/{orderId:uuid}/items/{name}", ({ params }) => {
  const orderId: string = params.orderId;
  const name: string = params.name;
  // @ts-expect-error: a template parameter is not a number unless declared {x:int}
  const wrong: number = params.name;
  return { orderId, name, wrong };
});

// Express-style segments are typed too (they once gave `params: {}`).
app.get("/shops/:shop/items/:item", ({ params }) => {
  const shop: string = params.shop;
  const item: string = params.item;
  // @ts-expect-error: only the template's names are parameters
  const other: string = params.other;
  return { shop, item, other };
});

// Fastify's object form of route(), typed as the others.
app.route({ method: ["GET", "POST"], url: "/ping/{n:int}", handler: ({ params }) => ({ n: params.n + 1 }) });

// The README's error handler (its `error.validation` once did not type-check).
app.setErrorHandler((error, ctx, reply) => (error.validation
  ? reply.code(400).send({ invalid: error.validation.map((e) => e.loc) })
  : reply.send(error)));

const itemSchema = { type: "object", required: ["name"], properties: { name: { type: "string" } } };
app.post("/items", { body: itemSchema, status: 201 }, async ({ body }) => body);

app.get("/teapot", () => {
  throw new HttpError(418, "short and stout");
});

app.get("/raw", () => new Response(Buffer.from("bytes"), { status: 200, type: "application/octet-stream" }));

app.get("/report.csv", function* rows() {
  yield "id\n";
  yield Buffer.from("1\n");
});

app.get("/ticks", (ctx) => {
  const start = Number(ctx.header("last-event-id") ?? 0);
  return sse((async function* ticks() {
    yield { data: { n: start + 1 }, event: "tick", id: start + 1 };
  })());
});

app.ws("/chat/{room:int}", { subprotocols: ["chat.v1"] }, (socket, { params }) => {
  const room: number = params.room;
  socket.on("message", (data, isBinary) => socket.send(isBinary ? data : `${room}: ${data.toString()}`));
  socket.on("close", (code: number, reason: string) => console.log(code, reason, socket.bufferedAmount));
});

app.ws("/feed", async (socket: WebSocket) => {
  for await (const message of socket) socket.send(message);
  socket.close(1000, "done");
});

const shop = new App({ title: "Shop", version: "2.1", openapiUrl: null });
shop.get("/items/{id:int}", { schema: { summary: "One item", tags: ["items"] }, deprecated: true }, ({ params }) => ({ id: params.id }));
const paths: Record<string, unknown> = shop.openapi().paths;

export async function main(): Promise<void> {
  console.log(Object.keys(paths));
  const info = await app.listen({ host: "127.0.0.1", port: 0, handleSignals: false });
  console.log(version(), info);
  await app.close();
}

// Fastify's route generic (found by a Fastify port: every typed route failed with TS2344).
interface Search { q: string; limit?: number }
interface NewItem { name: string; price: number }
app.get<{ Querystring: Search }>("/search", { query: { type: "object" } }, ({ query }) => {
  const q: string = query.q;
  // @ts-expect-error: the generic says what the query holds
  const missing: string = query.other;
  return { q, limit: query.limit ?? 10, missing };
});
app.post<{ Body: NewItem; Params: { id: string } }>("/items/:id", { body: { type: "object" } }, async ({ body, params }, reply) => {
  const price: number = body.price;
  reply.code(201);
  return { id: params.id, name: body.name, price };
});

// ws's 'error' listener is accepted, as ws users attach one by habit.
app.ws("/chat", (socket: WebSocket) => {
  socket.on("error", (error: Error) => console.error(error.message));
});

// The hooks around listen() and close(), with the app as `this` and either style.
app.addHook("onListen", async function () {
  console.log(`listening on ${this.port}`);
});
app.addHook("preClose", (done) => {
  done();
});

// Security requirements name the app's schemes, as an option or in a Fastify-style schema.
const secured = new App({ securitySchemes: { bearerAuth: { type: "http", scheme: "bearer" } } });
secured.get("/me", { security: [{ bearerAuth: [] }] }, () => ({}));
secured.get("/either", { schema: { security: [{ bearerAuth: ["read"] }] } }, () => ({}));
secured.get("/health", { config: { public: true } }, (ctx) => (ctx.routeOptions?.config.public ? "open" : "closed"));

// Fastify's done-style hooks and plugins call `done` without a check (TS2722 when it was
// optional), routeOptions is there for every request, and inject() without options chains.
app.addHook("onRequest", (ctx, reply, done) => {
  if (ctx.routeOptions.config.public) return done();
  done();
});
app.register((scope, options: { level: number }, done) => {
  scope.get("/level", () => ({ level: options.level }));
  done();
}, { level: 1 });
app.decorateRequest("shout", { getter() { return this.method.toUpperCase(); } });
async function chained(): Promise<number> {
  const response = await app.inject().get("/users/1").headers({ authorization: "Bearer t" });
  return response.statusCode;
}
void chained;

// A route's own hooks, a list or one function, and decorateReply with the reply as `this`.
const mustBeAdmin = async (ctx: Context, reply: Reply) => {
  if (ctx.header("x-role") !== "admin") return reply.code(403).send({ error: "forbidden" });
};
app.get("/admin", { preHandler: [mustBeAdmin], onSend: async (ctx, reply, payload) => payload }, () => "admin");
app.decorateReply("teapot", function (this: Reply) { return this.code(418).send("short and stout"); });
async function awaitedPlugin(): Promise<App> {
  return app.register(async (scope) => { scope.get("/late", () => "late"); });
}
void awaitedPlugin;

// onRoute hooks change a route's options; reply.raw and request.raw as Fastify plugins use them.
app.addHook("onRoute", (routeOptions) => {
  routeOptions.config = { ...routeOptions.config, seen: routeOptions.url };
});
app.get("/raw", (ctx, reply) => {
  reply.raw.setHeader("x-raw", "1");
  return { status: reply.raw.statusCode, from: ctx.raw.socket.remoteAddress ?? "" };
});
app.addContentTypeParser("application/x-csv", { parseAs: "string" }, (ctx, text, done) => done(null, text.split(",")));
app.addContentTypeParser(/yaml$/, async (ctx, payload) => payload.readable);
app.get("/with-handler", { handler: (ctx, reply) => ({ by: reply.request.method, same: reply.server === ctx.server }) });
app.addHook("onRegister", (instance, options) => { void instance; void options; });

// Fastify's all, request.port / originalUrl / is404 and reply.serialize.
const everyMethod = new App();
everyMethod.all('/any', (ctx) => ({ port: ctx.port, url: ctx.originalUrl, missing: ctx.is404 }));
everyMethod.get('/serialized', (ctx, reply) => reply.send(reply.serialize({ a: 1 })));
