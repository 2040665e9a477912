// Answer: one interface over a Beast Response and a RenderedAnswer.
#include "ratelimitd/http/answer.hpp"

#include "ratelimitd/http/response_buffer.hpp"

#include <boost/beast/http/parser.hpp>

#include <stdexcept>

namespace ratelimitd::http {

namespace {

template <class... Ts>
struct overloaded : Ts... {
    using Ts::operator()...;
};
// C++20 deduces this for an aggregate by itself; clang 16 (the sanitized build) does not yet.
template <class... Ts>
overloaded(Ts...) -> overloaded<Ts...>;

}  // namespace

unsigned Answer::status() const noexcept {
    return std::visit(overloaded{[](const Response& r) { return r.result_int(); },
                                 [](const RenderedAnswer& r) { return static_cast<unsigned>(r.status()); }},
                      held_);
}

bool Answer::keep_alive() const noexcept {
    return std::visit(overloaded{[](const Response& r) { return r.keep_alive(); },
                                 [](const RenderedAnswer& r) { return r.keep_alive(); }},
                      held_);
}

void Answer::keep_alive(bool on) {
    std::visit(overloaded{[on](Response& r) { r.keep_alive(on); }, [on](RenderedAnswer& r) { r.keep_alive(on); }},
               held_);
}

void Answer::add_field(std::string_view name, std::string_view value) {
    std::visit(overloaded{[&](Response& r) { r.set(name, value); },
                          [&](RenderedAnswer& r) { r.add_field(name, value); }},
               held_);
}

void Answer::render(std::string& out) const {
    std::visit(overloaded{[&](const Response& r) { render_response(r, out); },
                          [&](const RenderedAnswer& r) { r.render(out); }},
               held_);
}

Response Answer::to_response() const {
    if (const auto* res = std::get_if<Response>(&held_)) return *res;
    std::string wire;
    render(wire);
    bhttp::response_parser<Body, FieldAllocator<char>> parser;
    parser.eager(true);
    boost::beast::error_code ec;
    parser.put(boost::asio::buffer(wire), ec);
    if (ec) throw std::logic_error("a rendered answer does not parse back: " + ec.message());
    return parser.release();
}

}  // namespace ratelimitd::http
