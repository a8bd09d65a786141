# frozen_string_literal: true

module Ferrule
  # Sinatra's route conditions, <tt>get "/", provides: :json</tt>, +host_name:+ and
  # +user_agent:+ (or +agent:+): a route whose conditions do not hold for a request is skipped,
  # as though it had passed (Context#__ferrule_run_route), and the next route declared that
  # takes the path answers (PassTargets); with none, a 404. Each is checked in the request's
  # context, as Sinatra checks it in its app's: +provides+ sets the Content-Type it matched and
  # +user_agent+ puts its pattern's groups in <tt>params[:agent]</tt>.
  module Conditions
    OPTIONS = %i[provides host_name user_agent agent].freeze

    # The conditions +options+ names, taken out of it (nil when there are none).
    def self.take(options)
      named = OPTIONS.select { |name| options.key?(name) }
      return nil if named.empty?

      named.map { |name| send(name, options.delete(name)) }.freeze
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
