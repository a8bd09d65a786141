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

    # +capture_names+: the route's Regexp's named groups, whose values are also its +captures+.
    # +route+: the route's PassTargets::Target, which +pass+ goes on from.
    def initialize(request, default_status, capture_names = nil, route = nil)
      @request = request
      @__ferrule_capture_names = capture_names
      @__ferrule_route = route
      @__ferrule_status = nil
      @__ferrule_headers = nil
      @__ferrule_default_status = default_status
      @__ferrule_given_body = NOT_GIVEN
    end

    # A block the app declares — a route's, a filter, a hook, an error block — as a method of
    # this class, as Sinatra makes each, so that +return+ in it ends it with its value (from a
    # block run by +instance_exec+ it is a LocalJumpError, a 500). Made once, when declared.
    # +given+: how many arguments it is run with (the request; or the error and the request),
    # of which it gets as many as it takes, as a block would. A lambda, or a block that needs
    # more than +given+ or a keyword, keeps running as a block. Cost: 2M calls through the
    # runners below (least of 7 runs), 0.22 µs each by +bind_call+ against 0.16 µs by
    # +instance_exec+, with one argument or two: about 0.06 µs more per block a request meets.
    def self.block_method(block, given)
      return block if block.lambda?

      unbound = BLOCK_METHOD_LOCK.synchronize do
        define_method(:__ferrule_block, &block)
        instance_method(:__ferrule_block).tap { remove_method(:__ferrule_block) }
      end
      kinds = unbound.parameters.map(&:first)
      required = kinds.count(:req)
      return block if required > given || kinds.include?(:keyreq)

      BlockMethod.new(unbound, kinds.include?(:rest) ? given : [required + kinds.count(:opt), given].min)
    end
    BLOCK_METHOD_LOCK = Mutex.new
    private_constant :BLOCK_METHOD_LOCK

    # A block made a method (Context.block_method), and how many arguments it takes.
    BlockMethod = Struct.new(:unbound, :takes)
    private_constant :BlockMethod

    # Runs +block+ for the request; returns what the core sends.
    def __ferrule_run(block)
      result = catch(:halt) do
        # __ferrule_run_route, inlined for a route without filters, which pins no type: 55 ns
        # a request was 15 (the context's run alone, 765 ns before +pass+).
        answer = begin
          @__ferrule_route&.conditions ? __ferrule_run_route(block) : __ferrule_run_body(block)
        rescue Passed => e
          __ferrule_passed_on(e.block, false)
        end
        __ferrule_with_given_body(answer)
      end
      __ferrule_finish(result)
    end

    # The route's block, and on +pass+ the later routes that take the request (PassTargets), as
    # Sinatra's +route!+ runs them: each with its own captures in +params+ and its own default
    # status; a Content-Type set since the first began is dropped before the next. When none
    # takes it, the last +pass+ block's value answers, else a 404. +pass+ raises (Passed), as
    # a +rescue+ costs nothing to a request that does not pass, where a +catch+ per request
    # cost 100-200 ns (Ruby 3.1).
    def __ferrule_run_route(block)
      # A type the filters set before the route is kept, as Sinatra's "pinned" one is.
      pinned = @__ferrule_headers&.key?("content-type")
      conditions = @__ferrule_route&.conditions
      return __ferrule_passed_on(nil, pinned) if conditions && !__ferrule_conditions_hold?(conditions)

      __ferrule_run_body(block)
    rescue Passed => e
      __ferrule_passed_on(e.block, pinned)
    end

    # Whether none of a route's Conditions says no (only +false+ does, as in Sinatra).
    def __ferrule_conditions_hold?(conditions)
      conditions.none? { |condition| instance_exec(&condition) == false }
    end

    def __ferrule_passed_on(pass_block, pinned)
      leaving = __ferrule_route_keys
      route = @__ferrule_route
      while route && (found = self.class.pass_targets.after(route, @request.request_method, @request.path_info))
        route, captures = found
        __ferrule_header_hash.delete("content-type") unless pinned
        @params = params.except(*leaving).merge!(captures)
        leaving = captures.keys
        @__ferrule_route = route
        @__ferrule_capture_names = route.capture_names
        @__ferrule_default_status = route.status
        next if route.conditions && !__ferrule_conditions_hold?(route.conditions)

        begin
          return __ferrule_run_body(route.block)
        rescue Passed => e
          pass_block = e.block || pass_block
        end
      end
      # Run without the last route's parameters, as Sinatra runs it (after the routes).
      @params = params.except(*leaving)
      return __ferrule_run_body(pass_block) if pass_block

      raise HTTPError.new(404, "No route matches this path.")
    end

    # The names the routed route's match put in +params+ (its path's parameters, "splat",
    # "captures"): a route +pass+ goes on to sees its own instead.
    def __ferrule_route_keys
      keys = (@request.params || {}).keys.map { |name| Params.key_of(name) }
      keys << "captures" if @__ferrule_capture_names
      keys
    end

    # A route's block, a filter or a hook (Context.block_method) with this context as +self+ and
    # the request as its argument, if it takes one. Named, as the two below, so that no helper
    # module shadows it.
    def __ferrule_run_body(body)
      return instance_exec(@request, &body) if body.is_a?(Proc)

      body.takes.zero? ? body.unbound.bind_call(self) : body.unbound.bind_call(self, @request)
    end

    # A +before+ or +after+ filter: one with a pattern runs for the paths it matches.
    def __ferrule_run_filter(filter)
      __ferrule_run_pattern_filter(filter)
    rescue Passed
      nil
    end

    def __ferrule_run_pattern_filter(filter)
      return __ferrule_run_body(filter) unless filter.is_a?(Filter)

      captures = filter.captures(@request.path_info) or return
      return __ferrule_run_body(filter.body) if captures.empty?

      # As in Sinatra, the pattern's captures are in +params+ while the filter runs, and only
      # they are taken back after it: what the filter wrote there stays for the route (found by
      # a probe: a JSON body merged into params in <tt>before "/api/*"</tt> was lost).
      before = params
      @params = before.dup.tap { |inner| captures.each { |name, value| inner[name] = value } }
      begin
        __ferrule_run_body(filter.body)
      ensure
        # A capture's name gets back the value it had (the route's own parameter of that name).
        captures.each_key { |name| before.key?(name) ? @params[name] = before[name] : @params.delete(name) }
      end
    end

    # An error block or an +on_error+ hook, given the error and the request (as many as it takes).
    def __ferrule_run_with_error(body, error)
      return instance_exec(error, @request, &body) if body.is_a?(Proc)

      case body.takes
      when 0 then body.unbound.bind_call(self)
      when 1 then body.unbound.bind_call(self, error)
      else body.unbound.bind_call(self, error, @request)
      end
    end

    # Runs a request's whole chain in this context: the +before+ filters (+on_request+), the
    # refusal of a request the core refused, the +pre_handler+ hooks, the route's +block+; what
    # raises goes to the +on_error+ hooks and then the nearest error block; then the +after+
    # filters (+on_send+), which may change the status, headers and body (one that raises goes
    # to the hooks and error blocks in the same way). A +halt+ in a filter answers at once.
    # The after filters run after an exception no error block answers too, as Sinatra's (in an
    # +ensure+): it is raised again after them, carrying the 500 they made of it.
    def __ferrule_run_chain(chain, block, refusal, error_handlers)
      @__ferrule_result = catch(:halt) do
        chain.on_request.each { |filter| __ferrule_run_filter(filter) }
        raise __ferrule_refusal_error(refusal) if refusal
        chain.pre_handler.each { |hook| __ferrule_run_body(hook) }
        __ferrule_with_given_body(__ferrule_run_route(block))
      rescue SignalException => e
        # A signal reaches Ruby's main thread only: there (a Rack call, a test), Ctrl-C stops
        # the program. On a worker thread a block raised it (`raise Interrupt`): the app's
        # error, as under Puma; re-raised, it ended the thread, and after +threads:+ of them
        # the server answered nothing (found by an attack probe).
        raise if Thread.current.equal?(Thread.main)

        __ferrule_recovered(e, chain, refusal, error_handlers)
      rescue Exception => e # rubocop:disable Lint/RescueException -- as Sinatra: a NotImplementedError placeholder is the app's error too
        __ferrule_recovered(e, chain, refusal, error_handlers)
      end
      begin
        @__ferrule_in_after = true
        chain.on_send.each do |filter|
          # A +halt+ here answers with what it gives, as Sinatra's after filters do.
          halted = catch(:halt) { __ferrule_run_filter(filter) }
          @__ferrule_result = halted if halted.is_a?(Halted)
        end
      rescue Exception => e # rubocop:disable Lint/RescueException -- as above
        raise if e.is_a?(SignalException) && Thread.current.equal?(Thread.main)

        if @__ferrule_unanswered
          # The exception the 500 is for stays the one logged.
          warn "ferrule: an after filter raised #{e.class} after #{@__ferrule_unanswered.class}: #{e.message}"
        else
          # Sinatra hands an after filter's exception to the error blocks too; what they answer
          # is sent without running the after filters again.
          @__ferrule_result = __ferrule_recovered(e, chain, refusal, error_handlers)
        end
      end
      __ferrule_answer_for_status(error_handlers) unless @__ferrule_recovered
      answer = __ferrule_finish(@__ferrule_result)
      if @__ferrule_unanswered
        # Under a Rack call, kept for <tt>set :raise_errors, true</tt> to raise to the caller
        # (App#call), as Sinatra raises it to Rack::Test.
        Thread.current[:__ferrule_unanswered] = @__ferrule_unanswered if Thread.current[:__ferrule_rack_env]
        raise __ferrule_carrying(@__ferrule_unanswered, answer)
      end
      # As Sinatra's dump_errors: an exception an error block answered with a server error
      # (<tt>error 500</tt>, a block for StandardError) is logged all the same.
      raise __ferrule_carrying(@__ferrule_failure, answer) if @__ferrule_failure && Context.status_of(answer) >= 500

      answer
    end

    # In an +after+ filter, the body the route answered with (what its block returned); given
    # a value, replaces it.
    def body(value = NOT_GIVEN)
      return (@__ferrule_result.is_a?(Halted) ? @__ferrule_result.body : @__ferrule_result) if value.equal?(NOT_GIVEN)

      @__ferrule_given_body = value
      @__ferrule_result = value
    end

    # What a route's block returned, after its +body+ helper set the body: as in Sinatra, an
    # Integer is the status beside that body, a body (a String, an Array, a Hash, a Response,
    # anything with +each+) replaces it, and anything else (nil, +true+ from a last
    # <tt>logger.info</tt>) keeps it (before, each was the answer and the body went missing).
    def __ferrule_with_given_body(returned)
      return returned if @__ferrule_given_body.equal?(NOT_GIVEN)

      case returned
      when Integer
        status(returned)
        @__ferrule_given_body
      when String, Response, Halted then returned
      else returned.respond_to?(:each) ? returned : @__ferrule_given_body
      end
    end

    # Sinatra's +params+: what the query string, a form body and the path carry, by name, with
    # String and Symbol keys alike (<tt>params["name"]</tt> or <tt>params[:name]</tt>); a path
    # parameter wins over a form field, which wins over the query. A name the route declares
    # has its typed value (as in +req.params+, +req.query+), any other the text sent; Rack's
    # nested names nest, in the query and a form alike (<tt>tags[]</tt> an Array,
    # <tt>user[name]</tt> a Hash: Params.nest). Built on first use (a JSON body is +req.body+,
    # as in Sinatra).
    def params
      @params ||= Params.of(@request, @__ferrule_capture_names)
    end

    # Sets the status (or returns the one set so far).
    def status(code = nil)
      @__ferrule_status = Integer(code) unless code.nil?
      # Set by an after filter, it is the answer's whatever the route answered with (a Rack
      # triplet's, a Response's, [201, "…"]'s), as Sinatra's response.status is.
      @__ferrule_status_after = @__ferrule_status if @__ferrule_in_after && !code.nil?
      # In an after filter, the status the route's answer carries (a Rack triplet's, a
      # Response's, a bare Integer), as Sinatra's reads the response's: before, a route that
      # answered [418, …] read 200 here.
      __ferrule_ended_with
    end

    # Adds headers (a value may be an Array: one header line each), or returns those set: the
    # block's own Hash, so <tt>headers["x-id"] = "7"</tt> sets one too (before, it wrote to a
    # throwaway Hash until some header had been set, so a CORS filter's was lost).
    def headers(hash = nil)
      __ferrule_header_hash.merge!(hash.transform_keys { |k| k.to_s.downcase }) if hash
      __ferrule_header_hash
    end

    # Sinatra's +response+: the answer being built, written to as a Rack::Response
    # (<tt>response.set_cookie</tt>, <tt>response.headers["x-id"] = "7"</tt>, <tt>response.status = 202</tt>).
    def response = @response ||= ResponseWriter.new(self)

    # Sinatra's +env+: the request's Rack env (in an error block, <tt>env["sinatra.error"]</tt>
    # is the error), built on first use.
    def env = @request.env

    # Sinatra's +session+: the Rack session a session middleware (Rack::Session::Cookie) keeps
    # in the env; else the app's signed cookie (+app.sessions+); else a Hash of this request's
    # own, as Rack gives it.
    def session
      rack = Thread.current[:__ferrule_rack_env]
      store = self.class.session_cookie
      # A session middleware leaves +rack.session.options+ beside its session. A bare
      # +rack.session+ is Rack::Test's (an empty Hash, or what a test presets): with the app's
      # own cookie it only seeds that session, as Rack::Session merges it, and the session is
      # put where the test reads it. It took the cookie's place (found by a probe: logging in
      # then follow_redirect! was a 401).
      # Rack::Test's follow_redirect! passes the options key too, empty: only a middleware's
      # options (its cookie's path, key, ...) say one is there (found by a probe: the followed
      # request's session writes were lost).
      return rack["rack.session"] if rack&.key?("rack.session") && (store.nil? || Context.middleware_options?(rack["rack.session.options"]))
      return env["rack.session"] ||= {} unless store

      @__ferrule_session ||= store.load(@request.cookies[store.key]).tap do |loaded|
        @__ferrule_session_saved = JSON.generate(loaded)
        preset = rack && rack["rack.session"]
        preset.each { |name, value| loaded[name] = value } if preset.is_a?(Hash)
        rack["rack.session"] = loaded if rack
      end
    end

    # Whether a Rack env's +rack.session.options+ are a session middleware's (never empty).
    def self.middleware_options?(options) = options.respond_to?(:empty?) && !options.empty?

    class << self
      # The app's signed session cookie (Ferrule::SessionCookie), set by +app.sessions+.
      attr_accessor :session_cookie
      # The app's routes in declaration order, which +pass+ goes on through (PassTargets).
      attr_accessor :pass_targets
      # What the app's +set+ set (Ferrule::Settings).
      attr_accessor :settings
      # Whether +set :default_content_type+ was given: a String result reads the setting only
      # then (looked up on every String result, it cost 73 ns a request, measured in a loop).
      attr_accessor :default_content_type_set
    end

    # Sinatra's +settings+: what the app's +set+ set (<tt>settings.db</tt>).
    def settings = self.class.settings

    # Writes the session's cookie when the request changed it.
    def __ferrule_save_session
      options = @__ferrule_session.is_a?(SessionCookie::Session) ? @__ferrule_session.options : {}
      # Rack's cookie store writes no cookie for a skipped or dropped session.
      return if options[:skip] || options[:drop]

      if options[:renew] && @__ferrule_session.key?("session_id")
        @__ferrule_session.delete("session_id")
        @__ferrule_session.id
      end
      now = JSON.generate(@__ferrule_session)
      return if now == @__ferrule_session_saved && !options.key?(:expire_after)

      cookie = self.class.session_cookie.cookie(@__ferrule_session) or return
      response.set_cookie(self.class.session_cookie.key, cookie)
      @__ferrule_session_saved = now
    end

    # Sinatra's +uri+ (+url+, +to+): +addr+ (the request's path when nil) as an absolute URL on
    # the host the request named, under the mount it came through (+add_script_name+).
    def uri(addr = nil, absolute = true, add_script_name = true)
      return addr.to_s if addr.to_s.match?(/\A[a-z][a-z0-9+.\-]*:/i)

      # Joined as Sinatra joins them, as file names: <tt>redirect "target"</tt> is
      # +http://host/target+ (it was +http://hosttarget+: found by a differential run).
      # The host first, or nothing, which roots the path: "target" is "/target" too.
      parts = [absolute ? @request.base_url : ""]
      parts << @request.script_name.to_s if add_script_name
      parts << (addr || @request.path_info).to_s
      File.join(parts)
    end
    alias url uri
    alias to uri

    # Sinatra's +back+: where the request came from (its Referer), for <tt>redirect back</tt>.
    def back = @request.referer

    # Sinatra's +error(code, body)+ and +not_found(body)+ in a block: stop and answer with that
    # status (its error block, if one is declared, answers it).
    def error(code, body = nil)
      code, body = 500, code.to_str if code.respond_to?(:to_str)
      halt(code, body)
    end

    def not_found(body = nil) = error(404, body)

    # Sinatra's +pass+: this route gives the request up, and the next route declared after it
    # that takes the path runs (Context#__ferrule_run_route); with none, the block's value
    # answers when one is given, else a 404 that +not_found+ answers. In a filter it ends the
    # filter, as in Sinatra.
    def pass(&block)
      raise Passed.new(block)
    end

    # Sinatra's +cache_control+: <tt>cache_control :public, max_age: 60</tt>.
    def cache_control(*values, **options)
      parts = values.map { |value| value.to_s.tr("_", "-") }
      options.each { |name, value| parts << (value == true ? name.to_s.tr("_", "-") : "#{name.to_s.tr("_", "-")}=#{value}") }
      headers("cache-control" => parts.join(", "))
    end

    # Sinatra's +expires+: a number of seconds from now (or a Time), with +cache_control+'s values.
    def expires(amount, *values)
      require "time"
      time = amount.is_a?(Numeric) ? Time.now + amount : amount
      cache_control(*values, max_age: [(time - Time.now).round, 0].max)
      headers("expires" => time.httpdate)
    end

    # Sinatra's +last_modified+: sets Last-Modified, and answers 304 when the request's
    # If-Modified-Since is not older.
    def last_modified(time)
      return unless time # `last_modified post.updated_at` of a post never updated: nothing, as in Sinatra

      require "time"
      time = Time.at(time) if time.is_a?(Numeric)
      time = Time.parse(time.to_s) unless time.is_a?(Time)
      headers("last-modified" => time.httpdate)
      # RFC 9110 §13.2.2's order, as Sinatra's: If-Unmodified-Since unless If-Match is there
      # (a 412 when the resource changed since: it was ignored, found by a probe), and
      # If-Modified-Since unless If-None-Match is.
      unmodified = @request.header("if-unmodified-since")
      halt 412 if unmodified && !@request.header("if-match") && (Time.httpdate(unmodified).to_i < time.to_i rescue false)
      since = @request.header("if-modified-since")
      return if @request.header("if-none-match")

      halt 304 if since && %w[GET HEAD].include?(@request.method) && (Time.httpdate(since).to_i >= time.to_i rescue false)
    end

    # Sinatra's +etag+: sets ETag (+kind+ :weak for a weak one), and answers 304 (GET, HEAD)
    # or 412 (other methods) when If-None-Match names it, and 412 when an If-Match names
    # another (compared strongly: a weak tag matches only "*"). If-Match was ignored (found
    # by a probe against Sinatra, which answers 412).
    def etag(value, options = {})
      # Sinatra 3's <tt>etag "v7", kind: :weak</tt> (and 1's <tt>etag "v7", :weak</tt>): taken as the
      # bare Symbol only, a weak tag went out strong (found by a probe).
      options = { kind: options } unless options.is_a?(Hash)
      unknown = options.keys - %i[kind]
      raise ArgumentError, "ferrule: etag: unknown option #{unknown.first.inspect} (known: kind)" unless unknown.empty?

      kind = options.fetch(:kind, :strong)
      raise ArgumentError, "ferrule: etag: kind is :strong or :weak, not #{kind.inspect}" unless %i[strong weak].include?(kind)

      tag = kind == :weak ? %(W/"#{value}") : %("#{value}")
      headers("etag" => tag)
      wanted = @request.header("if-none-match").to_s.split(",").map(&:strip)
      if wanted.include?("*") || wanted.any? { |given| given.delete_prefix("W/") == tag.delete_prefix("W/") }
        halt(%w[GET HEAD].include?(@request.method) ? 304 : 412)
      end
      required = @request.header("if-match") or return
      tags = required.split(",").map(&:strip)
      halt 412 unless tags.include?("*") || (kind != :weak && tags.include?(tag))
    end

    # Sinatra's +attachment+: Content-Disposition for a download, its type from the name.
    def attachment(filename = nil, disposition = :attachment)
      value = disposition.to_s
      value += %(; filename="#{File.basename(filename.to_s).gsub(/["\\\r\n]/, "_")}") if filename
      headers("content-disposition" => value)
      extension = File.extname(filename.to_s).delete_prefix(".")
      content_type(extension.to_sym) if !extension.empty? && !headers.key?("content-type") && (Context.media_type(extension.to_sym) rescue nil)
    end

    # Sinatra's +send_file+: answers with the file (its type from the extension, or +type:+),
    # Last-Modified from its mtime; +disposition:+ or +filename:+ make it a download. The core
    # sends it from disk as a static mount sends its files: ranges (206, 416, If-Range), ETag
    # and 304s, never read by Ruby. A file that is not there is a 404.
    def send_file(path, type: nil, disposition: nil, filename: nil, last_modified: nil, status: nil)
      path = path.to_s
      # A 404 problem, as the core answers a static file it cannot find (an error 404 block
      # takes it, as Sinatra's not_found block takes send_file's); a bare halt sent an empty
      # text/plain body.
      raise HTTPError.new(404, "No file at this path.") unless File.file?(path)
      if type
        content_type(type.is_a?(Symbol) ? type : type.to_s)
      elsif !headers.key?("content-type")
        require "rack/mime"
        content_type(Rack::Mime.mime_type(File.extname(path), "application/octet-stream"))
      end
      attachment(filename || path, disposition || :attachment) if disposition || filename
      self.last_modified(last_modified || File.mtime(path))
      status(status) if status
      halt FileBody.new(path)
    end

    # The file +send_file+ answers with, as a Rack body: +to_path+ names it, and the core
    # sends it from there (Rack lets a server do so in place of calling +each+, which is
    # for anything else that reads the body: a middleware, a test).
    class FileBody
      SIZE = 64 * 1024

      def initialize(path)
        @path = path
      end

      def to_path = @path

      def each
        File.open(@path, "rb") do |file|
          while (chunk = file.read(SIZE))
            yield chunk
          end
        end
      end
    end

    # Sinatra's +logger+: a Logger on stderr (the rack.logger a middleware set, when there is one).
    def logger = Thread.current[:__ferrule_rack_env]&.[]("rack.logger") || Context.logger

    def self.logger
      @logger ||= begin
        require "logger"
        Logger.new($stderr, progname: "ferrule")
      end
    end

    # Sets Content-Type: a media type, or a Symbol (+:json+, +:html+, +:png+: see +media_type+),
    # with parameters as Sinatra takes them (<tt>content_type :json, charset: "utf-8"</tt>).
    # A text type without a charset gets <tt>charset=utf-8</tt>, as Sinatra gives it: the
    # core sends Ruby's Strings as UTF-8.
    def content_type(type, **params)
      media = type.is_a?(Symbol) ? Context.media_type(type) : type.to_s
      # A parameter given replaces the type's own (+:html+ comes with charset=utf-8); nil
      # gives none.
      params.each_key { |name| media = media.sub(/\s*;\s*#{Regexp.escape(name.to_s)}=(?:"[^"]*"|[^;]*)/i, "") }
      params = { charset: "utf-8" }.merge(params) if Context.charset_added?(media) && !media.match?(/;\s*charset=/i)
      params.each { |name, value| media += "; #{name}=#{value.to_s.match?(/[";,\s]/) ? value.to_s.inspect : value}" unless value.nil? }
      headers("content-type" => media)
    end

    # sinatra-contrib's +json+ (Sinatra::JSON): +object+ sent as JSON, as a returned Hash or
    # Array is (written by the core, with the same rules for its values), a String, number or
    # nil as its JSON text; <tt>content_type:</tt> another JSON type, <tt>encoder:</tt> an
    # object with +generate+ (or a method name the object answers) instead.
    def json(object, options = {})
      unknown = options.keys - %i[content_type encoder json_encoder]
      raise ArgumentError, "ferrule: json: unknown option #{unknown.first.inspect} (known: content_type, encoder)" unless unknown.empty?

      content_type(options.fetch(:content_type, :json))
      encoder = options[:encoder] || options[:json_encoder]
      return object.public_send(encoder) if encoder.is_a?(Symbol) || encoder.is_a?(String)
      return encoder.generate(object) if encoder
      object.is_a?(Hash) || object.is_a?(Array) ? object : JSON.generate(object)
    end

    # Sinatra's +add_charset+: the types it gives <tt>charset=utf-8</tt> unasked, text and the
    # three application types that are text (+:js+ and +:xml+ were sent without: found by a
    # differential run beside Sinatra 3).
    CHARSET_ADDED = %w[application/javascript application/xml application/xhtml+xml].freeze

    def self.charset_added?(media)
      base = media.split(";", 2).first.strip.downcase
      base.start_with?("text/") || CHARSET_ADDED.include?(base)
    end

    # A Symbol as Sinatra reads one: ours first, then Rack's table of extensions (+:png+ is
    # image/png); a Symbol neither knows is a mistake in the program, not a type to send.
    def self.media_type(symbol)
      MEDIA_TYPES.fetch(symbol) do
        begin
          require "rack/mime"
        rescue LoadError
          nil
        end
        known = defined?(Rack::Mime) && Rack::Mime.mime_type(".#{symbol}", nil)
        known or raise ArgumentError, "ferrule: unknown media type #{symbol.inspect}"
      end
    end

    # Stops the block and redirects, with Sinatra's status: 302 after a GET, 303 after any other
    # method of an HTTP/1.1 request (under Rack, as Sinatra, only when the env says HTTP/1.1,
    # so Rack::Test sees 302). What follows the location is +halt+'s, as in Sinatra:
    # <tt>redirect to("/"), 301</tt>, <tt>redirect url, "moved"</tt>. The Location is absolute,
    # as Sinatra's +absolute_redirects+ (on by default) makes it: <tt>set :absolute_redirects,
    # false</tt> keeps it as given (found by a probe: "/x" went out where Sinatra sends
    # "http://example.org/x", which Sinatra apps' tests assert). No location (<tt>redirect
    # back</tt> without a Referer) is the site's root: an empty Location sent a browser back to
    # the same page for ever (found by a probe, with the extra arguments taken as a status).
    def redirect(location, *rest)
      location = "#{@request.script_name}/" if location.nil? || location.to_s.empty?
      rack = Thread.current[:__ferrule_rack_env]
      http11 = rack ? rack["HTTP_VERSION"] == "HTTP/1.1" : true
      status(http11 && @request.method != "GET" ? 303 : 302)
      # A request that names no host (a bare Rack env) keeps the location as given.
      absolute = settings[:absolute_redirects] && !@request.host_with_port.to_s.empty?
      headers("location" => uri(location.to_s, absolute, settings[:prefixed_redirects]))
      rest << "" unless rest.any? { |part| part.is_a?(String) || part.is_a?(Array) }
      halt(*rest)
    end

    # Stops the block and answers: <tt>halt</tt>, <tt>halt 404</tt>, <tt>halt 401, "no"</tt>,
    # <tt>halt 302, { "location" => "/" }, ""</tt>, <tt>halt "body"</tt>, or a Rack triplet.
    def halt(*response)
      # One Array is a response (<tt>halt [404, "gone"]</tt>) when it starts with a status, else
      # a Rack body: <tt>halt %w[a b]</tt> sends "ab", as Sinatra does.
      response = response.first if response.length == 1 && response.first.is_a?(Array) && response.first.first.is_a?(Integer)
      status_code = response.first.is_a?(Integer) ? response.shift : nil
      status(status_code) if status_code
      headers(response.shift) if response.first.is_a?(Hash) && response.length > 1
      body = response.first
      # A Rack body (an Array of Strings) is its Strings, not a JSON Array.
      body = body.join if body.is_a?(Array) && body.all?(String)
      throw :halt, Halted.new(body)
    end

    # A body sent as the block produces it (Sinatra's +stream+): <tt>stream { |out| out << "a" }</tt>.
    # The stream is open while its block runs. <tt>stream(:keep_open)</tt> is taken as Sinatra
    # takes it on a threaded server such as Puma: the stream still ends when the block returns
    # (only an evented server keeps it open), so keep the block running (loop over a Queue).
    def stream(_keep_open = false, &producer)
      Stream.new(&producer)
    end

    # Server-Sent Events: <tt>sse { |out| out << { data: "hi", id: 1 } }</tt> (see Ferrule::EventStream).
    def sse(keep_alive: nil, &producer)
      EventStream.new(keep_alive: keep_alive, &producer)
    end

    MEDIA_TYPES = { json: "application/json", html: "text/html; charset=utf-8", text: "text/plain; charset=utf-8",
                    xml: "application/xml" }.freeze
    private_constant :MEDIA_TYPES

    # The body a +halt+ left (nil: an empty one).
    Halted = Struct.new(:body)
    private_constant :Halted

    NOT_GIVEN = Object.new.freeze
    private_constant :NOT_GIVEN

    private

    # The exception a refused request is raised as: ValidationError for a 422 with its
    # errors, else HTTPError with the problem's status, detail and headers.
    def __ferrule_refusal_error(refusal)
      status, problem, flat = refusal
      parsed = JSON.parse(problem)
      headers = flat.each_slice(2).to_h
      @__ferrule_refusal = if status == 422 && parsed["errors"].is_a?(Array)
                   ValidationError.new(parsed["errors"], parsed["detail"], headers: headers)
                 else
                   HTTPError.new(status, parsed["detail"], headers: headers)
                 end
      @__ferrule_refusal_answer = [status, problem, headers]
      @__ferrule_refusal
    end

    # What answers +error+: the +on_error+ hooks see it first (not a refusal of the core's:
    # that is no failure of the app's); then the nearest error block (its status preset), or
    # the default: the core's own answer to a refusal, an HTTPError's problem response, and
    # for any other error the core's bare 500 (see +__ferrule_unanswered+).
    def __ferrule_recovered(error, chain, refusal, error_handlers)
      @__ferrule_recovered = true
      unless error.equal?(@__ferrule_refusal)
        chain.on_error.each do |hook|
          __ferrule_run_with_error(hook, error)
        rescue StandardError => e
          warn "ferrule: an on_error hook raised #{e.class}: #{e.message}"
        end
      end
      is_http = error.is_a?(HTTPError)
      @request.sinatra_error = error # env["sinatra.error"], as Sinatra's error blocks read it
      @__ferrule_failure = error unless is_http || error.equal?(@__ferrule_refusal)
      handler = __ferrule_error_block(error, error_handlers)
      # What the error block answers goes with the error's status unless it says otherwise.
      @__ferrule_default_status = is_http ? error.status : 500
      @__ferrule_status_applies = true
      return catch(:halt) { __ferrule_run_with_error(handler, error) } if handler
      return __ferrule_problem_response(*@__ferrule_refusal_answer) if refusal && error.equal?(@__ferrule_refusal)
      return __ferrule_unanswered(error) unless is_http

      body = NativeApp.problem_body(error.status, error.detail&.to_s)
      __ferrule_problem_response(error.status, body, (error.headers || {}).transform_keys { |k| k.to_s.downcase })
    end

    # An exception no error block answers: the core's bare 500 (the status is preset), which
    # the after filters see and may change, as Sinatra's do; __ferrule_run_chain raises the exception
    # again after them (+__ferrule_carrying+), so the core logs it as any a block raises.
    def __ferrule_unanswered(error)
      @__ferrule_unanswered = error
      headers("content-type" => PROBLEM_JSON)
      NativeApp.problem_body(nil, nil)
    end

    # +error+ raised again with the answer the after filters left: the core logs it as it logs
    # any exception, and sends that answer in place of its own bare 500. A copy carries it, as
    # one exception object may be raised by several requests at once.
    def __ferrule_carrying(error, answer)
      copy = error.dup
      copy.instance_variable_set(:@__ferrule_answer, answer)
      copy
    end

    def __ferrule_problem_response(status, body, headers)
      @__ferrule_status = status
      Response.new(body, status: status, headers: headers.merge("content-type" => PROBLEM_JSON))
    end

    def __ferrule_header_hash = @__ferrule_headers ||= HeaderHash.new

    # The error block for +error+: one for its status (an HTTP error's), else the one for its
    # class nearest in its ancestry; HTTP errors stop at HTTPError, whose default is the
    # core's answer, so a block for StandardError never takes them.
    def __ferrule_error_block(error, handlers)
      if error.is_a?(HTTPError)
        by_status = __ferrule_status_block(error.status, handlers)
        return by_status if by_status
      end
      error.class.ancestors.each do |ancestor|
        found = handlers.reverse_each.find { |key, _| key.equal?(ancestor) }
        return found[1] if found
        return nil if ancestor.equal?(HTTPError)
      end
      # An error no block names by class answers 500, so a block for 500 takes it (Sinatra's
      # +error 500+ too).
      __ferrule_status_block(500, handlers)
    end

    # The error block declared for +code+ (<tt>error 404</tt>, <tt>error 400..499</tt>), if any.
    # The latest declared wins, as in Sinatra, where each declaration replaces the block of every
    # code it names (<tt>error 400..499</tt> then +not_found+: the latter answers a 404).
    def __ferrule_status_block(code, handlers)
      handlers.reverse_each.find { |key, _| (key.is_a?(Integer) && key == code) || (key.is_a?(Range) && key.cover?(code)) }&.[](1)
    end

    # Sinatra runs the error block for the status a request ends with, whether or not anything
    # raised: <tt>halt 404</tt> or <tt>status 403</tt> meets +not_found+ or <tt>error 403</tt>
    # (found by Sinatra's corpus: the route's own empty answer went out instead). The block
    # gets an HTTPError of that status; what it returns is the body (nil keeps the body there),
    # sent with that status unless it sets another.
    def __ferrule_answer_for_status(handlers)
      return if handlers.empty?

      code = __ferrule_ended_with
      handler = code >= 400 && __ferrule_status_block(code, handlers)
      return unless handler

      @__ferrule_status ||= code
      @__ferrule_status_applies = true
      answer = catch(:halt) { __ferrule_run_with_error(handler, HTTPError.new(code)) }
      return if answer.nil?

      # A Rack body replaced here is closed, as Rack asks of a body that is not sent.
      replaced = Context.rack_triplet?(@__ferrule_result) ? @__ferrule_result[2] : nil if @__ferrule_result.is_a?(Array)
      replaced.close if replaced.respond_to?(:close) && !answer.equal?(@__ferrule_result)
      @__ferrule_result = answer
    end

    # The status the request's answer has so far.
    def __ferrule_ended_with
      case @__ferrule_result
      when Response then @__ferrule_result.status
      when Integer then @__ferrule_result
      when Array then Context.rack_triplet?(@__ferrule_result) || Context.status_and_body?(@__ferrule_result) ? @__ferrule_result[0] : (@__ferrule_status || @__ferrule_default_status)
      else @__ferrule_status || @__ferrule_default_status
      end
    end

    def self.rack_triplet?(result)
      result.length == 3 && result[0].is_a?(Integer) && result[1].is_a?(Hash)
    end

    # Sinatra's <tt>[201, "created"]</tt>: a status and a String body (any other Array is JSON).
    def self.status_and_body?(result)
      result.length == 2 && result[0].is_a?(Integer) && result[0].between?(100, 599) && result[1].is_a?(String)
    end

    def __ferrule_finish(result)
      __ferrule_save_session if @__ferrule_session
      result = __ferrule_with_status_after(result) if @__ferrule_status_after
      # Sinatra's <tt>set :default_content_type, "text/html"</tt>: a String body without a type
      # of its own is sent as that (found by a probe: the setting was taken and did nothing).
      if result.is_a?(String) && self.class.default_content_type_set && (default = settings[:default_content_type]) && !__ferrule_header_hash.key?("content-type")
        content_type(default)
      end
      if result.is_a?(Halted)
        return Response.new(result.body.nil? ? "" : result.body, status: status, headers: @__ferrule_headers)
      end
      # As in Sinatra: nil is an empty body, an Integer the status (found by Sinatra's corpus:
      # both went out as JSON, `null` and `204`, with a 200).
      return Response.new("", status: status, headers: @__ferrule_headers) if result.nil?
      return Response.new("", status: result, headers: @__ferrule_headers) if result.is_a?(Integer)
      return Response.new(result[1], status: result[0], headers: @__ferrule_headers) if result.is_a?(Array) && Context.status_and_body?(result)
      return result if @__ferrule_status.nil? && (@__ferrule_headers.nil? || @__ferrule_headers.empty?) && !@__ferrule_status_applies

      case result
      # An explicit response is sent with its own status (Sinatra's too): +status+ set before
      # only fills in what it leaves out, its headers.
      when Response
        Response.new(result.body, status: result.status, headers: __ferrule_merged(result.headers), type: result.type)
      when Array
        # A plain Array is JSON, sent with the status set in the block, as a Hash is.
        return Response.new(result, status: status, headers: @__ferrule_headers) unless Context.rack_triplet?(result)

        [result[0], __ferrule_merged(result[1]), result[2]]
      else
        Response.new(result, status: status, headers: @__ferrule_headers)
      end
    end

    # +result+ with the status an after filter set, where it carries its own.
    def __ferrule_with_status_after(result)
      case result
      when Response then Response.new(result.body, status: @__ferrule_status_after, headers: result.headers, type: result.type)
      when Integer then @__ferrule_status_after
      when Array
        if Context.rack_triplet?(result) then [@__ferrule_status_after, result[1], result[2]]
        elsif Context.status_and_body?(result) then [@__ferrule_status_after, result[1]]
        else result
        end
      else result
      end
    end

    # The status +answer+ (what +__ferrule_finish+ made) is sent with.
    def self.status_of(answer)
      answer.is_a?(Array) ? answer[0].to_i : answer.status.to_i
    end

    def __ferrule_merged(given)
      return @__ferrule_headers if given.nil?

      (@__ferrule_headers || {}).merge(given.transform_keys { |k| k.to_s.downcase })
    end
  end
end
