// A call's problem, or none, in one pointer: the road::Call an HTTP door's waiting frame holds
// stays under Asio's recycling limit (an optional<Problem> is 48 bytes; bad input is rare and
// allocates for its detail anyway).
#pragma once

#include "ratelimitd/core/error.hpp"

#include <memory>
#include <utility>

namespace ratelimitd::road {

/// As std::optional<Problem> reads, move-only.
class MaybeProblem {
public:
    MaybeProblem() = default;

    MaybeProblem& operator=(Problem p) {
        p_ = std::make_unique<Problem>(std::move(p));
        return *this;
    }

    [[nodiscard]] bool has_value() const noexcept { return p_ != nullptr; }
    explicit operator bool() const noexcept { return has_value(); }
    [[nodiscard]] Problem& operator*() noexcept { return *p_; }
    [[nodiscard]] const Problem& operator*() const noexcept { return *p_; }
    [[nodiscard]] const Problem* operator->() const noexcept { return p_.get(); }

private:
    std::unique_ptr<Problem> p_;
};

}  // namespace ratelimitd::road
