# frozen_string_literal: true

module Ferrule
  # Sinatra's modular style: an app declared in the body of a subclass,
  #
  #   class Shop < Ferrule::App
  #     set :timeout_ms, 5_000          # a server setting: goes to App.new
  #     set :db, DB                     # the app's own: settings.db
  #     helpers { def current_user = session[:user] }
  #     get("/items/:id") { |req| { id: req.params[:id] } }
  #   end
  #   Shop.run!(port: 8000)             # or, in config.ru: run Shop
  #
  # The class body records each declaration; every instance (Shop.new) replays its ancestors'
  # and then its own, in order, so a subclass of Shop serves Shop's routes and adds its own.
  # A server setting (one of App::SETTINGS, or +:logger+) given to +set+ in the body becomes
  # an argument of App.new, where the core reads it once. As a Rack app the class answers
  # through one instance made on its first request (Sinatra's prototype).
  #
  # The blocks run in a request context, not in an instance of the class (as they do in
  # Sinatra): methods for them go in +helpers+. A method defined in the class body and called
  # from a block is a NoMethodError that says so.
  module Modular
    include Configurable

    # What the class body may declare: replayed onto each instance, with the same arguments.
    DECLARED = (App::METHODS.map { |m| m.downcase.to_sym } +
                %i[route websocket before after hook error not_found helpers sessions group static on_start on_stop]).freeze

    DECLARED.each do |name|
      define_method(name) do |*args, **options, &block|
        check_in_body(name, args, options, block)
        declare_in_body(name, args, options, block)
      end
    end

    # Sinatra's +set+ in the class body: a server setting (+:timeout_ms+, +:cors+, +:logger+, …)
    # is given to App.new; any other name is the app's own, read back as +settings.name+.
    def set(name, value = true, &block)
      return name.each { |key, each| set(key, each) } && self if name.is_a?(Hash)

      value = Settings::Computed.new(block) if block

      key = name.to_sym
      App.refuse_not_setting(key, value)
      if key == :host_authorization
        subclass_only!(:set)
        refuse_after_start(:set)
        own_server_settings.merge!(App.host_authorization(value))
      elsif App::SETTINGS.include?(key) || key == :logger
        subclass_only!(:set)
        refuse_after_start(:set)
        own_server_settings[key] = value
      else
        declare_in_body(:set, [key, value], {}, nil)
      end
      # Read back as settings.name either way (`set :title` names the page and the document).
      own_settings[key] = value
      self
    end

    # Sinatra's +use+ in the class body. Rack middleware cannot wrap the core when it serves
    # (+run!+): what the core does itself is taken as its setting instead,
    # <tt>use Rack::Deflater</tt> as gzip compression (+compression+) and
    # <tt>use Rack::CommonLogger</tt> as a record per request (+access_log+). Any other
    # middleware is refused in one line: in config.ru (<tt>use X; run Shop</tt>) Rack serves the
    # app and wraps it as usual.
    def use(middleware, *args, **options, &block)
      name = middleware.respond_to?(:name) ? middleware.name : middleware.inspect
      case name
      when "Rack::Deflater"
        refuse_middleware_options(name, args, options, block, "the core compresses every type but images and event streams, from 500 bytes")
        set(:compression, { gzip: true, br: false, zstd: false })
      when "Rack::CommonLogger"
        refuse_middleware_options(name, args, options, block, "records go to the app's logger: set :logger")
        set(:access_log, true)
      else
        raise ArgumentError, "ferrule: use #{name}: a Rack middleware cannot wrap Ferrule's core when it serves the app " \
                             "(Rack::Deflater and Rack::CommonLogger are taken as its settings); wrap the app in " \
                             "config.ru (use #{name}; run #{self.name || 'App'}), or write it as a before/after filter"
      end
    end

    # The app's own settings from the class bodies (<tt>Shop.settings.db</tt>).
    def settings
      values = Settings.new
      modular_ancestors.each { |klass| klass.own_settings.each { |key, value| values[key] = value } }
      values
    end

    # Sinatra's readers on the class: after <tt>set :items, [...]</tt> in the body, +Shop.items+
    # and +Shop.items?+ read it, as does +Shop.environment+ (and +development?+, +production?+,
    # +test?+). Sinatra's +set+ defines them on the class; they were NoMethodErrors here. The
    # class's own methods come first: a setting never hides one.
    def method_missing(name, *args, &block)
      values = settings
      return super unless args.empty? && block.nil? && setting_reader?(values, name)

      values.public_send(name)
    end

    def respond_to_missing?(name, include_private = false)
      setting_reader?(settings, name) || super
    end

    ENVIRONMENT_READERS = %i[environment development? production? test?].freeze
    private_constant :ENVIRONMENT_READERS

    private def setting_reader?(values, name)
      key = name.to_s.delete_suffix("?")
      ENVIRONMENT_READERS.include?(name) || values.key?(key) || Settings::DEFAULTS.key?(key.to_sym)
    end

    # The server settings the class bodies gave (+App.new+'s arguments before its own).
    def server_settings
      modular_ancestors.map(&:own_server_settings).reduce({}, :merge)
    end

    # Sinatra's <tt>run!</tt>: a new instance, served (App#run's options; Sinatra's +bind:+ is
    # +host:+).
    def run!(bind: nil, **options, &on_ready)
      options[:host] ||= bind if bind
      new.run(**options, &on_ready)
    end

    # Rack's interface, for <tt>run Shop</tt> in config.ru: the class's one instance answers.
    def call(env)
      prototype.call(env)
    end

    # The instance that answers the class's Rack calls, made on the first.
    def prototype
      subclass_only!(:call)
      @prototype_lock.synchronize { @prototype ||= new }
    end

    # :nodoc: replays the class bodies onto +app+, the base class's first.
    # A subclass's route for a method and path its parent also declares takes its place, as in
    # Sinatra, where the subclass's routes are tried first (found by a probe: the app failed
    # with "GET / is declared twice" at its first request).
    def declare_onto(app)
      classes = modular_ancestors
      classes.each_with_index do |klass, at|
        overridden = classes.drop(at + 1).flat_map { |derived| derived.own_declarations.filter_map { |declared| Modular.route_key(*declared) } }
        klass.own_declarations.each do |name, args, options, block|
          next if overridden.include?(Modular.route_key(name, args, options, block))

          app.public_send(name, *args, **options, &block)
        end
      end
      app.send(:refuse_body_methods, modular_ancestors.flat_map(&:body_methods).uniq)
    end

    ROUTE_DECLARATIONS = App::METHODS.map { |m| m.downcase.to_sym }.freeze

    # :nodoc: a route declaration's method and path (nil for any other declaration).
    def self.route_key(name, args, _options = nil, _block = nil)
      [name, args.first.to_s] if ROUTE_DECLARATIONS.include?(name) && args.first
    end

    # :nodoc:
    def own_declarations = @own_declarations ||= []

    # :nodoc:
    def own_settings = @own_settings ||= {}

    # :nodoc:
    def own_server_settings = @own_server_settings ||= {}

    # :nodoc: the methods the class body defined (App's own overridden are not counted).
    def body_methods
      (instance_methods(false) + private_instance_methods(false)).reject { |name| App.method_defined?(name) || App.private_method_defined?(name) }
    end

    private

    def inherited(subclass)
      super
      subclass.instance_variable_set(:@prototype_lock, Mutex.new)
      CLI.declared << subclass if ENV["FERRULE_PRINT_OPENAPI"] == "1"
    end

    # What can be told wrong as the body is read, so a mistake names the line that made it and
    # not the first request: an unknown route option, a route or filter without a block.
    def check_in_body(name, args, options, block)
      route = App::METHODS.include?(name.to_s.upcase) || name == :route
      return unless route || name == :websocket

      method, path = name == :route ? args.first(2) : [name.to_s.upcase, args.first]
      where = name == :websocket ? "websocket #{path}" : "#{Array(method).join(',')} #{path}"
      raise ArgumentError, "ferrule: #{where} needs a block" unless block
      if name == :websocket
        App.refuse_unknown_options("websocket option", path, options.keys, App::SOCKET_OPTIONS + %i[subprotocols max_message_bytes])
      else
        # An option a setting's block makes a condition of (Conditions.take) is known too.
        # A parent class's too (found on review: a subclass's route refused its parent's).
        builders = options.keys.select { |key| settings.condition_builder(key) }
        App.refuse_unknown_options("route option", where, options.keys - builders, App::ROUTE_OPTIONS)
      end
    end

    def declare_in_body(name, args, options, block)
      subclass_only!(name)
      refuse_after_start(name)
      own_declarations << [name, args, options, block]
      self
    end

    def refuse_middleware_options(name, args, options, block, why)
      given = args.map(&:inspect) + options.keys.map { |key| "#{key}:" } + (block ? ["a block"] : [])
      return if given.empty?

      raise ArgumentError, "ferrule: use #{name}, #{given.join(', ')}: not offered (#{why})"
    end

    # Declared on App itself, it would reach no app: App's instances are declared one by one.
    def subclass_only!(name)
      return unless equal?(App)

      raise NoMethodError, "ferrule: Ferrule::App.#{name}: declare on an app (app = Ferrule::App.new; app.#{name} ...) or in the body of a subclass (class Shop < Ferrule::App)"
    end

    # A route declared after the class began answering Rack calls would reach no one.
    def refuse_after_start(name)
      return unless @prototype

      raise ArgumentError, "ferrule: #{self}.#{name} after #{self} began answering requests; declare everything in the class body"
    end

    # The subclasses of App from the first below it down to this one.
    def modular_ancestors
      ancestors.take_while { |klass| klass != App }.grep(Class).reverse
    end
  end

  class App
    extend Modular
  end
end
