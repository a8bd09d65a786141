# frozen_string_literal: true

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
  # the pattern matches (File.fnmatch's globs, +*+ within a segment, <tt>**</tt> across them).
  class Filter
    def initialize(pattern, block)
      @pattern = pattern
      @block = block
    end

    def to_proc
      pattern = @pattern
      block = @block
      proc do |*args|
        request = args.find { |arg| arg.is_a?(Request) } || self.request
        instance_exec(*args, &block) if File.fnmatch?(pattern, request.path, File::FNM_PATHNAME | File::FNM_EXTGLOB)
      end
    end
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
