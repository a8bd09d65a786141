# frozen_string_literal: true

require "ferrule"

spec = Gem.loaded_specs.fetch("ferrule")
raise "Ferrule::VERSION #{Ferrule::VERSION} != gem #{spec.version}" unless Ferrule::VERSION == spec.version.to_s
raise "PROBLEM_JSON" unless Ferrule::PROBLEM_JSON == "application/problem+json"
puts "ferrule #{Ferrule::VERSION} loaded from #{spec.full_gem_path}"
