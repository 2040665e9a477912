// A Store that replays queued outcomes and records every call: the seam at which the
// service's and the router's decisions are tested without a socket.
#pragma once

#include "ratelimitd/store/store.hpp"

#include <algorithm>
#include <deque>
#include <stdexcept>
#include <string>
#include <utility>
#include <variant>
#include <vector>

namespace ratelimitd::test {

/// What one outcome does to every window of a call; `raise` throws std::runtime_error
/// instead of answering (a bug or a library's failure, as the router's catch-all sees it).
enum class Scripted { admit, deny, raise };

/// One call the store received.
struct StoreCall {
    std::string kind;                 ///< "apply", "apply_all", "peek" or "reset"
    std::vector<std::string> keys;    ///< one per check, in order
    std::vector<std::string> policies;
    std::vector<std::uint32_t> costs;
};

/// Answers each call with the next queued outcome, or admits when the queue is empty.
/// An admitting window reports remaining = limit - cost; a denying one remaining 0 and
/// retry_after 7 (a number no real clock produced, so a test sees it came from here).
class ScriptedStore final : public store::Store {
public:
    void push(Scripted outcome) { queue_.push_back(outcome); }
    void push(errc failure) { queue_.push_back(failure); }

    [[nodiscard]] const std::vector<StoreCall>& calls() const noexcept { return calls_; }
    void set_ready(bool ready) noexcept { ready_ = ready; }

    boost::asio::awaitable<result<check::Verdict>> apply(const policy::Policy& p, std::string key,
                                                         std::uint32_t cost) override {
        co_return answer({store::LimitCheck{&p, std::move(key), cost}}, "apply");
    }
    boost::asio::awaitable<result<check::Verdict>> apply_all(std::vector<store::LimitCheck> checks) override {
        co_return answer(std::move(checks), "apply_all");
    }
    boost::asio::awaitable<result<check::Verdict>> peek(const policy::Policy& p, std::string key) override {
        co_return answer({store::LimitCheck{&p, std::move(key), 0}}, "peek");
    }
    boost::asio::awaitable<result<bool>> reset(std::string key) override {
        calls_.push_back(StoreCall{"reset", {std::move(key)}, {}, {}});
        auto next = take();
        if (auto* failure = std::get_if<errc>(&next)) co_return Problem{*failure, "scripted failure"};
        co_return std::get<Scripted>(next) == Scripted::admit;
    }
    boost::asio::awaitable<bool> ready() override { co_return ready_; }
    std::string describe() const override { return "scripted"; }

private:
    using Outcome = std::variant<Scripted, errc>;

    Outcome take() {
        if (queue_.empty()) return Scripted::admit;
        Outcome next = queue_.front();
        queue_.pop_front();
        return next;
    }

    result<check::Verdict> answer(std::vector<store::LimitCheck> checks, std::string kind) {
        StoreCall call{std::move(kind), {}, {}, {}};
        for (const auto& c : checks) {
            call.keys.push_back(c.key);
            call.policies.push_back(c.policy->name);
            call.costs.push_back(c.cost);
        }
        calls_.push_back(std::move(call));
        auto next = take();
        if (auto* failure = std::get_if<errc>(&next)) return Problem{*failure, "scripted failure"};
        if (std::get<Scripted>(next) == Scripted::raise) throw std::runtime_error("scripted exception");
        const bool admit = std::get<Scripted>(next) == Scripted::admit;
        check::Verdict v;
        v.allowed = admit;
        for (const auto& c : checks) v.windows.push_back(window(*c.policy, c.cost, admit));
        return v;
    }

    static check::WindowState window(const policy::Policy& p, std::uint32_t cost, bool admit) {
        check::WindowState w;
        w.policy = p.name;
        w.allowed = admit;
        w.limit = p.limit;
        w.window_s = std::max<std::int64_t>(1, p.window.count() / 1000);
        w.remaining = admit ? std::max<std::int64_t>(0, p.limit - cost) : 0;
        w.reset_epoch_s = 1'700'000'000 + w.window_s;
        w.reset_after_s = w.window_s;
        w.reset_after_ms = w.window_s * 1000;
        w.retry_after_s = admit ? 0 : 7;
        return w;
    }

    std::deque<Outcome> queue_;
    std::vector<StoreCall> calls_;
    bool ready_ = true;
};

}  // namespace ratelimitd::test
