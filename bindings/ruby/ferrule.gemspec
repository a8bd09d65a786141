# frozen_string_literal: true

# Packs the prebuilt native extension (lib/ferrule/ferrule.so) as a platform gem.
# Bazel's //bindings/ruby:gem stages lib/ with the extension and runs `gem build` here.
Gem::Specification.new do |s|
  s.name = "ferrule"
  s.version = ENV.fetch("FERRULE_VERSION", "0.1.0")
  s.summary = "Ferrule: a Rust HTTP core (axum + tokio) with Ruby handlers."
  s.authors = ["Ferrule"]
  s.license = "MIT"
  s.required_ruby_version = ">= 3.1"
  s.platform = Gem::Platform.local
  s.files = Dir["lib/**/*.rb"].sort + ["lib/ferrule/ferrule.so", "bin/ferrule"]
  # `ferrule openapi app.rb` prints an app's OpenAPI document (lib/ferrule/cli.rb).
  s.bindir = "bin"
  s.executables = ["ferrule"]
  s.require_paths = ["lib"]
end
