# frozen_string_literal: true

require "io/wait"
require "logger"

module Ferrule
  # A Ferrule application: routes declared with Sinatra-style blocks, served by the Rust core.
  # Sinatra's +enable+, +disable+ and +configure+, on what has a +set+: an app, and (Modular)
  # the body of an App subclass.
  module Configurable
    # <tt>enable :sessions</tt>: +set+ to true.
    def enable(*names) = names.each { |name| set(name, true) } && self

    # <tt>disable :sessions</tt>: +set+ to false.
    def disable(*names) = names.each { |name| set(name, false) } && self

    # Runs its block with the receiver (<tt>configure { |app| app.set ... }</tt>; in a class body
    # <tt>configure(:production) { set :db, ... }</tt>); with environments, only when the
    # environment names one of them: <tt>set :environment</tt>'s, else APP_ENV, else RACK_ENV,
    # else development (found by a probe: <tt>set :environment, :production</tt> was ignored,
    # and the development block ran).
    def configure(*environments)
      environment = settings.environment.to_sym
      yield self if environments.empty? || environments.map(&:to_sym).include?(environment)
      self
    end
  end

  class App
    include Configurable

    METHODS = %w[GET POST PUT PATCH DELETE HEAD OPTIONS].freeze
    # The core's own list of settings: a new one reaches Ruby without an edit here.
    SETTINGS = NativeApp.setting_names.map(&:to_sym).freeze
    # The proxies believed unless the app says otherwise (+trusted_proxies:+): Rack's.
    DEFAULT_TRUSTED_PROXIES = %w[loopback uniquelocal].freeze
    # What a route says about itself in the OpenAPI document.
    DOC_OPTIONS = %i[summary description operation_id tags deprecated include_in_schema security].freeze
    ROUTE_OPTIONS = (%i[query headers cookies params body form multipart text bytes body_required max_file_size
                        cors compression body_limit timeout_ms status response] + DOC_OPTIONS + Conditions::OPTIONS).freeze
    SOCKET_OPTIONS = %i[query headers cookies params cors].freeze
    DEFAULT_THREADS = 5
    # The core's name for what a route's trailing <tt>*</tt> takes (<tt>params["splat"]</tt>).
    SPLAT_PARAM = "ferrule_splat"
    # The exit status of a process whose startup (+on_start+) raised: the parent of worker
    # processes stops instead of starting another that would fail the same way.
    STARTUP_FAILED = 3
    BODY_KINDS = { body: "json", form: "form", multipart: "multipart", text: "text", bytes: "bytes" }.freeze
    SEVERITIES = { "debug" => Logger::DEBUG, "info" => Logger::INFO, "warn" => Logger::WARN, "error" => Logger::ERROR }.freeze
    # Seconds a Logger may take to finish its batch when the server stops.
    LOGGER_FINISHES_WITHIN = 10
    private_constant :LOGGER_FINISHES_WITHIN

    # Settings are the core's: body_limit (bytes, default 2 MiB), cors ({ allow_origins: [...],
    # allow_methods:, allow_headers:, expose_headers:, allow_credentials:, max_age_secs:,
    # allow_origin_regex: (matched whole), allow_private_network: }),
    # compression ({ min_size: 500, gzip:, br:, zstd:, level: }), request_id (default true),
    # timeout_ms (→ 504), max_header_bytes (→ 431), shutdown_timeout_ms (default 10 s).
    # Connection limits (defaults in the README's table): header_read_timeout_ms,
    # body_read_timeout_ms, min_body_rate (bytes/s), keep_alive_timeout_ms, send_timeout_ms, max_connections,
    # max_queued_requests (→ 503), http2_max_concurrent_streams, http2_keep_alive_interval_ms, sse_keep_alive_ms;
    # WebSockets: ws_max_message_bytes (→ close 1009), ws_send_buffer_bytes (unread → 1008),
    # ws_idle_timeout_ms (silent → ping, then 1001);
    # input limits: max_json_depth, max_multipart_parts, max_part_header_bytes, max_filename_bytes,
    # refuse_prototype_keys (a JSON body with a __proto__ key is a 422; Node's default).
    # redirect_slashes (a path no route takes whose twin with the trailing slash added or taken
    # away is routed is answered 307 to that twin, as FastAPI does; off by default, as in Sinatra).
    # Development: validate_responses (a JSON result its declared +response+ schema forbids
    # becomes a 500 that lists what is wrong).
    # OpenAPI: title, version, description, servers, openapi_tags, security_schemes (by name, for
    # routes' +security+), openapi_url ("/openapi.json"),
    # docs_url ("/docs", Swagger UI served from the core's own copy); nil switches either off.
    # Logging: access_log (a record per request), log_level ("debug", "info" (default), "warn",
    # "error", "off"), and +logger+: left out, the core writes "ferrule: ..." lines to stderr;
    # a Logger (anything with Logger#add), records go to it (progname "ferrule"); false, none.
    def initialize(logger: nil, **settings)
      # A subclass's body may give server settings (+set :timeout_ms, 5_000+); those given here win.
      from_body = self.class.server_settings
      logger = from_body[:logger] if logger.nil?
      settings = from_body.except(:logger).merge(settings)
      (settings.keys - SETTINGS).each do |name|
        raise ArgumentError, "ferrule: #{NativeApp.unknown_option('App setting', name.to_s, (SETTINGS + [:logger]).map(&:to_s))}"
      end
      unless logger.nil? || logger == false || logger.respond_to?(:add)
        raise ArgumentError, "ferrule: logger must be a Logger (anything with Logger#add), or false"
      end

      settings[:log_level] = "off" if logger == false && !settings.key?(:log_level)
      # Rack's trusted proxies (loopback and private addresses), whose X-Forwarded-For, -Proto
      # and -Host are believed for +request.ip+, +scheme+ and +host+: a Sinatra app behind
      # nginx on the same machine or network redirects to https as it did under Puma.
      settings[:trusted_proxies] = DEFAULT_TRUSTED_PROXIES unless settings.key?(:trusted_proxies)
      @logger = logger || nil
      config = settings.compact
      # nil switches the document (openapi_url) or the docs page (docs_url) off: sent, not compacted away.
      %i[openapi_url docs_url].each { |name| config[name] = nil if settings.key?(name) && settings[name].nil? }
      @native = NativeApp.new(JSON.generate(config), Request, UploadedFile, Response, HTTPError)
      # The handler blocks, by route index: held here, by this object, where the GC sees them.
      @handlers = []
      # The same blocks as declared, and each route's status, for requests with hooks.
      @blocks = []
      @statuses = []
      # A Regexp route's group names, in order, when it has named groups (its +captures+).
      @capture_names = []
      # By route index: true for a WebSocket route, whose handshake meets the filters.
      @sockets = []
      # The routes in declaration order, for +pass+ (PassTargets); each by route index; and
      # each group's prefix, by its id, as the core joins it.
      @pass_targets = PassTargets.new
      @targets = []
      @group_prefixes = { 0 => "" }
      # Filters and hooks by the slot the core knows each as; error blocks in order declared.
      @hook_blocks = []
      @error_handlers = []
      @chains = {}
      @chain_runner = method(:run_chain).to_proc
      @context_class = Class.new(Context)
      @settings = Settings.new
      # What the class body set reads back as settings.name, server settings too.
      from_body.each { |key, value| @settings[key] = value unless key == :logger }
      @server_settings_said = []
      @context_class.settings = @settings
      @context_class.pass_targets = @pass_targets
      @on_start = []
      @on_stop = []
      @started = false
      @start_lock = Mutex.new
      # `ferrule openapi app.rb` prints the app a file made: kept alive until then.
      CLI.made << self if ENV["FERRULE_PRINT_OPENAPI"] == "1"
      self.class.declare_onto(self) unless self.class.equal?(App)
    end

    # The app's OpenAPI 3.1 document (a Hash), as served at +openapi_url+ (/openapi.json; nil
    # serves none): every route declared so far.
    def openapi
      JSON.parse(@native.openapi)
    end

    # <tt>ferrule openapi app.rb</tt> (Ferrule::CLI): the app's document instead of a server.
    private def print_openapi_and_exit
      $stdout.write(openapi_json, "\n")
      $stdout.flush
      exit(0)
    end

    # The document as indented JSON, to write to a file for CI to diff.
    def openapi_json
      @native.openapi
    end

    # <tt>route("GET", "/users/{id:int}", query: {...}) { |req| ... }</tt>
    #
    # Options: +query+, +headers+, +cookies+ — a Hash of name => JSON Schema (required unless
    # the schema has a "default" or you add <tt>required: false</tt>), or one object schema;
    # +params+ — extra constraints on path parameters (their types come from the template);
    # +body+ (JSON), +form+, +multipart+ (fields with <tt>format: "binary"</tt> are files),
    # +text+, +bytes+ — the body's schema (or true); +status+ of plain results; per route
    # +cors+, +compression+, +body_limit+, +timeout_ms+; for the OpenAPI document +summary+,
    # +description+, +operation_id+, +tags+, +deprecated+, +include_in_schema+, +security+ (OpenAPI
    # requirements naming the app's +security_schemes+: <tt>[{ bearerAuth: [] }]</tt>); +response+ —
    # the schema of what the route answers with +status+ (or a Hash of statuses to schemas:
    # <tt>{ 200 => user, "4XX" => error }</tt>): a JSON result keeps only the properties its
    # schema declares.
    def route(method, path, status: 200, **options, &handler)
      route_in(0, method, path, status: status, **options, &handler)
    end

    # <tt>websocket("/rooms/{room:int}") { |ws, request| ws.on(:message) { |data| ... } }</tt>
    #
    # A WebSocket route: +query+, +headers+, +cookies+ and +params+ (as for #route) are
    # validated before the upgrade — a bad request gets its problem response and no connection —
    # and the +before+ filters run on the handshake (a +halt+ refuses it; what they put in
    # <tt>req.env</tt> is in the block's request's). The block gets a Ferrule::WebSocket and the
    # Request. +subprotocols+: the route's, preferred first;
    # +max_message_bytes+ replaces the app's +ws_max_message_bytes+.
    def websocket(path, subprotocols: [], max_message_bytes: nil, **options, &handler)
      websocket_in(0, path, subprotocols: subprotocols, max_message_bytes: max_message_bytes, **options, &handler)
    end

    # A filter run before the route's block for every request (Sinatra's +before+) — those
    # the core refused, and those no route takes, too — in the block's context (+halt+,
    # +status+, +headers+); with a +pattern+ (<tt>"/admin/*"</tt>, Sinatra's patterns, or a
    # Regexp: see Filter), only for the paths it matches.
    def before(pattern = nil, &block)
      filter_in(0, :on_request, pattern, block)
    end

    # A filter run after the route's block (Sinatra's +after+): it may change the status,
    # the headers (+headers+) and the body (+body+) before the response is written.
    def after(pattern = nil, &block)
      filter_in(0, :on_send, pattern, block)
    end

    # Any of the hooks by its phase, in Fastify's order: +:on_request+ (as +before+),
    # +:pre_handler+ (after validation, with the typed request), +:on_send+ (as +after+),
    # +:on_error+ (<tt>{ |error, req| ... }</tt>: sees what a filter or block raised).
    def hook(phase, &block)
      hook_in(0, phase, block)
    end

    # Sinatra's error blocks: <tt>error(NotFoundInDb) { |e| [404, "gone"] }</tt> answers what
    # a filter or block raised of that class (the nearest registered), <tt>error(404)</tt> or
    # <tt>error(400..499)</tt> an HTTP error of that status — the core's refusals included (no
    # route, a failed validation: Ferrule::ValidationError with +errors+) — and +error+ alone
    # StandardError. The block runs in the request's context (+status+ is the error's) and
    # returns what a route block returns. Without one, an HTTP error gets the core's problem
    # response and anything else a bare 500.
    def error(*keys, &block)
      raise ArgumentError, "ferrule: error needs a block" unless block

      keys = [StandardError] if keys.empty?
      handler = Context.block_method(block, 2)
      keys.each do |key|
        @error_handlers << [key, handler]
        catch_refusals(key)
      end
      @native.chain_every_request
      self
    end

    # Sinatra's +not_found+: answers the requests no route takes (and HTTP errors of 404).
    def not_found(&block)
      error(404, &block)
    end

    # Sinatra's +set+: <tt>set :db, Sequel.connect(url)</tt> (or a Hash of them), read back as
    # +settings.db+ in blocks, filters and helpers, and on the app. +:sessions+ (with
    # +:session_secret+) turns on the signed session cookie (see +sessions+); Sinatra's own
    # switches that have no meaning here (+:views+, +:public_folder+, …) are refused by name, so
    # none is silently ignored.
    def set(name, value = true, &block)
      return name.each { |key, each| set(key, each) } && self if name.is_a?(Hash)

      value = Settings::Computed.new(block) if block

      key = name.to_sym
      App.refuse_not_setting(key, value)
      if key == :host_authorization
        raise ArgumentError, "ferrule: set :host_authorization: the hosts are read when the app is made: " \
                             "Ferrule::App.new(allowed_hosts: [...]), or set it in the body of a subclass (class Shop < Ferrule::App)"
      end
      # The core read its settings when the app was made: set here, one is the app's own value
      # only (`set :title` for a page's title is common), which one line says.
      if (SETTINGS.include?(key) || key == :logger) && !@server_settings_said.include?(key)
        @server_settings_said << key
        warn "ferrule: set #{key.inspect} is read as settings.#{key} only: the server read its own #{key} when the app " \
             "was made (Ferrule::App.new(#{key}: ...), or set in the body of a subclass: class Shop < Ferrule::App)"
      end

      @settings[key] = value
      @context_class.settings = @settings
      @context_class.default_content_type_set = true if key == :default_content_type
      sessions_from_settings if %i[sessions session_secret].include?(key)
      self
    end

    # What +set+ set: <tt>settings.db</tt>; a name never set is a NoMethodError naming it.
    def settings = @settings

    # Sinatra settings that mean a template, file or server Ferrule does not have: refused with
    # what to do instead.
    NOT_SETTINGS = {
      views: "templates are not rendered by Ferrule; render with ERB (or any library) and return the text",
      public_folder: "serve a directory with app.static(root:, prefix:)",
      static: "serve a directory with app.static(root:, prefix:)",
      port: "give the port to app.run(port:)",
      bind: "give the host to app.run(host:)",
      server: "Ferrule is the server: app.run, or any Rack server through config.ru",
      # Enabled, it was silently nothing (found by a probe): a form's DELETE reached its POST route.
      method_override: "a form's _method field does not change the method (the core routes before Ruby runs); " \
                       "route the form's POST (post \"/notes/:id/delete\") or send the method from JavaScript",
    }.freeze
    private_constant :NOT_SETTINGS

    # :nodoc: Sinatra 4's <tt>set :host_authorization, permitted_hosts: [...]</tt> (Rack::Protection's
    # HostAuthorization) as the core's +allowed_hosts+: +"example.com"+ is that host,
    # +".example.com"+ it and every host under it, and an empty list every host. The core answers
    # a host not listed with a 400 problem, where Rack::Protection sends a 403 text. No www
    # redirect, as Rack has none. Regexps, IP ranges and the other options are refused by name.
    def self.host_authorization(value)
      options = value.is_a?(Hash) ? value.transform_keys(&:to_sym) : {}
      unless value.is_a?(Hash) && options.key?(:permitted_hosts)
        raise ArgumentError, "ferrule: set :host_authorization takes { permitted_hosts: [\"example.com\", \".example.com\"] }"
      end
      (options.keys - [:permitted_hosts]).each do |name|
        raise ArgumentError, "ferrule: set :host_authorization: #{name.inspect} is not supported (the core answers a host it does not serve with a 400)"
      end
      hosts = Array(options[:permitted_hosts]).flat_map do |host|
        unless host.is_a?(String)
          raise ArgumentError, "ferrule: set :host_authorization: permitted host #{host.inspect} is not supported: " \
                               "list names (\"example.com\") and domains (\".example.com\")"
        end
        host.start_with?(".") ? [host[1..], "*#{host}"] : [host]
      end
      { allowed_hosts: hosts.empty? ? nil : hosts, www_redirect: false }
    end

    # :nodoc: a Sinatra setting Ferrule has no use for, refused with what to do instead.
    def self.refuse_not_setting(key, value = true)
      return if key == :method_override && !value # disabled is what it is

      raise ArgumentError, "ferrule: set #{key.inspect}: #{NOT_SETTINGS[key]}" if NOT_SETTINGS.key?(key)
    end

    # :nodoc: an option +names+ has that +known+ does not, refused naming the nearest.
    def self.refuse_unknown_options(kind, where, names, known)
      names.each do |name|
        raise ArgumentError, "ferrule: #{NativeApp.unknown_option("#{kind} for #{where}:", name.to_s, known.map(&:to_s))}" unless known.include?(name)
      end
    end

    # +:sessions+ with its +:session_secret+, in either order; without one by the time the app
    # starts, a random secret (as Sinatra makes one), said once (+random_session_secret+).
    private def sessions_from_settings
      if @settings[:sessions] == false
        @context_class.session_cookie = nil
      elsif @settings[:sessions] && session_secret_set
        sessions(secret: session_secret_set, **session_options_set)
      end
      # Enabled without a secret yet: the store +sessions+ made, if any, stays (found on
      # review: `enable :sessions` after `sessions(secret:)` dropped it).
    end

    private def random_session_secret
      return unless @settings[:sessions] && @context_class.session_cookie.nil?

      require "securerandom"
      warn "ferrule: sessions without a session_secret: a random one, so every restart (and each worker) forgets them; set :session_secret"
      sessions(secret: SecureRandom.hex(64), **session_options_set)
    end

    # <tt>set :sessions, { ... }</tt>: Rack's session options (a +secret+ among them too).
    private def session_options_set
      @settings[:sessions].is_a?(Hash) ? SessionCookie.options_of(@settings[:sessions]) : {}
    end

    private def session_secret_set
      options = @settings[:sessions].is_a?(Hash) ? @settings[:sessions].transform_keys(&:to_sym) : {}
      @settings[:session_secret] || options[:secret]
    end

    # Sinatra's <tt>enable :sessions</tt> under +run+: +session+ is kept in a cookie signed with
    # +secret+ (64 characters or more; see Ferrule::SessionCookie for the options). Under Rack,
    # a session middleware in front is used when there is one.
    def sessions(secret:, **options)
      @context_class.session_cookie = SessionCookie.new(secret: secret, **options)
      self
    end

    # Methods the route blocks, filters and error blocks can call (Sinatra's +helpers+): a
    # block of +def+s, or modules.
    def helpers(*modules, &block)
      @context_class.include(*modules) unless modules.empty?
      @context_class.class_eval(&block) if block
      self
    end

    # Routes and filters under +prefix+ (<tt>app.group("/admin") { |admin| admin.before { ... } }</tt>):
    # the group's filters run after the app's, for its own routes (and for the paths under
    # its prefix that no route takes). Returns the group; groups nest.
    def group(prefix, &block)
      group_in(0, prefix, &block)
    end

    # Serves +directory+ under +prefix+ (Sinatra's public folder; <tt>static("/", "public")</tt>
    # serves it for the paths no route takes). The core serves the files — ETag and
    # Last-Modified with 304s, Range, +.br+/+.gz+ siblings, +index.html+ for a directory — and
    # refuses any path that climbs out of +directory+, and hidden files unless +dotfiles+.
    def static(prefix, directory, index: true, precompressed: true, cache_control: nil, dotfiles: false, follow_symlinks: false)
      spec = { prefix: prefix.to_s, directory: File.expand_path(directory.to_s), index: index, precompressed: precompressed,
               dotfiles: dotfiles, follow_symlinks: follow_symlinks }
      spec[:cache_control] = cache_control.to_s if cache_control
      @native.mount_static(JSON.generate(spec))
      self
    end

    # Runs once per worker process before it serves (and before the first Rack call);
    # a block that raises stops the app (Ferrule::StartupFailed; +run+ exits with status 3).
    def on_start(&block)
      @on_start << block
      self
    end

    # Runs once per worker process after its drain.
    def on_stop(&block)
      @on_stop << block
      self
    end

    # :nodoc: what Group forwards to, with its group.
    def route_in(group, method, path, status: 200, **options, &handler)
      raise ArgumentError, "ferrule: #{method} #{path} needs a block" unless handler
      # Sinatra's Regexp routes and its optional parts (<tt>/posts/:format?</tt>): matched by
      # the core as an expression, after the templates (a template declared earlier answers a
      # path both match). A Regexp's groups are <tt>params["captures"]</tt>: its unnamed ones,
      # or, as Ruby captures no other beside them, its named ones (also params by name).
      pattern = route_pattern(path)
      named = path.names if path.is_a?(Regexp) && !path.names.empty?
      methods = Array(method).map { |m| m.to_s.upcase }
      options = options.dup
      conditions = Conditions.take(options, @settings)
      target = @pass_targets.add(verbs: methods, prefix: @group_prefixes.fetch(group, ""), path: path, block: Context.block_method(handler, 1),
                                 status: status, capture_names: named, declares: judged_by_core(path, options),
                                 response_schema: options.key?(:response), conditions: conditions)
      sinatra_path = path
      path = path.source if path.is_a?(Regexp)

      # Sinatra's trailing splat, <tt>get "/files/*"</tt>: the rest of the path, read as
      # <tt>params["splat"]</tt> (an Array, as Sinatra gives it). It was refused (found by a probe).
      path = "#{path.delete_suffix("*")}{#{SPLAT_PARAM}:path}" if path.is_a?(String) && path.end_with?("/*")
      methods.each do |m|
        raise ArgumentError, "ferrule: #{m} is not a supported method (#{METHODS.join(', ')})" unless METHODS.include?(m)

        declared = spec(m, path, options.dup, status)
        declared["pattern"] = pattern if pattern
        runner = sinatra_style(target.block, status, named, target)
        begin
          declare(declared, status, runner, group: group, block: target.block, capture_names: named, target: target)
        rescue ArgumentError => e
          # Sinatra takes a route whose paths an earlier one takes (<tt>/guess/:who</tt>, then
          # <tt>/guess/*</tt>): the first declared answers, and +pass+ reaches the next. The
          # core's tree holds one template per shape, so a route in Sinatra's pattern syntax is
          # then matched by its expression, which the core tries in declared order beside the
          # tree (pattern_routes). A <tt>{name}</tt> template keeps the core's rule: a clash is
          # refused where it is declared.
          raise if pattern || !sinatra_path.is_a?(String) || sinatra_path.include?("{")

          declared["pattern"] = PathPattern.source(sinatra_path).first
          begin
            declare(declared, status, runner, group: group, block: target.block, capture_names: named, target: target)
          rescue ArgumentError
            raise e
          end
        end
      end
      self
    end

    # What of a route the core judges, named as the app wrote it (<tt>query:</tt>, a typed
    # parameter, <tt>response:</tt>, whose schema the core writes its answer by), or nil: such
    # a route cannot be reached by +pass+.
    def judged_by_core(path, options)
      judged = (%i[query headers cookies params response] + BODY_KINDS.keys).find { |option| options.key?(option) }
      return "#{judged}:" if judged

      "typed parameter" if path.is_a?(String) && path.match?(/\{[A-Za-z_]\w*:/)
    end

    # :nodoc:
    def filter_in(group, phase, pattern, block)
      raise ArgumentError, "ferrule: a filter needs a block" unless block

      hook_in(group, phase, pattern.nil? ? block : Filter.new(pattern, block))
    end

    # :nodoc:
    def hook_in(group, phase, block)
      raise ArgumentError, "ferrule: hook #{phase} needs a block" unless block

      slot = @hook_blocks.length
      @native.hook(group, phase.to_s, slot)
      # An on_error hook is given the error and the request; the others the request.
      @hook_blocks << (block.is_a?(Filter) ? block : Context.block_method(block, phase.to_s == "on_error" ? 2 : 1))
      self
    end

    # :nodoc:
    def group_in(parent, prefix)
      id = @native.group(parent, prefix.to_s)
      @group_prefixes[id] = @group_prefixes.fetch(parent, "") + NativeApp.canonical_path(prefix.to_s.sub(%r{/+\z}, ""))
      group = Group.new(self, id)
      yield group if block_given?
      group
    end

    # :nodoc:
    def websocket_in(group, path, subprotocols: [], max_message_bytes: nil, **options, &handler)
      raise ArgumentError, "ferrule: websocket #{path} needs a block" unless handler

      App.refuse_unknown_options("websocket option", path, options.keys, SOCKET_OPTIONS + %i[subprotocols max_message_bytes])
      spec = spec("GET", path, options)
      spec["websocket"] = { "subprotocols" => Array(subprotocols).map(&:to_s) }
      spec["websocket"]["max_message_bytes"] = max_message_bytes if max_message_bytes
      # In the handshake's Context, as a route block is (found by a Sinatra port: helpers,
      # +params+, +request+ and +session+ were NoMethodErrors in the block, so the socket
      # closed with 1011 at once); its callbacks, closures, keep that context.
      context_class = @context_class
      declare(spec, 200, ->(ws, request) { context_class.new(request, 200).instance_exec(ws, request, &handler) }, group: group, block: handler)
      self
    end

    # Declares a route from an explicit core RouteSpec Hash (routes described as data, such as
    # the shared fixture corpus); the block receives the Request.
    def add_route(spec, status: 200, &handler)
      raise ArgumentError, "ferrule: add_route needs a block" unless handler

      declare(spec, status, handler)
      self
    end

    METHODS.each do |m|
      define_method(m.downcase) { |path, **options, &handler| route(m, path, **options, &handler) }
    end

    # A method a subclass's body defined, called from a block: the blocks run in a request
    # context, not in the app (Modular), so it is a NoMethodError that says where it belongs.
    private def refuse_body_methods(names)
      app_class = self.class
      names.each do |name|
        next if @context_class.method_defined?(name) || @context_class.private_method_defined?(name)

        @context_class.define_method(name) do |*|
          raise NoMethodError, "ferrule: #{name} is a method of #{app_class}, and blocks run in a request context, " \
                               "not in the app: define it in `helpers do ... end`"
        end
      end
    end

    # Serves until SIGINT or SIGTERM (or #stop), then drains in-flight requests and returns.
    # When the drain deadline (shutdown_timeout_ms) cut requests off, one line says so and the
    # process exits with status 1.
    # +workers+ > 1 forks that many processes sharing one listening socket. +threads+: Ruby
    # threads running handlers per process (default 5, as Puma's; handler blocks must be
    # thread-safe, as under Puma). With one, a block that waits on I/O (a query, an HTTP
    # call, +sleep+) holds every other request until its deadline; measured on /health
    # (one core, 50 connections), 5 threads served as many requests per second as 1
    # (27-31k vs 30-35k, within run-to-run spread). +runtime_threads+: the Rust runtime's
    # threads (default: usable CPUs).
    def run(host: "127.0.0.1", port: 8000, workers: 1, threads: DEFAULT_THREADS, runtime_threads: nil, &on_ready)
      print_openapi_and_exit if ENV["FERRULE_PRINT_OPENAPI"] == "1"
      raise ArgumentError, "ferrule: workers must be at least 1" if workers < 1
      check_threads(threads) # here too, before any worker is forked
      if workers == 1
        clean = begin
          serve(host: host, port: port, threads: threads, runtime_threads: runtime_threads, &on_ready)
        rescue StartupFailed => e
          warn(e.cause.full_message) if e.cause
          warn e.message
          exit(STARTUP_FAILED)
        end
        exit(1) unless clean
        return
      end

      # Bound once, here: a port in use raises Errno::EADDRINUSE before any fork.
      fd = NativeApp.bind(host, port)
      Ferrule::Workers.new(workers).run do
        serve(host: host, port: port, fd: fd, threads: threads, runtime_threads: runtime_threads, &on_ready)
      end
    ensure
      IO.for_fd(fd).close if fd
    end

    # Serves in this process; the block (if any) is called with the bound port once listening.
    # Returns true after a clean drain, false when the drain deadline cut requests off.
    def serve(host: "127.0.0.1", port: 8000, fd: nil, threads: DEFAULT_THREADS, runtime_threads: nil, signals: true)
      print_openapi_and_exit if ENV["FERRULE_PRINT_OPENAPI"] == "1"
      start_app
      begin
        serve_started(host, port, fd, threads, runtime_threads, signals) { |bound| yield bound if block_given? }
      ensure
        stop_app
      end
    end

    # The startup blocks, once (a failure: StartupFailed, the app not started).
    def start_app
      @start_lock.synchronize do
        return if @started

        random_session_secret
        @on_start.each(&:call)
        @started = true
      end
    rescue StandardError => e
      raise StartupFailed, "ferrule: startup failed: #{e.class}: #{e.message}"
    end

    # The stop blocks (each failure reported, the others still run).
    def stop_app
      @start_lock.synchronize do
        return unless @started

        @started = false
        @on_stop.each do |block|
          block.call
        rescue StandardError => e
          warn "ferrule: an on_stop block raised #{e.class}: #{e.message}"
        end
      end
    end

    private def check_threads(threads)
      raise ArgumentError, "ferrule: threads must be at least 1" unless threads.is_a?(Integer) && threads >= 1
    end

    private def serve_started(host, port, fd, threads, runtime_threads, signals)
      # No thread would take a request: every one would wait for its deadline.
      check_threads(threads)

      start_logging
      bound = @native.start(host, port, fd, runtime_threads)
      @port = bound
      # One thread takes whole batches (fastest); several take one request each, so a
      # handler that blocks does not hold up the others.
      batch = threads > 1 ? 1 : 256
      workers = Array.new(threads) { Thread.new { @native.work(batch, @handlers, @chain_runner) } }
      previous = signals ? %w[INT TERM].to_h { |s| [s, trap(s) { @native.stop }] } : {}
      @native.announce if signals
      yield bound if block_given?
      # Ruby's own IO wait: signals and trap blocks keep working while every handler thread
      # waits for requests without the GVL.
      IO.for_fd(@native.stopped_fd, autoclose: false).wait_readable
      workers.each(&:join)
      # false when the drain deadline cut requests off (the core has printed which).
      @native.finish
    ensure
      previous&.each { |s, handler| trap(s, handler || "DEFAULT") }
      @port = nil
      stop_logging
    end

    # The port being served, while serving.
    attr_reader :port

    # Rack's interface: answers one request in this process, through the whole core (routing,
    # validation, middleware, problem responses) without a socket, so the app runs under
    # +rackup+ / Puma and in Rack::Test. The calling thread runs the handler blocks.
    def call(env)
      start_app
      start_logging
      # Routed on PATH_INFO, as Sinatra routes: mounted under a prefix (`map "/api"`), the
      # prefix is SCRIPT_NAME and the routes are the app's own.
      path = env["PATH_INFO"].to_s
      path = "/#{path}" unless path.start_with?("/")
      query = env["QUERY_STRING"].to_s
      headers = []
      env.each do |key, value|
        next unless value.is_a?(String)

        if key.start_with?("HTTP_")
          headers << key.delete_prefix("HTTP_").downcase.tr("_", "-") << value
        elsif (key == "CONTENT_TYPE" || key == "CONTENT_LENGTH") && !value.empty?
          headers << key.downcase.tr("_", "-") << value
        end
      end
      input = env["rack.input"]
      body = input ? input.read.to_s.b : "".b
      input.rewind if input.respond_to?(:rewind)
      mount = env["SCRIPT_NAME"].to_s
      # The blocks run on this thread, inside this call: what they ask of the env (the mount,
      # the scheme, what middleware left there: +rack.session+) is read from here.
      outer, Thread.current[:__ferrule_rack_env] = Thread.current[:__ferrule_rack_env], env
      begin
        status, flat, payload, cut_off = @native.call_rack(env["REQUEST_METHOD"], query.empty? ? path : "#{path}?#{query}", headers, body, env["REMOTE_ADDR"], @handlers, @chain_runner)
      ensure
        Thread.current[:__ferrule_rack_env] = outer
        unanswered, Thread.current[:__ferrule_unanswered] = Thread.current[:__ferrule_unanswered], nil
      end
      # Sinatra's <tt>set :raise_errors, true</tt>: an exception no error block answered is
      # raised to the Rack caller (a test sees it) instead of being a 500. It was accepted and
      # did nothing (found by a differential run beside Sinatra 3).
      raise unanswered if unanswered && @settings[:raise_errors]
      flat = under_mount(flat, path, mount) if status.between?(300, 399) && !mount.empty?
      answer_headers = rack_headers(flat)
      # Text the core wrote as UTF-8 reads as such (a test's <tt>last_response.body == "café"</tt>).
      payload.force_encoding(Encoding::UTF_8) if answer_headers["content-type"].to_s.match?(%r{charset=utf-8|[/+]json\b}i)
      [status, answer_headers, cut_off ? CutOffBody.new(payload) : [payload]]
    end

    # Under a mount (SCRIPT_NAME), a redirect to the path asked with a slash added or taken away
    # — the core's own: a static directory to its slash, +redirect_slashes+' twin — names the
    # path the app saw, which the client must be sent to under the mount (found by a probe:
    # /api/static/sub went to /static/sub/, a 404). Other locations are the app's, as written.
    def under_mount(flat, path, mount)
      flat.each_slice(2).flat_map do |name, value|
        target = name.casecmp?("location") && value.start_with?("/") ? value.split("?", 2).first : nil
        twin = target && (target == "#{path}/" || "#{target}/" == path)
        [name, twin ? "#{mount}#{value}" : value]
      end
    end
    private :under_mount

    # The Rack body of a response that broke off before its end (a stream whose producer
    # raised): it yields what came, then raises, so a Rack server aborts the response as the
    # core does on a socket instead of ending it as if it were whole.
    class CutOffBody
      def initialize(payload)
        @payload = payload
      end

      def each
        yield @payload unless @payload.empty?
        raise BodyCutOff, "ferrule: the response body broke off before its end (its producer raised)"
      end
    end

    # Stops a running #serve: no new connections, in-flight requests finish.
    def stop
      @native.stop
    end

    private

    # With a Logger: the core queues its records and rings a descriptor; this thread waits on
    # it with Ruby's IO wait (holding no GVL) and writes each batch to the Logger.
    def start_logging
      return if @logger.nil? || @log_thread&.alive?

      io = IO.for_fd(@native.route_logs, autoclose: false)
      @log_thread = Thread.new do
        # stop_logging's kill lands only while this thread waits for records: never between
        # taking a batch (take_logs empties the queue) and writing its last record to the Logger.
        Thread.handle_interrupt(Object => :never) do
          loop do
            Thread.handle_interrupt(Object => :immediate) { io.wait_readable }
            write_logs
          end
        end
      end
    end

    # The thread finishes the batch it is writing (10 s at most, for a Logger stuck on a full
    # pipe: the stop goes on without it), then what the server said on its way out is written.
    def stop_logging
      return unless @log_thread

      thread, @log_thread = @log_thread, nil
      if thread.kill.join(LOGGER_FINISHES_WITHIN)
        write_logs
      else
        warn "ferrule: the logger did not finish writing within #{LOGGER_FINISHES_WITHIN} s; stopping without the rest"
      end
    end

    # A record the Logger raises on is reported and skipped; the rest of the batch is written.
    def write_logs
      @native.take_logs.each do |level, _target, message, _fields|
        @logger.add(SEVERITIES.fetch(level, Logger::INFO), message, "ferrule")
      rescue StandardError => e
        warn "ferrule: the logger raised #{e.class}: #{e.message}"
      end
    end

    # Response headers as Rack wants them: a repeated header is an Array under Rack 3, one
    # String with a line per value under Rack 2.
    def rack_headers(flat)
      rack2 = defined?(Rack.release) && Rack.release < "3"
      flat.each_slice(2).each_with_object({}) do |(name, value), headers|
        headers[name] = if !headers.key?(name) then value
                        elsif rack2 then "#{headers[name]}\n#{value}"
                        else Array(headers[name]) << value
                        end
      end
    end

    # A route block runs in a Ferrule::Context (Sinatra's +status+, +headers+, +redirect+,
    # +halt+): one object, a +catch+ and an +instance_exec+ per request, measured at 0.4 µs
    # of CPU (1M calls of a block returning a Hash: 0.14 µs called directly, 0.55 µs so).
    # The block is called as a method (Context.block_method, so +return+ works): 1M calls of
    # +bind_call+ 0.18 µs each against +instance_exec+'s 0.17 µs.
    # The expression the core matches a Regexp route by (its flags written into it, as Rust's
    # regex reads them), or a Sinatra pattern the template syntax has no word for (a +?+ that
    # makes what is before it optional), read as Filter reads it; nil for a template.
    def route_pattern(path)
      if path.is_a?(Regexp)
        # In Ruby a Regexp with named groups captures nothing else; Rust's regex numbers the rest.
        source = path.names.empty? ? path.source : App.non_capturing(path.source)
        flags = { Regexp::IGNORECASE => "i", Regexp::EXTENDED => "x", Regexp::MULTILINE => "s" }.filter_map { |bit, flag| flag if path.options & bit != 0 }.join
        # With the x flag a comment would run to the end: the group closes on a line of its own.
        return source if flags.empty?

        return "(?#{flags}:#{source}#{flags.include?('x') ? "\n" : ''})"
      end
      path.include?("?") ? PathPattern.source(path).first : nil
    end

    # +source+ with each plain group <tt>(...)</tt> made <tt>(?:...)</tt> (escapes and character
    # classes skipped).
    def self.non_capturing(source)
      out = +""
      escaped = in_class = false
      source.each_char.with_index do |char, at|
        out << char
        if escaped then escaped = false
        elsif char == "\\" then escaped = true
        elsif char == "[" then in_class = true
        elsif char == "]" then in_class = false
        elsif char == "(" && !in_class && source[at + 1] != "?" then out << "?:"
        end
      end
      out
    end

    def sinatra_style(handler, status, capture_names = nil, target = nil)
      context_class = @context_class
      ->(request) { context_class.new(request, status, capture_names, target).__ferrule_run(handler) }
    end

    def declare(spec, status, handler, group: 0, block: handler, capture_names: nil, target: nil)
      index = begin
        @native.add_route(JSON.generate(spec), status, group)
      rescue ArgumentError => e
        # A route as the app wrote it: a trailing "*", not the template it is read as (the
        # message named "{ferrule_splat:path}": found by a differential run).
        raise ArgumentError, e.message.gsub("{#{SPLAT_PARAM}:path}", "*"), cause: nil
      end
      @handlers[index] = handler
      @blocks[index] = block
      @statuses[index] = status
      @capture_names[index] = capture_names
      @targets[index] = target
      @sockets[index] = !(spec["websocket"] || spec[:websocket]).nil?
    end

    # A request with hooks, or a refused one they must see, or a WebSocket's +handshake+
    # (NativeApp#work calls it): the chain's filters and the route's block run in one Context.
    # A handshake runs WebSocket.admission where the route's block would, once the +before+
    # filters let it through (as Sinatra's do, on the request a faye-websocket route upgrades);
    # the +after+ filters see its 101, as Sinatra's see that route's answer.
    def run_chain(number, index, request, refusal, handshake = nil)
      chain = @chains[number] ||= Chain.new(@hook_blocks, @native.hooks_of(number))
      status = index ? @statuses[index] : refusal[0]
      block = index && (@sockets[index] ? WebSocket.admission(handshake, request) : @blocks[index])
      @context_class.new(request, status, index && @capture_names[index], index && @targets[index]).__ferrule_run_chain(chain, block, refusal, @error_handlers)
    end

    # Which of the core's refusals the language must now see, for an error block's +key+.
    def catch_refusals(key)
      case key
      when Integer then @native.catch(key)
      when Range then key.each { |code| @native.catch(code) if code.is_a?(Integer) && (400..599).cover?(code) }
      when Class
        if key <= ValidationError then @native.catch(422)
        elsif key <= HTTPError then @native.catch(nil)
        end
      else raise ArgumentError, "ferrule: an error block is for an exception class, a status or a range of them, not #{key.inspect}"
      end
    end

    OBJECT_RULE_SOURCES = { "query" => "query", "headers" => "header", "cookies" => "cookie" }.freeze

    # A +query:+, +headers:+ or +cookies:+ object schema (not the name => schema shorthand),
    # with String keys, for the core to judge what it says of the parameters as one object
    # (+anyOf+ of +required+s, +minProperties+, draft-07's +dependencies+, ...); nil otherwise.
    # Those keywords were dropped, so "either id or name" let a request with neither through
    # (found beside Fastify 5, whose schemas these are).
    def object_schema_of(schema)
      return nil unless schema.is_a?(Hash)

      schema = JSON.parse(JSON.generate(schema))
      schema if schema["type"] == "object" && schema["properties"].is_a?(Hash)
    end

    def params_of(schema, where)
      return nil if schema.nil?

      schema = schema.transform_keys(&:to_s)
      if schema["type"] == "object" && schema["properties"].is_a?(Hash)
        required = Array(schema["required"]).map(&:to_s)
        return schema["properties"].map { |name, s| param_entry(name, s.transform_keys(&:to_s), required.include?(name.to_s)) }
      end
      schema.map do |name, s|
        raise ArgumentError, "ferrule: #{where}: #{name} needs a schema Hash" unless s.is_a?(Hash)

        s = s.transform_keys(&:to_s)
        param_entry(name, s.except("required"), s["required"])
      end
    end

    STATUS_KEY = /\A([1-5]\d\d|[1-5]XX|default)\z/i

    # +response:+ → the core's declared responses: one schema (for the route's +status+), or a
    # Hash whose keys are all statuses. A schema's "description" describes the response in the
    # OpenAPI document.
    def responses_of(response, status, where)
      raise ArgumentError, "ferrule: #{where}: response must be a schema Hash" unless response.is_a?(Hash)

      statuses = !response.empty? && response.keys.all? { |key| key.is_a?(Integer) || STATUS_KEY.match?(key.to_s) }
      by_status = statuses ? response : { status => response }
      by_status.to_h do |code, schema|
        raise ArgumentError, "ferrule: #{where}: response #{code} must be a schema Hash" unless schema.is_a?(Hash)

        schema = JSON.parse(JSON.generate(schema))
        entry = { "schema" => schema }
        entry["description"] = schema["description"] if schema["description"].is_a?(String)
        [code.to_s, entry]
      end
    end

    # OpenAPI's +style+ and +explode+ of an array parameter ride along in its schema Hash.
    def param_entry(name, schema, required)
      entry = { "name" => name.to_s, "schema" => schema.except("style", "explode") }
      entry["required"] = required unless required.nil?
      %w[style explode].each { |key| entry[key] = schema[key] if schema.key?(key) }
      entry
    end

    def spec(method, path, options, status = 200)
      spec = { "method" => method, "path" => path }
      where = "#{method} #{path}"
      spec["responses"] = responses_of(options.delete(:response), status, where) if options.key?(:response)
      { query: "query", headers: "headers", cookies: "cookies", params: "path_params" }.each do |option, key|
        schema = options.delete(option)
        list = params_of(schema, "#{where} #{option}")
        spec[key] = key == "path_params" ? list.map { |p| p.slice("name", "schema") } : list if list
        whole = object_schema_of(schema) unless key == "path_params"
        (spec["object_rules"] ||= {})[OBJECT_RULE_SOURCES[key]] = whole if whole
      end
      bodies = BODY_KINDS.keys & options.keys
      raise ArgumentError, "ferrule: #{where}: give one of #{BODY_KINDS.keys.join(', ')}" if bodies.size > 1

      if (option = bodies.first)
        schema = options.delete(option)
        spec["body"] = { "kind" => BODY_KINDS[option], "required" => options.delete(:body_required) != false }
        spec["body"]["schema"] = schema if schema.is_a?(Hash)
        spec["body"]["max_file_size"] = options.delete(:max_file_size) if options.key?(:max_file_size)
      end
      (%i[cors compression body_limit timeout_ms] + DOC_OPTIONS).each { |k| spec[k.to_s] = options.delete(k) if options.key?(k) }
      App.refuse_unknown_options("route option", where, options.keys, ROUTE_OPTIONS)

      spec
    end
  end

  # The parent of forked worker processes: starts them, forwards SIGINT/SIGTERM, restarts a
  # worker that dies, returns when all have exited after a stop.
  class Workers
    def initialize(count)
      @count = count
      @stopping = false
      @children = []
    end

    def run(&serve)
      previous = %w[INT TERM].to_h { |s| [s, trap(s) { stop }] }
      @count.times { spawn(&serve) }
      failed = false
      until @children.empty?
        pid, status = Process.wait2
        @children.delete(pid)
        next if @stopping

        if status.exitstatus == App::STARTUP_FAILED
          warn "ferrule: worker #{pid} failed its startup; stopping"
          failed = true
          stop
          next
        end

        warn "ferrule: worker #{pid} exited (#{status.exitstatus || status.termsig}); starting another"
        sleep 1
        spawn(&serve)
      end
      exit(App::STARTUP_FAILED) if failed
      nil
    ensure
      previous&.each { |s, handler| trap(s, handler || "DEFAULT") }
    end

    private

    def spawn(&serve)
      @children << fork do
        %w[INT TERM].each { |s| trap(s, "DEFAULT") }
        exit!(serve.call == false ? 1 : 0)
      rescue StartupFailed => e
        warn(e.cause.full_message) if e.cause
        warn e.message
        exit!(App::STARTUP_FAILED)
      rescue Exception => e # rubocop:disable Lint/RescueException -- a worker reports and exits
        warn "ferrule: worker #{Process.pid} failed: #{e.class}: #{e.message}"
        exit!(1)
      end
    end

    def stop
      @stopping = true
      @children.each do |pid|
        Process.kill("TERM", pid)
      rescue Errno::ESRCH
        nil
      end
    end
  end
end
