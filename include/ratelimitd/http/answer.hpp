// Answer: what a door's handler gives the session to send. Most doors answer with a Beast
// Response; the check doors answer with a RenderedAnswer, written straight as bytes.
#pragma once

#include "ratelimitd/http/rendered_answer.hpp"
#include "ratelimitd/http/types.hpp"

#include <chrono>
#include <string>
#include <string_view>
#include <variant>

namespace ratelimitd::http {

class Answer {
public:
    Answer() = default;  // an empty Response: what co_spawn needs of a result type
    Answer(Response res) : held_(std::move(res)) {}        // NOLINT: every handler's Beast answer
    Answer(RenderedAnswer res) : held_(std::move(res)) {}  // NOLINT: a check's bytes

    [[nodiscard]] unsigned status() const noexcept;
    [[nodiscard]] bool keep_alive() const noexcept;
    void keep_alive(bool on);

    /// Adds one field (X-Request-Id): appended to a rendered answer, set on a Response.
    void add_field(std::string_view name, std::string_view value);

    /// Appends the answer as it goes on the wire to `out` (see render_response).
    void render(std::string& out) const;

    /// The answer as a Beast message (parsed back from its bytes when it was rendered): for
    /// tests and tools that read fields, never on the request path.
    [[nodiscard]] Response to_response() const;

    /// When the answer was ready (Router::finish's answer-time reading; unset otherwise): the
    /// session counts the keep-alive idle time from it, without a clock read of its own.
    [[nodiscard]] std::chrono::steady_clock::time_point ready_at() const noexcept { return ready_at_; }
    void ready_at(std::chrono::steady_clock::time_point at) noexcept { ready_at_ = at; }

    /// A delayed /v1/auth answer (RenderedAnswer::hold): how long the session holds it.
    [[nodiscard]] std::chrono::milliseconds hold() const noexcept {
        const auto* rendered = std::get_if<RenderedAnswer>(&held_);
        return rendered != nullptr ? rendered->hold() : std::chrono::milliseconds(0);
    }
    /// Holds a rendered answer `span`, in `slot` (a Beast Response is never held).
    void hold(std::chrono::milliseconds span, service::HeldSlot slot) noexcept {
        if (auto* rendered = std::get_if<RenderedAnswer>(&held_)) rendered->hold(span, std::move(slot));
    }
    /// The hold is over (or was cut short by a drain): its slot is free again.
    void end_hold() noexcept { hold(std::chrono::milliseconds(0), nullptr); }

private:
    std::variant<Response, RenderedAnswer> held_;
    std::chrono::steady_clock::time_point ready_at_{};
};

}  // namespace ratelimitd::http
