# frozen_string_literal: true

module Ferrule
  # The +ferrule+ command. <tt>ferrule openapi app.rb</tt> (or +config.ru+) prints the OpenAPI
  # document of the app that file declares, without serving it (for CI to diff, or a client
  # generator to read). The file is loaded with FERRULE_PRINT_OPENAPI=1: an app that runs when
  # loaded prints its document from App#run / App#serve and exits there; otherwise the one
  # Ferrule::App the file made is printed here, or, when it made none, a new instance of the
  # one App subclass it declared.
  #
  # <tt>ferrule app.rb --reload [--reload-dir DIR]...</tt>: development: runs <tt>ruby app.rb</tt>
  # and runs it again when a .rb, .ru or .erb file changes (the core's supervisor, as Python's
  # and Node's --reload).
  module CLI
    USAGE = "usage: ferrule openapi <app.rb|config.ru> | ferrule <app.rb> --reload [--reload-dir DIR]..."

    # The apps made while FERRULE_PRINT_OPENAPI is set (App#initialize adds itself).
    def self.made
      @made ||= []
    end

    # The App subclasses declared while it is set (App.inherited adds each): a class-style app
    # (<tt>class Shop < Ferrule::App</tt>) runs only when it is the program
    # (<tt>Shop.run! if $PROGRAM_NAME == __FILE__</tt>), or is handed to Rack as a class
    # (<tt>run Shop</tt>), so loading its file makes no instance to print.
    def self.declared
      @declared ||= []
    end

    # Returns the exit status.
    def self.main(argv, out: $stdout, err: $stderr)
      return reload(argv, err) if argv.include?("--reload")

      command, file, *rest = argv
      return fail(err, USAGE) unless command == "openapi" && file && rest.empty?

      ENV["FERRULE_PRINT_OPENAPI"] = "1"
      begin
        load_app_file(File.expand_path(file))
      rescue ScriptError, StandardError => e
        return fail(err, "cannot load #{file}: #{e.message}")
      end
      if made.empty?
        # The class no other declared class inherits from, made here (it adds itself to +made+).
        leaves = declared.reject { |klass| declared.any? { |other| other < klass } }
        return fail(err, "#{file} declares #{leaves.size} Ferrule::App classes (#{leaves.map(&:name).join(', ')}); run the one to print (Shop.run!)") if leaves.size > 1

        begin
          leaves.each(&:new)
        rescue ScriptError, StandardError => e
          return fail(err, "cannot make #{leaves.first.name}: #{e.message}")
        end
      end
      apps = made
      return fail(err, "#{file} makes no Ferrule::App") if apps.empty?
      return fail(err, "#{file} makes #{apps.size} Ferrule::App objects; run the one to print (app.run)") if apps.size > 1

      out.write(apps.first.openapi_json, "\n")
      0
    end

    # A rackup file is Rack::Builder's language (+run+, +use+, +map+), which a plain +load+ does
    # not speak: Rack builds it, and +run+ only records the app, so nothing is served.
    def self.load_app_file(path)
      return load(path) unless path.end_with?(".ru")

      require "rack"
      Rack::Builder.parse_file(path)
    end
    private_class_method :load_app_file

    # The core's reload supervisor over <tt>ruby app.rb</tt>; returns its exit status.
    def self.reload(argv, err)
      dirs = []
      rest = []
      args = argv.dup
      while (arg = args.shift)
        next if arg == "--reload"

        arg == "--reload-dir" ? dirs << File.expand_path(args.shift || (return fail(err, USAGE))) : rest << arg
      end
      return fail(err, USAGE) unless rest.size == 1

      # The supervisor handles SIGINT and SIGTERM; Ruby would raise Interrupt once it returns.
      %w[INT TERM].each { |signal| trap(signal) {} }
      NativeApp.reload([RbConfig.ruby, File.expand_path(rest.first)], dirs.empty? ? [Dir.pwd] : dirs, %w[.rb .ru .erb], 200)
    end

    def self.fail(err, message)
      err.puts("ferrule: #{message}")
      1
    end
    private_class_method :fail
  end
end
