# frozen_string_literal: true

require "base64"
require "openssl"
require "securerandom"

module Ferrule
  # Sinatra's <tt>enable :sessions</tt> for an app Ferrule serves itself (+app.run+), where no Rack
  # middleware can keep one: <tt>app.sessions(secret: ENV.fetch("SESSION_SECRET"))</tt>. The session
  # is a cookie holding its JSON encrypted with AES-256-GCM, as Sinatra 3's is encrypted: the
  # client can neither read it nor change it (a cookie that does not decrypt is an empty
  # session). It was only signed, so a client read what an app kept there (found by a
  # differential run beside Sinatra 3). It is written only when a
  # request changed it. Values are JSON's (Strings, numbers, true/false/nil, Arrays, Hashes);
  # keys read as a String or a Symbol alike. Under Rack, a session middleware
  # (Rack::Session::Cookie) is used when there is one.
  class SessionCookie
    # Browsers keep a cookie of at most 4096 bytes.
    MAX_BYTES = 4096

    attr_reader :key

    def initialize(secret:, key: "ferrule.session", path: "/", same_site: :lax, secure: false, httponly: true, max_age: nil, domain: nil)
      raise ArgumentError, "ferrule: sessions: the secret must be a String of at least 64 characters (SecureRandom.hex(32))" unless secret.is_a?(String) && secret.bytesize >= 64

      @secret = secret
      # The cipher's key, derived from the secret for this one use.
      @cipher_key = OpenSSL::HMAC.digest("SHA256", secret, "ferrule.session AES-256-GCM")
      @key = key.to_s
      @options = { path: path, domain: domain, same_site: same_site, secure: secure, httponly: httponly, max_age: max_age }.compact
    end

    # Sinatra's <tt>set :sessions, key: "app.sid", secure: true, expire_after: 600</tt> (Rack
    # session options) as this class's: +expire_after+ is +max_age+; +secret+ goes apart. An
    # option it does not know is an ArgumentError naming it (they were all ignored silently:
    # found by a probe).
    def self.options_of(sinatra_options)
      known = %i[key path domain same_site secure httponly expire_after max_age secret]
      sinatra_options.each_key do |name|
        raise ArgumentError, "ferrule: set :sessions: unknown option #{name.inspect} (known: #{known.map(&:inspect).join(", ")})" unless known.include?(name.to_sym)
      end
      options = sinatra_options.transform_keys(&:to_sym)
      options[:max_age] = options.delete(:expire_after) if options.key?(:expire_after)
      options.delete(:secret)
      options
    end

    # The session +cookie+ holds (nil, or not one this secret made: an empty one). A cookie of
    # the signed form earlier versions wrote is read too, so an upgrade logs no one out; it is
    # written again encrypted.
    def load(cookie)
      json = decrypt(cookie.to_s) || signed(cookie.to_s)
      return Session.new if json.nil?

      indifferent(JSON.parse(json)).each_with_object(Session.new) { |(name, value), session| session[name] = value }
    rescue ArgumentError, JSON::ParserError
      Session.new
    end

    # A session as Rack's SessionHash is read for a logout: <tt>session.destroy</tt> empties it
    # (the cookie then holds nothing), and it is always loaded (found by a probe: +destroy+ was
    # a NoMethodError, a 500, and the user stayed logged in).
    #
    # +id+ is Rack's cookie store's +session_id+, made on first read and kept in the cookie.
    # +options+ are Rack's per-request ones, which the response's cookie honours: +renew+ (a new
    # id: the usual defence against session fixation at login), +skip+ and +drop+ (no cookie is
    # written, as Rack's cookie store writes none), and +expire_after+ (this cookie's lifetime).
    # Found by a probe: both were NoMethodErrors, so a login that renewed its session was a 500.
    class Session < Params
      def destroy = clear
      def loaded? = true
      def id = (self["session_id"] ||= SecureRandom.hex(32))
      def options = (@options ||= {})
    end

    # The Set-Cookie options (value included) that keep +session+; nil when too big to keep.
    # A session whose +options+ ask for +expire_after+ gets that lifetime.
    def cookie(session)
      value = encrypt(JSON.generate(session))
      if value.bytesize + @key.bytesize + 1 > MAX_BYTES
        warn "ferrule: the session is #{value.bytesize} bytes, more than a cookie holds (#{MAX_BYTES}); it was not saved"
        return nil
      end
      options = session.is_a?(Session) ? session.options : {}
      return @options.merge(value: value) unless options.key?(:expire_after)

      @options.merge(value: value, max_age: options[:expire_after]).compact
    end

    private

    # A fresh 12-byte nonce, the ciphertext and the 16-byte tag, in URL-safe base64.
    def encrypt(json)
      cipher = OpenSSL::Cipher.new("aes-256-gcm").encrypt
      cipher.key = @cipher_key
      nonce = cipher.random_iv
      cipher.auth_data = @key
      sealed = cipher.update(json) + cipher.final
      Base64.urlsafe_encode64(nonce + sealed + cipher.auth_tag, padding: false)
    end

    # The JSON +value+ holds, or nil when it is not what #encrypt made with this secret (under
    # this cookie's name: the name is authenticated too).
    def decrypt(value)
      raw = Base64.urlsafe_decode64(value)
      return nil if raw.bytesize < 28

      cipher = OpenSSL::Cipher.new("aes-256-gcm").decrypt
      cipher.key = @cipher_key
      cipher.iv = raw.byteslice(0, 12)
      cipher.auth_tag = raw.byteslice(-16, 16)
      cipher.auth_data = @key
      (cipher.update(raw.byteslice(12, raw.bytesize - 28)) + cipher.final).force_encoding(Encoding::UTF_8)
    rescue ArgumentError, OpenSSL::Cipher::CipherError
      nil
    end

    # The JSON of a cookie in the signed form (+data--hexsignature+) earlier versions wrote.
    def signed(value)
      # The signature is hex and last: the data (URL-safe base64, which has `-`) may hold `--`.
      data, separator, signature = value.rpartition("--")
      return nil if separator.empty? || signature.bytesize != 64 || !OpenSSL.fixed_length_secure_compare(OpenSSL::HMAC.hexdigest("SHA256", @secret, data), signature)

      Base64.urlsafe_decode64(data)
    end

    def indifferent(value)
      case value
      when Hash then value.each_with_object(Params.new) { |(k, v), out| out[k] = indifferent(v) }
      when Array then value.map { |v| indifferent(v) }
      else value
      end
    end
  end
end
