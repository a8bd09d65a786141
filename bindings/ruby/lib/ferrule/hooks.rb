# frozen_string_literal: true

require "strscan"

module Ferrule
  # Raised by App#serve (and App#call) when an +on_start+ block raised: nothing is served.
  class StartupFailed < StandardError; end

  # A request the core refused because its values failed validation (422): +errors+ lists the
  # failures as the problem response does (+type+, +loc+, +msg+, +input+, +ctx+).
  class ValidationError < HTTPError
    attr_reader :errors

    def initialize(errors, detail = nil, headers: nil)
      super(422, detail, headers: headers)
      @errors = errors
    end
  end

  # The filters and hooks one route's requests meet, in the order the core resolved them (the
  # app's, then each group's), built once per route and server.
  class Chain
    attr_reader :on_request, :pre_handler, :on_send, :on_error

    def initialize(blocks, slots)
      @on_request, @pre_handler, @on_send, @on_error = slots.map { |list| list.map { |slot| blocks.fetch(slot) } }
    end
  end

  # A filter declared with a pattern (<tt>before("/admin/*")</tt>): it runs only for the paths
  # the pattern matches, read as Sinatra reads one: +*+ matches anything, +/+ included, so
  # <tt>/admin/*</tt> guards <tt>/admin/users/7</tt>; a +:name+ (or +{name}+) matches one
  # segment; a +?+ makes what is before it optional (<tt>/posts/?</tt>); a Regexp matches the
  # whole path. Found by Sinatra's corpus: read as File.fnmatch globs, +*+ stopped at a +/+ and
  # +:id+ was literal text, so an auth filter let <tt>/admin/users/7</tt> through and a filter
  # on <tt>/users/:id</tt> never ran.
  #
  # A parameter beside text is read as Mustermann reads it (PathPattern.source):
  # <tt>/f/:name.:ext</tt> reads <tt>a.tar.gz</tt> as +a.tar+ and +gz+, as the route of that
  # path does. So the pattern is matched by the core's expression engine (PathExpression),
  # which does not backtrack: in Ruby's, that reading is quadratic on a path that fails late
  # (2.0 s for one request's 20 KB of dots, and a filter runs for every request). A Regexp is
  # the app's own and stays Ruby's, as in Sinatra.
  #
  # A pattern is refused, by name, where it would never match what its author meant (a glob's
  # <tt>[...]</tt> or <tt>{a,b}</tt>, Mustermann's groups, a typed <tt>{id:int}</tt>, a leading
  # +?+, two wildcards side by side, which split the same text many ways). Its text is put in
  # the spelling the core matches paths in (<tt>/café</tt> is <tt>/caf%C3%A9</tt>), as a
  # route's is.
  class Filter
    # The filter's block, made a method once (Context.block_method).
    attr_reader :body

    def initialize(pattern, block)
      @pattern = PathPattern.new(pattern)
      @body = Context.block_method(block, 1)
    end

    # Whether the filter runs for +path+.
    def match?(path) = @pattern.match?(path)

    # What the filter's match of +path+ adds to Sinatra's +params+ while it runs, or nil when
    # it does not run for +path+ (PathPattern#captures).
    def captures(path) = @pattern.captures(path)
  end

  # A Sinatra pattern, as a filter's (Filter) or a route's that +pass+ tries (PassTargets):
  # matched against a whole path, and what it captures there.
  class PathPattern
    # +prefix+: a group's, before the pattern. +typed_as_plain+: a typed <tt>{id:int}</tt>
    # matches as <tt>{id}</tt> (a route's; a filter refuses one).
    def initialize(pattern, prefix: "", typed_as_plain: false)
      if pattern.is_a?(Regexp)
        @pattern = PathPattern.regexp(pattern, prefix)
        @captures = !@pattern.names.empty? || pattern.source.match?(/(?<!\\)\((?!\?)/)
      else
        pattern = pattern.to_s.gsub(/\{([A-Za-z_]\w*):[^}]*\}/, '{\1}') if typed_as_plain
        source, @names = PathPattern.source("#{prefix}#{pattern}")
        begin
          @pattern = PathExpression.new(source)
        rescue ArgumentError => e
          raise ArgumentError, "ferrule: filter pattern #{pattern}: #{e.message}", cause: nil
        end
        @captures = !@names.empty?
      end
    end

    # Whether the pattern takes +path+.
    def match?(path)
      @pattern.match?(path)
    end

    # What the pattern's match of +path+ adds to Sinatra's +params+ (+:name+ by name, each
    # <tt>*</tt> in "splat", a Regexp's unnamed groups as "captures"), or nil when it does not
    # match +path+.
    def captures(path)
      return (@pattern.match?(path) ? NO_CAPTURES : nil) unless @captures

      # Decoded, as a route's parameters and Sinatra's captures are (a filter saw
      # "caf%C3%A9" where its route saw "café": found by a probe).
      if @pattern.is_a?(PathExpression)
        values = @pattern.captures(path) or return nil
        found = {}
        @names.each_with_index do |name, at|
          value = values[at] && PathPattern.decoded(values[at])
          if name == "splat" then (found["splat"] ||= []) << value
          elsif !value.nil? then found[name] = value
          end
        end
        return found
      end
      # A Regexp's groups are "captures", as a Regexp route's are: its unnamed ones, or, as
      # Ruby captures no other beside them, its named ones (also params by name).
      match = @pattern.match(path) or return nil
      found = match.named_captures.compact.transform_values { |value| PathPattern.decoded(value) }
      found["captures"] = match.captures.map { |value| value && PathPattern.decoded(value) }
      found
    end
    NO_CAPTURES = {}.freeze
    private_constant :NO_CAPTURES

    # A matched piece of the path, percent-decoded (not `+`: a path is no form); bytes that do
    # not decode to UTF-8 stay as sent.
    def self.decoded(text)
      return text unless text.include?("%")

      decoded = Ferrule.percent_decoded(text)
      decoded.valid_encoding? ? decoded : text
    end

    # The anchored Regexp that the Regexp +pattern+ means (after +prefix+, a plain path).
    def self.regexp(pattern, prefix = "")
      # With the x flag a comment would run to the end: the group closes on a line of its own.
      close = pattern.options & Regexp::EXTENDED == 0 ? ")" : "\n)"
      Regexp.new("\\A#{Regexp.escape(prefix)}(?:#{pattern.source}#{close}\\z", pattern.options)
    end

    # The anchored expression, in the syntax of the core's engine (Rust's +regex+), that the
    # Sinatra pattern +pattern+ means, and the parameter of each of its groups in order
    # ("splat" for each <tt>*</tt>). Its groups are named (one <tt>*</tt>'s too), so a route
    # declared with a +?+ (App#route_pattern) has its parameters by name.
    def self.source(pattern)
      pattern = pattern.to_s
      refuse = ->(why) { raise ArgumentError, "ferrule: filter pattern #{pattern}: #{why}" }
      refuse.call("a pattern starts with /") unless pattern.start_with?("/")
      stars = pattern.count("*")
      scanner = StringScanner.new(pattern)
      source = +""
      names = []
      before = nil # what came just before: :splat, :name, or the text after a :name (a String)
      until scanner.eos?
        if scanner.scan(/\*\??/)
          refuse.call(SIDE_BY_SIDE) if before.is_a?(Symbol)
          # Several are each "splat" (Sinatra's Array of them), which one expression cannot
          # name twice: they are numbered then (ferrule_splat_1, ...), which a route's params
          # read back as "splat" in order (Params.of). As short as the rest lets it be.
          source << (stars == 1 ? "(?<splat>.*?)" : "(?<#{App::SPLAT_PARAM}_#{names.count('splat') + 1}>.*?)")
          names << "splat"
          before = :splat
        elsif scanner.scan(/(?::([A-Za-z_]\w*)|\{([A-Za-z_]\w*)\})(\?)?/)
          refuse.call(SIDE_BY_SIDE) if before.is_a?(Symbol)
          name = scanner[1] || scanner[2]
          # As short as the rest lets it be, and, after text that follows another parameter,
          # without that text's last character: Mustermann's reading, checked against Sinatra
          # 3.0.5 (/:id.?:format? reads 7.json as 7 and json, 7.tar.gz as 7.tar and gz;
          # /:a-x-:b reads 1-x-2-x-3 as 1-x-2 and 3; /v.:ver reads v.1.2 as 1.2).
          separator = before.is_a?(String) ? NativeApp.canonical_path(before[-1]) : ""
          separator = separator.size == 1 ? Regexp.escape(separator) : ""
          # An optional one that is absent is nil in +params+, as Mustermann gives it (an
          # empty match gave "": found by a probe against Sinatra).
          source << "(?<#{name}>[^/?##{separator}]+?)" << (scanner[3] ? "?" : "")
          names << name
          before = :name
        elsif (text = scanner.scan(%r{[^*:{}\[\]()|?]+|:}))
          optional = scanner.scan(/\?/)
          last = optional ? text[-1] : ""
          source << Regexp.escape(NativeApp.canonical_path(optional ? text[0...-1] : text))
          source << "(?:#{Regexp.escape(NativeApp.canonical_path(last))})?" if optional
          before = before == :name ? text : nil
        elsif scanner.check(/\?/)
          refuse.call("a ? makes the character before it optional, and follows none here")
        else
          refuse.call("#{scanner.peek(1)} is not part of Sinatra's patterns (*, :name, {name}, ?); write a Regexp")
        end
      end
      ["\\A#{source}\\z", names]
    end

    SIDE_BY_SIDE = "two wildcards side by side (* or :name) match the same text many ways; put text between them"
    private_constant :SIDE_BY_SIDE
  end

  # Routes and filters under a prefix (App#group); its filters run after the app's.
  class Group
    def initialize(app, id)
      @app = app
      @id = id
    end

    def route(method, path, **options, &handler)
      @app.route_in(@id, method, path, **options, &handler)
      self
    end

    App::METHODS.each do |m|
      define_method(m.downcase) { |path, **options, &handler| route(m, path, **options, &handler) }
    end

    def websocket(path, **options, &handler)
      @app.websocket_in(@id, path, **options, &handler)
      self
    end

    def before(pattern = nil, &block)
      @app.filter_in(@id, :on_request, pattern, block)
      self
    end

    def after(pattern = nil, &block)
      @app.filter_in(@id, :on_send, pattern, block)
      self
    end

    def hook(phase, &block)
      @app.hook_in(@id, phase, block)
      self
    end

    def group(prefix, &block)
      @app.group_in(@id, prefix, &block)
    end
  end
end
