# frozen_string_literal: true

# Loaded from the installed gem: the extension, its version, and the API classes.
require "ferrule"

spec = Gem.loaded_specs.fetch("ferrule")
raise "Ferrule::VERSION #{Ferrule::VERSION} != gem #{spec.version}" unless Ferrule::VERSION == spec.version.to_s
raise "PROBLEM_JSON" unless Ferrule::PROBLEM_JSON == "application/problem+json"
raise "the extension is not inside the gem" unless $LOADED_FEATURES.any? { |f| f.start_with?(spec.full_gem_path) && f.end_with?("ferrule.so") }
Ferrule::App.new.get("/users/{id:int}") { |req| { id: req.params[:id] } }
puts "ferrule #{Ferrule::VERSION} loaded from #{spec.full_gem_path}"
