# frozen_string_literal: true

# Ferrule: a Rust HTTP core (axum + tokio) with Ruby handlers.
#
#   require "ferrule"
#   app = Ferrule::App.new
#   app.get("/users/{id:int}", query: { verbose: { type: "boolean", default: false } }) do |req|
#     { id: req.params[:id], verbose: req.query[:verbose] }
#   end
#   app.post("/items", body: ITEM_SCHEMA) { |req| req.body }
#   app.run(host: "127.0.0.1", port: 8000)
#
# Routing, parsing and coercion (`{id:int}`), JSON Schema validation, body limits and content
# types are decided in Rust before a block runs; a bad request gets an RFC 9457 problem
# response without entering Ruby.
require "date"
require "json"
# Sinatra loads Rack, and its apps use it unasked (Rack::Utils.escape_html in a helper, `use
# Rack::Deflater` in a class body): a NameError here, found by a probe. Loaded when first named.
Object.autoload(:Rack, "rack") unless defined?(Rack)
require_relative "ferrule/ferrule"
require_relative "ferrule/types"
require_relative "ferrule/stream"
require_relative "ferrule/websocket"
require_relative "ferrule/response_writer"
require_relative "ferrule/session_cookie"
require_relative "ferrule/context"
require_relative "ferrule/conditions"
require_relative "ferrule/app"
require_relative "ferrule/hooks"
require_relative "ferrule/pass"
require_relative "ferrule/modular"
require_relative "ferrule/cli"
