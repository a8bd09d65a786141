# frozen_string_literal: true

module Ferrule
  # Sinatra's +pass+: a route gives the request up, and the routes declared after it are tried
  # in order, as Sinatra tries them: the first whose method and pattern take the path runs,
  # with its own parameters in +params+, in the same context (the status and headers set so
  # far stay; a Content-Type the passing route set goes, as Sinatra deletes it).
  #
  # Why in Ruby: the core routes a request to one route, chosen by its router, and has no
  # notion of "the next one". Sinatra's rule is declaration order, which only the app knows,
  # and its patterns are read here as the filters read them (PathPattern, in the core's
  # expression engine), so a pass costs nothing to the requests that do not pass, and one
  # match per later route of that method to a request that does.
  #
  # What it cannot do: hand a request to a route whose parameters or body the core would have
  # judged (+query:+, +params:+, a typed <tt>{id:int}</tt>, +body:+, ...): those were never
  # judged for this request; nor to or from a route with a +response:+ schema, by which the
  # core writes the answer of the route it routed to (a target's fields it drops would be
  # sent). Reaching one is the app's error, a 500 that says so, not a route run on unjudged
  # values.
  class PassTargets
    # One declared route: its methods, its group's prefix and pattern as written, its block
    # (Context.block_method), default status and Regexp group names, what of it the core judges
    # (App#judged_by_core), whether it has a +response:+ schema, its conditions (Conditions;
    # nil for none), and its place among the app's routes, in declaration order.
    Target = Struct.new(:verbs, :prefix, :path, :block, :status, :capture_names, :declares, :response_schema, :conditions, :position,
                        keyword_init: true) do
      # What the route's pattern takes from +request_path+ (PathPattern#captures), or nil.
      # Compiled when a pass first asks, so an app that never passes compiles nothing.
      def captures(request_path)
        @pattern ||= begin
          PathPattern.new(path, prefix: prefix, typed_as_plain: true)
        rescue ArgumentError => e
          # A route the core took whose path Sinatra's patterns do not read (a "(" in it):
          # whether it takes the path cannot be told, so the pass is the app's error.
          raise PassError, "pass cannot tell whether #{label} takes the path: #{e.message.delete_prefix('ferrule: ')}"
        end
        @pattern.captures(request_path)
      end

      def label = "#{verbs.first} #{prefix}#{path.is_a?(Regexp) ? path.inspect : path}"
    end

    def initialize
      @targets = []
    end

    # Notes a route as declared (in declaration order); returns its Target.
    def add(**route)
      target = Target.new(**route, position: @targets.length)
      @targets << target
      target
    end

    # The first route declared after +from+ that takes +method+ (a GET's takes HEAD) and
    # +path+, with its captures: <tt>[target, captures]</tt>, or nil.
    def after(from, method, path)
      (from.position + 1...@targets.length).each do |at|
        target = @targets[at]
        next unless target.verbs.include?(method) || (method == "HEAD" && target.verbs.include?("GET"))

        captures = target.captures(path) or next
        if target.declares
          raise PassError, "pass reached #{target.label}, whose #{target.declares} the core judges only " \
                           "for the requests it routes there, so pass cannot hand it this one"
        end
        # The core writes the answer by the schema of the route it routed to: another route's
        # answer would be filtered by it.
        if from.response_schema
          raise PassError, "pass from #{from.label}, whose answers the core writes by its response: schema, " \
                           "reached #{target.label}, whose answer that schema is not for"
        end
        return [target, captures]
      end
      nil
    end
  end

  # A +pass+ that reached a route it cannot hand the request to (PassTargets).
  class PassError < StandardError; end

  # What +pass+ raises, with its block (nil without one), for the route runner
  # (Context#__ferrule_run_route). An Exception, not a StandardError, so that a block's own
  # +rescue+ does not take it, as none takes Sinatra's +throw+; made without a backtrace, which
  # no one reads.
  class Passed < Exception # rubocop:disable Lint/InheritException
    attr_reader :block

    def initialize(block)
      super("pass")
      @block = block
      set_backtrace([])
    end
  end
end
