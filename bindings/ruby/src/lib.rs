//! `ferrule/ferrule.so`: the native extension of the `ferrule` gem (`Init_ferrule`).
//!
//! The Ruby side (lib/ferrule) turns route declarations into core `RouteSpec`s; HTTP,
//! routing, parsing, coercion and validation are the Rust core's. Requests reach Ruby as
//! objects built from Rust values, on Ruby threads that hold the GVL only while Ruby runs;
//! results are serialised to bytes here, directly from the Ruby objects.

mod app;
mod logs;
mod path_expression;
mod raw;
mod raw_parts;
mod response;
mod socket;
mod stream;
mod to_json;
mod to_ruby;
mod types;

use app::NativeApp;
use magnus::{function, method, prelude::*, Error, Ruby};

/// Rust's allocations in this extension (request parsing, JSON trees, response bytes).
#[global_allocator]
static ALLOCATOR: ferrule_core::Allocator = ferrule_core::Allocator;

#[magnus::init(name = "ferrule")]
fn init(ruby: &Ruby) -> Result<(), Error> {
    let module = ruby.define_module("Ferrule")?;
    module.const_set("VERSION", env!("CARGO_PKG_VERSION"))?;
    module.const_set("PROBLEM_JSON", ferrule_core::PROBLEM_JSON)?;
    let raw = module.define_class("RawParts", ruby.class_object())?;
    raw.define_method("body", method!(raw_parts::RawParts::body, 0))?;
    raw.define_method("query_string", method!(raw_parts::RawParts::query_string, 0))?;
    raw.define_method("query_pairs", method!(raw_parts::RawParts::query_pairs, 0))?;
    raw.define_method("header_pairs", method!(raw_parts::RawParts::header_pairs, 0))?;
    raw.define_method("header", method!(raw_parts::RawParts::header, 1))?;
    raw.define_method("cookie_pairs", method!(raw_parts::RawParts::cookie_pairs, 0))?;
    raw.define_method("trace", method!(raw_parts::RawParts::trace, 0))?;
    raw.define_method("client", method!(raw_parts::RawParts::client, 0))?;
    raw.define_method("forwarded", method!(raw_parts::RawParts::forwarded, 0))?;
    raw.define_method("declares_body?", method!(raw_parts::RawParts::declares_body, 0))?;
    let expression = module.define_class("PathExpression", ruby.class_object())?;
    expression.define_singleton_method("new", function!(path_expression::PathExpression::new, 1))?;
    expression.define_method("match?", method!(path_expression::PathExpression::is_match, 1))?;
    expression.define_method("captures", method!(path_expression::PathExpression::captures, 1))?;
    let class = module.define_class("NativeApp", ruby.class_object())?;
    class.define_singleton_method("new", function!(NativeApp::new, 5))?;
    class.define_singleton_method("bind", function!(app::bind, 2))?;
    class.define_singleton_method("setting_names", function!(ferrule_core::spec::app_setting_names, 0))?;
    class.define_singleton_method("unknown_option", function!(app::unknown_option, 3))?;
    class.define_singleton_method("canonical_path", function!(app::canonical_path, 1))?;
    class.define_method("add_route", method!(NativeApp::add_route, 3))?;
    class.define_method("group", method!(NativeApp::group, 2))?;
    class.define_method("mount_static", method!(NativeApp::mount_static, 1))?;
    class.define_method("hook", method!(NativeApp::hook, 3))?;
    class.define_method("catch", method!(NativeApp::catch, 1))?;
    class.define_method("chain_every_request", method!(NativeApp::chain_every_request, 0))?;
    class.define_method("hooks_of", method!(NativeApp::hooks_of, 1))?;
    class.define_singleton_method("problem_body", function!(app::problem_body, 2))?;
    class.define_singleton_method("reload", function!(app::reload, 4))?;
    class.define_method("openapi", method!(NativeApp::openapi, 0))?;
    class.define_method("start", method!(NativeApp::start, 4))?;
    class.define_method("announce", method!(NativeApp::announce, 0))?;
    class.define_method("route_logs", method!(NativeApp::route_logs, 0))?;
    class.define_method("take_logs", method!(NativeApp::take_logs, 0))?;
    class.define_method("stop", method!(NativeApp::stop, 0))?;
    class.define_method("work", method!(NativeApp::work, 3))?;
    class.define_method("stopped_fd", method!(NativeApp::stopped_fd, 0))?;
    class.define_method("call_rack", method!(NativeApp::call_rack, 7))?;
    class.define_method("finish", method!(NativeApp::finish, 0))?;
    let socket = module.define_class("NativeSocket", ruby.class_object())?;
    socket.define_method("id", method!(socket::NativeSocket::id, 0))?;
    socket.define_method("subprotocol", method!(socket::NativeSocket::subprotocol, 0))?;
    socket.define_method("buffered", method!(socket::NativeSocket::buffered, 0))?;
    socket.define_method("take", method!(socket::NativeSocket::take, 0))?;
    socket.define_method("send_text", method!(socket::NativeSocket::send_text, 1))?;
    socket.define_method("send_binary", method!(socket::NativeSocket::send_binary, 1))?;
    socket.define_method("ping", method!(socket::NativeSocket::ping, 1))?;
    socket.define_method("close", method!(socket::NativeSocket::close, 2))?;
    socket.define_method("fail", method!(socket::NativeSocket::fail, 1))?;
    let out = module.define_class("StreamOut", ruby.class_object())?;
    out.define_method("write", method!(stream::StreamOut::write, 1))?;
    out.define_method("finish", method!(stream::StreamOut::finish, 0))?;
    out.define_method("fail", method!(stream::StreamOut::fail, 1))?;
    Ok(())
}
