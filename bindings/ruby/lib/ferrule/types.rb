# frozen_string_literal: true

module Ferrule
  # What a handler block receives: everything already parsed, coerced and validated.
  #
  # +params+, +query+ and +headers+ (declared ones, lower-case names) are Hashes with Symbol
  # keys, +cookies+ every cookie sent, read by String or Symbol (Params); +body+ is the JSON body as parsed (String keys, as JSON.parse gives
  # them, schema defaults filled in), a Hash of form fields (Symbol keys, files as
  # UploadedFile), a binary String for bytes, a String for text, or nil; on a route that
  # declares none, an IO of the bytes as sent (Sinatra's +request.body+). It also answers
  # Rack::Request's reading methods (+env+, +user_agent+, +url+, …) for Sinatra's +request+.
  #
  # What the request carried as sent, declared or not: +raw_body+ (a binary String, on any
  # route within the body limit; empty when none was kept), +raw_query+, +query_pairs+ and
  # +cookie_pairs+ (Arrays of [name, value], in order), +raw_headers+, and +header(name)+.
  Request = Struct.new(:method, :path, :params, :query, :headers, :cookies, :body, :request_id) do
    # Set by the native side: a Ferrule::RawParts, converted only when asked.
    attr_writer :raw

    def raw_body = @raw ? @raw.body : "".b
    def raw_query = @raw ? @raw.query_string : ""
    def query_pairs = @raw ? @raw.query_pairs.each_slice(2).to_a : []
    def raw_headers = @raw ? @raw.header_pairs.each_slice(2).to_a : []
    def cookie_pairs = @raw ? @raw.cookie_pairs.each_slice(2).to_a : []
    # The caller's W3C +traceparent+, validated (nil when absent or invalid), to send on.
    def traceparent = @raw&.trace&.first
    # The W3C trace id (32 hex digits) of the caller's +traceparent+.
    def trace_id = @raw&.trace&.last
    # The address of the client that sent the request (Rack's +request.ip+): the peer, or the
    # client a trusted proxy's X-Forwarded-For names (the app's +trusted_proxies+); for a Rack
    # call, the server's +REMOTE_ADDR+ (127.0.0.1 when it gives none), or whom it forwarded for.
    def ip = @raw&.client&.first
    # The peer's port (0 for a Rack call: Rack does not say).
    def remote_port = @raw&.client&.last

    # Any header by name (case-insensitive), declared or not; repeated ones joined with ", ".
    def header(name)
      @raw&.header(name.to_s.downcase)
    end

    # The declared headers, typed, under Symbol keys; a name not declared reads the header as
    # sent (<tt>req.headers["user-agent"]</tt>), as code written for every header expects.
    def headers = with_fallback(:headers) { |name| header(name) }

    # Every cookie as sent (the first of a repeated name, as Rack's), read with a String or a
    # Symbol (<tt>request.cookies["session"]</tt>, <tt>req.cookies[:theme]</tt>); a declared one
    # has its typed value.
    def cookies
      @cookies ||= Params.new.tap do |jar|
        # Unescaped as Rack reads them, so a value set with +set_cookie+ (which Rack escapes:
        # "ada@example.com" is written "ada%40example.com") reads back as it was set (found by
        # a probe: it read back escaped).
        cookie_pairs.each { |name, value| jar[name] = Ferrule.unescape_cookie(value) unless jar.key?(name) }
        self[:cookies]&.each { |name, value| jar[name] = value }
      end
    end

    # As Sinatra's +request.body+ on a route that declares no body: an IO of the bytes as sent
    # (<tt>JSON.parse(request.body.read)</tt>). A declared body is its parsed value.
    def body
      parsed = self[:body]
      return parsed unless parsed.nil? && @raw && !@raw.declares_body?

      require "stringio"
      @input ||= StringIO.new(raw_body)
    end

    # Rack::Request's reading methods, for code written for Sinatra's +request+.
    # The Rack env the request came with (the app called through Rack: what middleware put
    # there, +rack.session+ say, is there), else one built from the request.
    def env
      @env ||= (Thread.current[:__ferrule_rack_env] || Ferrule.rack_env(self)).tap do |env|
        env["sinatra.error"] = @sinatra_error if @sinatra_error
      end
    end

    # The env, if anything made it (a WebSocket's handshake keeps it for its socket's request).
    def __ferrule_env_if_made = @env

    # A WebSocket's request takes the env its handshake's filters made.
    def __ferrule_adopt_env(env)
      @env = env
    end

    # The error an error block answers, for its <tt>env["sinatra.error"]</tt>: kept here, and
    # put in the env only once something reads it (most error paths never build one).
    def sinatra_error=(error)
      @sinatra_error = error
      @env["sinatra.error"] = error if @env
    end
    def user_agent = header("user-agent")
    def referer = header("referer")
    alias_method :referrer, :referer
    def content_type = header("content-type")
    def media_type = content_type&.split(";", 2)&.first&.strip&.downcase
    def content_length = header("content-length")
    # The Host, or a trusted proxy's X-Forwarded-Host (Rack's +host_with_port+ reads it too).
    def host_with_port = forwarded&.last || header("host")
    def host = host_with_port&.then { |host| host.start_with?("[") ? host[0..(host.index("]") || -1)] : host.sub(/:\d*\z/, "") }
    # The port the Host names, else the scheme's (443 for https: found by a probe, it was 80).
    def port = host_with_port.to_s[/:(\d+)\z/, 1]&.then { |digits| Integer(digits, 10) } || (scheme == "https" ? 443 : 80)
    # Rack's +hostname+ (the host without brackets), +server_name+, +accept_language+ (the
    # Accept-Language header), +content_charset+ (the charset the Content-Type names): missing,
    # they were NoMethodErrors (found by a probe).
    def hostname = host&.delete_prefix("[")&.delete_suffix("]")
    def server_name = host
    def accept_language = header("accept-language")
    def content_charset = content_type.to_s[/;\s*charset=\"?([^\";]+)/i, 1]
    # What a trusted proxy's X-Forwarded-Proto says (+https+ behind one that ended TLS), else
    # the scheme the Rack server says the request came by (+rack.url_scheme+), else "http". A
    # proxy is trusted as the app's +trusted_proxies+ says (by default loopback and private
    # addresses, Rack's trusted proxies; Rack also believes any peer's X-Forwarded-Proto).
    def scheme = @scheme ||= forwarded&.first || Thread.current[:__ferrule_rack_env]&.[]("rack.url_scheme") || "http"
    # [scheme, host] a trusted proxy said (each nil when unsaid), or nil.
    private def forwarded = @raw&.forwarded
    def request_method = self[:method]
    # Rack's +path+ (what Sinatra's +request.path+ is): the mount's and the routed path's
    # together, "/api/where" under <tt>map "/api"</tt>; the route matched +path_info+.
    def path = script_name.empty? ? self[:path] : "#{script_name}#{self[:path]}"
    def path_info = self[:path]
    # The mount the request came through (Rack's SCRIPT_NAME under <tt>map "/api"</tt>); "" when served by +run+.
    def script_name = @script_name ||= Thread.current[:__ferrule_rack_env]&.[]("SCRIPT_NAME").to_s
    def query_string = raw_query
    def fullpath = "#{path}#{"?#{raw_query}" unless raw_query.empty?}"
    def base_url = "#{scheme}://#{host_with_port}"
    def url = "#{base_url}#{fullpath}"
    def xhr? = header("x-requested-with") == "XMLHttpRequest"
    def secure? = scheme == "https"
    alias_method :ssl?, :secure?
    # The Accept header's media ranges, most wanted first (Sinatra's +request.accept+, as Strings).
    def accept = accept_entries.each_with_index.sort_by { |(_, q), index| [-q, index] }.map { |(range, _), _| range }
    def get_header(name) = env[name]
    def form_data? = %w[application/x-www-form-urlencoded multipart/form-data].include?(media_type) || (media_type.nil? && self[:method] == "POST")
    %w[GET POST PUT PATCH DELETE HEAD OPTIONS].each { |verb| define_method("#{verb.downcase}?") { self[:method] == verb } }

    # Rack's +GET+ and +POST+: the query's and a form body's parameters by name (String keys).
    def GET = Params.new.tap { |query| query_pairs.each { |name, value| Params.send(:nest, query, name, value) } }

    # Rack's +POST+: the form's fields, nested names read as Rack reads them (<tt>b[]=2</tt> is
    # <tt>{"b" => ["2"]}</tt>: found by a probe, it stayed <tt>"b[]"</tt>); a declared form's
    # fields as typed.
    def POST
      return {} unless form_data?

      fields = Params.send(:form_fields, self)
      return fields.to_h.transform_keys(&:to_s) if fields.is_a?(Hash)

      Params.new.tap { |post| fields.each { |name, value| Params.send(:nest, post, name, value) } }
    end

    # Sinatra's +accept?+: whether the Accept header takes +type+ (no header takes anything).
    def accept?(type) = !preferred_type(type).nil?

    # Sinatra's +preferred_type+: of +types+, the one the Accept header ranks highest (by its
    # q, then the more specific entry, then the order given); nil when it takes none of them.
    def preferred_type(*types)
      types = types.flatten.map(&:to_s)
      accepted = accept_entries
      return types.first if accepted.empty?

      best = nil
      types.each_with_index do |type, index|
        # The most specific range that matches decides the type's q.
        range, q = accepted.select { |r, _| File.fnmatch(r, type) }.min_by { |r, _| r.count("*") }
        next unless q&.positive?

        rank = [q, -range.count("*"), -index]
        best = [rank, type] if best.nil? || (rank <=> best[0]).positive?
      end
      best&.last
    end

    # The Accept header's media ranges and their q values (<tt>[["text/*", 0.5], …]</tt>).
    def accept_entries
      header("accept").to_s.split(",").filter_map do |part|
        range, *parameters = part.split(";").map(&:strip)
        next if range.nil? || range.empty?

        q = parameters.find { |p| p.start_with?("q=") }&.delete_prefix("q=")
        [range.downcase, q ? q.to_f : 1.0]
      end
    end

    private

    # The member's Hash, told once to read a missing name through +read+ (given a String).
    def with_fallback(member, &read)
      declared = (self[member] ||= {})
      declared.default_proc ||= proc { |_, name| read.call(name.to_s.downcase) }
      declared
    end
  end

  # +text+ with each <tt>%xx</tt> the byte it names (and, with +plus+, <tt>+</tt> a space, as
  # forms and cookies write one), tagged UTF-8: the one decoding of forms, cookies and paths.
  def self.percent_decoded(text, plus: false)
    bytes = text.b
    bytes = bytes.tr("+", " ") if plus
    bytes.gsub(/%(\h\h)/n) { Regexp.last_match(1).hex.chr }.force_encoding(Encoding::UTF_8)
  end

  # A cookie's value as Rack reads it (+percent_decoded+ with <tt>+</tt>); a value that does
  # not decode to UTF-8 stays as it was sent.
  def self.unescape_cookie(value)
    return value unless value.include?("%") || value.include?("+")

    decoded = percent_decoded(value, plus: true)
    decoded.valid_encoding? ? decoded : value
  end

  # A Rack env for Sinatra's <tt>request.env</tt>: the request line, every header as
  # +HTTP_*+ (+CONTENT_TYPE+ and +CONTENT_LENGTH+ without it), the body as +rack.input+.
  def self.rack_env(request)
    require "stringio"
    env = {
      "REQUEST_METHOD" => request.method, "SCRIPT_NAME" => request.script_name, "PATH_INFO" => request.path_info,
      "QUERY_STRING" => request.raw_query, "rack.url_scheme" => request.scheme, "HTTPS" => ("on" if request.ssl?),
      "rack.input" => StringIO.new(request.raw_body), "REMOTE_ADDR" => request.ip,
      "SERVER_NAME" => request.host, "SERVER_PORT" => request.host_with_port && request.port.to_s
    }.compact
    request.raw_headers.each do |name, value|
      # A name with "_" would share its key with the dashed name's (x_forwarded_for with
      # X-Forwarded-For): left out, as Puma and nginx leave it out.
      next if name.include?("_")

      key = name.upcase.tr("-", "_")
      key = "HTTP_#{key}" unless %w[CONTENT_TYPE CONTENT_LENGTH].include?(key)
      env[key] = env.key?(key) ? "#{env[key]}#{key == "HTTP_COOKIE" ? "; " : ", "}#{value}" : value
    end
    env
  end

  # Sinatra's +params+ (Context#params): a Hash whose keys are Strings, read and written with
  # a String or a Symbol alike.
  class Params < Hash
    # The numbered splats of a route with several * (App::SPLAT_PARAM, then _1, _2, ...).
    SPLAT_NUMBERED = "ferrule_splat_"
    # +capture_names+: see Context.new.
    def self.of(request, capture_names = nil)
      params = new
      bare = nil
      request.query_pairs.each do |name, value|
        # <tt>?flag</tt> (no "=") is nil, as Rack reads it, where <tt>?flag=</tt> is "": only an
        # empty value asks the query as sent which it was (found by a probe: "" for both).
        if value.empty?
          bare ||= bare_names(request.raw_query)
          value = nil if bare.include?(name)
        end
        nest(params, name, value)
      end
      request.query&.each { |name, value| params[name] = value }
      fields = form_fields(request)
      if fields.is_a?(Hash)
        fields.each { |name, value| params[name] = value }
      else
        fields.each { |name, value| nest(params, name, value) }
      end
      captures = splat = nil
      request.params&.each do |name, value|
        case key_of(name)
        # Sinatra's +splat+ is a list, from a trailing * or one inside a pattern with a ?, or
        # of each * in order where there are several (PathPattern.source numbers them).
        when "splat" then (splat ||= []) << value
        # A Regexp route's unnamed group, by its number: Sinatra's +captures+, in order (nil
        # for one that took no part).
        when "captures" then (captures ||= [])[name.to_s.to_i - 1] = value
        else params[name] = value
        end
      end
      params["splat"] = splat if splat
      # Sinatra's +captures+ are the Regexp's groups: with named groups, those (Ruby captures no
      # unnamed one beside them), in order, nil for one that took no part.
      captures ||= capture_names&.map { |name| request.params&.[](name.to_sym) }
      params["captures"] = captures if captures
      params
    end

    # The +params+ key that a route's path parameter, as the core names it, fills: "splat" for
    # a * (one, or each of several, numbered), "captures" for a Regexp's unnamed group, else
    # its own name. One reading for Params.of and for what +pass+ takes back out
    # (Context#__ferrule_route_keys): two readings were how a numbered splat outlived a pass.
    # A Symbol's own frozen name, not a new String, and the group-number Regexp only for a
    # name that starts with a digit.
    def self.key_of(name)
      name = name.is_a?(Symbol) ? name.name : name.to_s
      return "splat" if name == App::SPLAT_PARAM || name == "splat" || name.start_with?(SPLAT_NUMBERED)
      return "captures" if name.getbyte(0)&.between?(49, 57) && name.match?(/\A[1-9][0-9]*\z/)

      name
    end

    # The names a query sends without "=" (<tt>a&b=1</tt>: +a+), decoded as Rack decodes them.
    def self.bare_names(raw_query)
      raw_query.split("&").reject { |pair| pair.include?("=") || pair.empty? }.map { |name| Ferrule.percent_decoded(name, plus: true) }
    end

    # Rack's nested names, as Sinatra's +params+ read a query or a form: <tt>tags[]=a&tags[]=b</tt>
    # is an Array under +tags+, <tt>user[name]=z</tt> a Hash under +user+ (and deeper), and
    # <tt>items[][name]=pen&items[][qty]=1&items[][name]=ink</tt> an Array of Hashes: a field
    # joins the list's last Hash unless that has it already, as Rack's rule goes. A name Rack
    # would read otherwise (<tt>a[][][b]</tt>, a shape that clashes with an earlier pair) stays as
    # it was sent, so nothing is dropped.
    def self.nest(params, name, value)
      head, rest = name.split("[", 2)
      keys = rest&.end_with?("]") && !head.empty? ? rest.delete_suffix("]").split("][", -1).then { |k| k.empty? ? [""] : k } : nil
      return params[name] = value if keys.nil?

      target = params
      key = head
      index = 0
      while index < keys.size
        sub = keys[index]
        if sub.empty?
          fields = keys[(index + 1)..]
          return params[name] = value if fields.any?(&:empty?)

          list = (target[key] ||= [])
          return params[name] = value unless list.is_a?(Array)
          return list << value if fields.empty?

          last = list.last
          unless last.is_a?(Params) && !path?(last, fields)
            last = Params.new
            list << last
          end
          target = last
          key = fields.first
          index += 2
          next
        end
        child = (target[key] ||= Params.new)
        return params[name] = value unless child.is_a?(Params)

        target = child
        key = sub
        index += 1
      end
      target[key] = value
    end

    # Whether +hash+ holds a value at +keys+ (<tt>["a", "b"]</tt>: <tt>hash["a"]["b"]</tt>).
    def self.path?(hash, keys)
      keys.each_with_index.all? do |key, i|
        next false unless hash.is_a?(Hash) && hash.key?(key)

        hash = hash[key] if i < keys.size - 1
        true
      end
    end
    private_class_method :path?

    private_class_method :nest

    # A form body's fields: as the route declared them, else parsed from an url-encoded body,
    # or a multipart one by Rack's parser (its files as Rack's upload Hashes, as Sinatra's).
    def self.form_fields(request)
      body = request.body
      content_type = request.header("content-type").to_s
      if body.is_a?(Hash) && body.each_key.all?(Symbol)
        return body unless content_type.start_with?("application/x-www-form-urlencoded")

        # The declared fields typed, after the form's others as sent (nested names too), as
        # Sinatra's +params+ hold every field: the others were dropped (found by a probe).
        others = decode_form(request.raw_body).reject { |name, _| body.key?(name.to_sym) }
        return others + body.map { |name, value| [name.to_s, value] }
      end

      return multipart_fields(request, content_type) if content_type.start_with?("multipart/form-data")
      return [] unless content_type.start_with?("application/x-www-form-urlencoded")

      decode_form(request.raw_body)
    end
    private_class_method :form_fields

    # An url-encoded body's pairs, read as Rack reads them: `+` a space, `%xx` a byte, any other
    # byte as it came (found by a review of a test: `name=été` sent raw, as curl sends it, made
    # URI.decode_www_form raise, and every field was dropped), a name without `=` nil.
    def self.decode_form(body)
      body.b.split("&").filter_map do |pair|
        next if pair.empty?

        name, value = pair.split("=", 2)
        [decode_component(name), value && decode_component(value)]
      end
    end

    def self.decode_component(text) = Ferrule.percent_decoded(text, plus: true)
    private_class_method :decode_form, :decode_component

    # A body that is not multipart after all is a 400, as Rack answers it (not an empty +params+).
    def self.multipart_fields(request, content_type)
      begin
        require "rack"
      rescue LoadError
        return []
      end
      require "stringio"
      raw = request.raw_body
      env = { "CONTENT_TYPE" => content_type, "CONTENT_LENGTH" => raw.bytesize.to_s, "rack.input" => StringIO.new(raw) }
      # A file is Rack's Hash of Symbols (:tempfile, :filename); read with Strings too, as
      # Sinatra's indifferent params read it (found by a probe: params["file"]["tempfile"] was nil).
      (Rack::Multipart.parse_multipart(env) || {}).map { |name, value| [name, indifferent(value)] }
    rescue StandardError => e # Rack's parser raises EOFError, its own errors, Errno::EMFILE past its part limit
      raise HTTPError.new(400, "The multipart body cannot be read: #{e.message}")
    end
    private_class_method :multipart_fields

    def self.indifferent(value)
      case value
      when Hash then Params[value.map { |key, each| [key.to_s, indifferent(each)] }]
      when Array then value.map { |each| indifferent(each) }
      else value
      end
    end

    def [](key) = super(key.to_s)
    def []=(key, value)
      super(key.to_s, value)
    end
    alias store []=
    def fetch(key, *default, &block) = super(key.to_s, *default, &block)
    def key?(key) = super(key.to_s)
    alias has_key? key?
    alias include? key?
    alias member? key?
    def delete(key, &block) = super(key.to_s, &block)
    def dig(key, *rest) = rest.empty? ? self[key] : self[key]&.dig(*rest)
    def values_at(*keys) = super(*keys.map(&:to_s))
    def fetch_values(*keys, &block) = super(*keys.map(&:to_s), &block)
    # As Sinatra's IndifferentHash: <tt>params.slice(:title, :body)</tt> keeps those, and
    # <tt>params.except(:secret)</tt> drops it, whichever kind of key names them.
    def slice(*keys) = Params[super(*keys.map(&:to_s))]
    def except(*keys) = Params[super(*keys.map(&:to_s))]
    # What Hash's own methods return is a plain Hash, read by String keys only: these keep the
    # indifference, as IndifferentHash's do (found by a probe: <tt>params.select { … }[:title]</tt>
    # and <tt>params.merge(page: 2)[:page]</tt> were nil).
    def select(&block) = block ? Params[super] : super
    alias filter select
    def reject(&block) = block ? Params[super] : super
    def transform_values(&block) = block ? Params[super] : super
    def merge(*others, &block) = dup.update(*others, &block)
    def update(*others, &block)
      others.each { |other| super(Params.indifferent(other.to_h), &block) }
      self
    end
    alias merge! update
    def assoc(key) = super(key.to_s)
  end

  # An uploaded file of a multipart body: +data+ is a binary String, bytes kept as sent.
  # +headers+: every header of the file's part (a Hash, names in lower case).
  # It also reads as Rack's upload Hash, as Sinatra code reads one: <tt>file[:tempfile].read</tt>,
  # <tt>file[:type]</tt>, <tt>file[:name]</tt>, <tt>file[:head]</tt> (and <tt>file[:filename]</tt>).
  UploadedFile = Struct.new(:field, :filename, :content_type, :data, :size, :headers) do
    def [](key)
      case key.to_s
      when "tempfile" then tempfile
      when "type" then content_type
      when "name" then field
      when "head" then headers.to_h.map { |name, value| "#{name}: #{value}\r\n" }.join
      else super
      end
    end

    # The bytes as Rack's Tempfile: a file on disk, read from the start, so code that copies
    # its +path+ works (<tt>FileUtils.cp(file[:tempfile].path, dest)</tt> was a NoMethodError
    # on the StringIO it was: found by a probe). Written when first asked for; removed when it
    # is collected, as Rack's are.
    def tempfile
      @tempfile ||= begin
        require "tempfile"
        file = Tempfile.new(["ferrule-upload", File.extname(filename.to_s)], binmode: true)
        file.write(data)
        file.rewind
        file
      end
    end
  end

  # An explicit response: <tt>Ferrule::Response.new({ created: true }, status: 201, headers: { "x-id" => "7" })</tt>.
  # +body+: a String (text/plain), a binary String (bytes) or anything JSON-serialisable.
  class Response
    attr_reader :body, :status, :headers, :type

    def initialize(body = nil, status: 200, headers: nil, type: nil)
      @body = body
      @status = status
      @headers = headers
      @type = type
    end
  end

  # Raise to answer with an RFC 9457 problem response: <tt>raise Ferrule::HTTPError.new(404, "No such user")</tt>.
  # Raised while a Rack server iterates the body of a response that broke off before its end
  # (App#call): the server aborts the response, as the core does on a socket.
  class BodyCutOff < StandardError; end

  class HTTPError < StandardError
    attr_reader :status, :detail, :headers

    def initialize(status, detail = nil, headers: nil)
      super(detail || "HTTP #{status}")
      @status = status
      @detail = detail
      @headers = headers
    end
  end

  # What an app's +set+ set, read as Sinatra's +settings+: <tt>settings.db</tt>,
  # <tt>settings.db?</tt>, <tt>settings[:db]</tt>. A name never set, and none of DEFAULTS, is a
  # NoMethodError naming it.
  class Settings
    # <tt>set(:name) { ... }</tt>: the block gives the value each time it is read, as in
    # Sinatra (it was dropped, and the setting read +true+: found by a probe).
    Computed = Struct.new(:block)

    # Sinatra's settings that an app reads without having set them, with what Ferrule does
    # (found by a probe: +settings.show_exceptions+ and the like were NoMethodErrors). Each is
    # Ferrule's behaviour, not Sinatra's default where the two differ: no exception page
    # (+show_exceptions+), exceptions raised through Rack only when set (+raise_errors+), no
    # Rack::Protection (+protection+), no X-Cascade, Strings typed text/plain unless
    # <tt>set :default_content_type</tt>.
    DEFAULTS = {
      absolute_redirects: true, prefixed_redirects: false, show_exceptions: false, raise_errors: false,
      dump_errors: true, method_override: false, x_cascade: false, protection: false,
      default_content_type: "text/plain", default_encoding: "utf-8"
    }.freeze

    def initialize = @values = {}

    def [](name)
      key = name.to_sym
      @values.key?(key) ? value_of(@values[key]) : DEFAULTS[key]
    end

    def []=(name, value)
      @values[name.to_sym] = value
    end

    def key?(name) = @values.key?(name.to_sym)

    # The block of <tt>set(:auth) { |*roles| condition { ... } }</tt>, which makes a route
    # option of its name (Conditions.take); nil for any other setting.
    def condition_builder(name)
      value = @values[name.to_sym]
      value.block if value.is_a?(Computed) && value.block.arity != 0
    end

    def to_h = @values.transform_values { |value| value_of(value) }

    # Sinatra's +environment+: APP_ENV, else RACK_ENV, else development (unless set), and
    # +development?+, +production?+, +test?+ (a NoMethodError, a 500: found by a probe).
    def environment = @values.key?(:environment) ? self[:environment] : (ENV["APP_ENV"] || ENV["RACK_ENV"] || "development").to_sym
    def development? = environment.to_s == "development"
    def production? = environment.to_s == "production"
    def test? = environment.to_s == "test"

    def method_missing(name, *args)
      key = name.to_s.delete_suffix("?").to_sym
      return super unless args.empty? && (@values.key?(key) || DEFAULTS.key?(key))

      name.end_with?("?") ? !!self[key] : self[key]
    end

    private def value_of(value) = value.is_a?(Computed) ? value.block.call : value

    def respond_to_missing?(name, include_private = false)
      key = name.to_s.delete_suffix("?").to_sym
      @values.key?(key) || DEFAULTS.key?(key) || super
    end
  end
end
