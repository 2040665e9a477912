// An answer written straight as wire bytes: the check doors' hot path, which needs no field
// container built, searched and walked again (Beast's `set` is a lookup, an erase and two
// inserts per field; rendering then copies every field once more).
#pragma once

#include "ratelimitd/http/types.hpp"
#include "ratelimitd/service/held_slot.hpp"

#include <boost/beast/http/status.hpp>

#include <chrono>
#include <string>
#include <string_view>

namespace ratelimitd::http {

/// Status, field lines and body of one answer, kept as the text that goes on the wire: the
/// status line and the field lines in one text (the head), the body in another. The framing
/// fields (Content-Length, Connection) are written by render() from the body and the
/// keep-alive flag, as Beast's prepare_payload() and keep_alive() would set them.
class RenderedAnswer {
public:
    /// Writes the status line; `field_room`: bytes of field lines to make room for at once
    /// (appending them then never grows the head).
    RenderedAnswer(bhttp::status status, unsigned version, bool keep_alive, std::size_t field_room = 0);

    /// Appends one field line. Names and values are ours (constants and numbers, or text the
    /// request parser already accepted), never raw input with line breaks.
    void add_field(std::string_view name, std::string_view value);
    /// Appends whole field lines ("Name: value" CRLF each), of the same kind as add_field's.
    void add_field_lines(std::string_view lines) { head_.append(lines); }

    void body(PooledString text) noexcept { body_ = std::move(text); }
    [[nodiscard]] std::string_view body() const noexcept { return body_; }

    [[nodiscard]] bhttp::status status() const noexcept { return status_; }
    [[nodiscard]] unsigned version() const noexcept { return version_; }
    [[nodiscard]] bool keep_alive() const noexcept { return keep_alive_; }
    void keep_alive(bool on) noexcept { keep_alive_ = on; }

    /// Appends the head (status line and field lines), Content-Length, Connection where HTTP
    /// needs it (close on 1.1, keep-alive on 1.0), the empty line and the body to `out`: three
    /// copies into one growth of `out`.
    void render(std::string& out) const;

    /// A delayed /v1/auth answer (auth_hold.hpp): sent `hold` after it was ready; `slot` is its
    /// place among the process's held answers, given back with it. Kept here, not in Answer:
    /// this alternative is smaller than a Beast Response, so the Answer (and every coroutine
    /// frame holding one) keeps its size.
    [[nodiscard]] std::chrono::milliseconds hold() const noexcept { return hold_; }
    void hold(std::chrono::milliseconds span, service::HeldSlot slot) noexcept {
        hold_ = span;
        hold_slot_ = std::move(slot);
    }

private:
    bhttp::status status_;
    unsigned version_;
    bool keep_alive_;
    PooledString head_;  // the status line, then "Name: value\r\n" lines; recycled per thread
    PooledString body_;
    std::chrono::milliseconds hold_{0};
    service::HeldSlot hold_slot_;
};

}  // namespace ratelimitd::http
