# frozen_string_literal: true

module Ferrule
  # A block's response headers (Context#headers): names in lower case however they are written,
  # so <tt>response.headers["X-Id"] = "7"</tt> and <tt>headers "x-id" => "8"</tt> are one header.
  class HeaderHash < Hash
    def [](name) = super(name.to_s.downcase)
    def []=(name, value)
      super(name.to_s.downcase, value)
    end
    alias store []=
    def key?(name) = super(name.to_s.downcase)
    alias has_key? key?
    alias include? key?
    def delete(name, &block) = super(name.to_s.downcase, &block)
    def fetch(name, *default, &block) = super(name.to_s.downcase, *default, &block)
    def dig(name, *rest) = super(name.to_s.downcase, *rest)
    def values_at(*names) = super(*names.map { |name| name.to_s.downcase })

    # Merged in lower case too: <tt>response.headers.merge!("X-Frame-Options" => "DENY")</tt> in
    # an after filter replaced nothing, and both values went out, which browsers ignore (found by
    # a probe: the framing protection was lost).
    def merge!(*others, &block)
      others.each { |other| super(other.to_h.transform_keys { |name| name.to_s.downcase }, &block) }
      self
    end
    alias update merge!

    def merge(*others, &block) = dup.merge!(*others, &block)
  end

  # Sinatra's +response+ in a block: what the block answers with, written to as to a
  # Rack::Response (<tt>response.set_cookie("sid", value: "abc", httponly: true)</tt>,
  # <tt>response.headers["x-id"] = "7"</tt>, <tt>response.status = 202</tt>). It writes through
  # the block's Context, so +status+, +headers+ and +body+ there see the same answer.
  class ResponseWriter
    def initialize(context)
      @context = context
    end

    def status = @context.status
    def status=(code)
      @context.status(code)
    end

    def headers = @context.__send__(:__ferrule_header_hash)
    def [](name) = headers[name]
    def []=(name, value)
      headers[name] = value
    end
    alias set_header []=
    alias get_header []

    def content_type = headers["content-type"]
    def content_type=(type)
      @context.content_type(type)
    end

    def body = @context.body
    # An Array of Strings is a Rack body here, sent as its Strings one after another, as
    # Rack::Response's is (found by a probe: <tt>response.body = ["x", "y"]</tt> went out as the
    # JSON array); a Hash or any other value is the answer, as the +body+ helper takes it.
    def body=(value)
      @context.body(value.is_a?(Array) && value.all?(String) ? value.join : value)
    end

    # Rack::Response's +write+: appends to the body (it was a NoMethodError, a 500).
    def write(chunk)
      current = @context.body
      text = chunk.to_s
      @context.body(current.is_a?(String) ? current + text : text)
      text.bytesize
    end

    # Adds a Set-Cookie line, as Rack's +set_cookie+ writes it: +value+ a String, or a Hash of
    # +value+, +path+, +domain+, +expires+ (a Time), +max_age+, +secure+, +httponly+ and
    # +same_site+. The name and value are escaped as Rack escapes them (a value never adds
    # attributes of its own).
    def set_cookie(name, value)
      options = value.is_a?(Hash) ? value : { value: value }
      require "uri"
      line = +"#{URI.encode_www_form_component(name.to_s)}=#{URI.encode_www_form_component(options[:value].to_s)}"
      line << "; domain=#{options[:domain]}" if options[:domain]
      line << "; path=#{options[:path]}" if options[:path]
      line << "; max-age=#{options[:max_age]}" if options[:max_age]
      line << "; expires=#{options[:expires].getutc.strftime("%a, %d %b %Y %H:%M:%S GMT")}" if options[:expires]
      line << "; secure" if options[:secure]
      line << "; httponly" if options[:httponly] || options[:http_only]
      line << "; samesite=#{Ferrule::ResponseWriter.same_site(options[:same_site])}" if options[:same_site]
      kept = headers["set-cookie"]
      headers["set-cookie"] = Array(kept) + [line]
    end

    # A +same_site+ option as Rack writes it: +true+ is Strict (it was written "True", which a
    # browser ignores: found by a probe); anything but a known value is an ArgumentError.
    def self.same_site(value)
      case value
      when true, :strict, "strict", :Strict, "Strict" then "Strict"
      when :lax, "lax", :Lax, "Lax" then "Lax"
      when :none, "none", :None, "None" then "None"
      else raise ArgumentError, "ferrule: set_cookie same_site: #{value.inspect} is not :strict, :lax, :none or true"
      end
    end

    # Tells the client to forget a cookie (Rack's +delete_cookie+): an empty value that expired.
    def delete_cookie(name, options = {})
      set_cookie(name, options.merge(value: "", max_age: "0", expires: Time.at(0)))
    end

    # Rack::Response's +redirect+.
    def redirect(location, status = 302)
      self.status = status
      headers["location"] = location.to_s
    end
  end
end
