# frozen_string_literal: true

# Ferrule: a Rust HTTP core (axum + tokio) with Ruby handlers.
# The native extension defines Ferrule::VERSION from the Rust crate version.
require_relative "ferrule/ferrule"
