# frozen_string_literal: true

module Ferrule
  # Sinatra's route conditions, <tt>get "/", provides: :json</tt>, +host_name:+ and
  # +user_agent:+ (or +agent:+), and an app's own (Conditions.take): a route whose conditions
  # do not hold for a request is skipped, as though it had passed (Context#__ferrule_run_route),
  # and the next route declared that takes the path answers (PassTargets); with none, a 404.
  # Each is checked in the request's context, as Sinatra checks it in its app's: +provides+
  # sets the Content-Type it matched and +user_agent+ puts its pattern's groups in
  # <tt>params[:agent]</tt>.
  module Conditions
    OPTIONS = %i[provides host_name user_agent agent].freeze

    # The conditions +options+ names, taken out of it (nil when there are none): Sinatra's, and
    # an app's own, made by a setting's block (<tt>set(:auth) { |*roles| condition { ... } }</tt>
    # makes <tt>auth: :admin</tt> one), called with the option's value as Sinatra calls it.
    def self.take(options, settings)
      made = OPTIONS.select { |name| options.key?(name) }.map { |name| send(name, options.delete(name)) }
      options.keys.each do |name|
        next if App::ROUTE_OPTIONS.include?(name)

        block = settings.condition_builder(name) or next
        builder = Builder.new(settings)
        builder.instance_exec(*Array(options.delete(name)), &block)
        made.concat(builder.made)
      end
      made.empty? ? nil : made.freeze
    end

    # What a setting's block runs in to make conditions: its +condition+ blocks are kept.
    class Builder
      attr_reader :made, :settings

      def initialize(settings)
        @settings = settings
        @made = []
      end

      def condition(&block)
        @made << block
      end
    end

    def self.provides(types)
      types = Array(types).map { |type| type.is_a?(Symbol) ? Context.media_type(type) : type.to_s }
      lambda do
        given = @__ferrule_headers&.[]("content-type")
        next types.include?(given) || types.include?(given[/\A[^;]+/]) if given

        preferred = request.preferred_type(types) or next false
        content_type(preferred)
        true
      end
    end

    def self.host_name(pattern)
      -> { pattern === request.host } # rubocop:disable Style/CaseEquality -- a Regexp or a String, as Sinatra matches it
    end

    def self.user_agent(pattern)
      lambda do
        match = pattern.match(request.user_agent.to_s) or next false
        params[:agent] = match.captures
        true
      end
    end

    class << self
      alias agent user_agent
    end
  end
end
