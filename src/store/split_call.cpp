// apply_split: a call across two stores, read first, then charged (split_call.hpp).
#include "ratelimitd/store/split_call.hpp"

#include <algorithm>
#include <optional>
#include <utility>

namespace ratelimitd::store {

namespace net = boost::asio;

namespace {

/// Charged whatever the others answer: nothing to ask first.
bool runs_anyway(const LimitCheck& c) noexcept {
    return c.mode == policy::Mode::report || c.part == policy::Part::charge;
}

/// What the first round read: each deciding check's state, whether it fits.
struct FirstRead {
    std::vector<std::optional<check::WindowState>> state;
    std::vector<bool> fits;
    bool all_fit = true;
};

net::awaitable<result<FirstRead>> read_first(const std::array<Store*, 2>& stores, const SplitCall& call) {
    FirstRead out;
    out.state.resize(call.checks.size());
    out.fits.assign(call.checks.size(), true);
    for (std::size_t s = 0; s < stores.size(); ++s) {
        for (const std::size_t i : call.part[s]) {
            const LimitCheck& c = call.checks[i];
            if (runs_anyway(c)) continue;
            auto read = co_await stores[s]->peek(*c.policy, c.key);
            if (!read) co_return read.error();
            check::WindowState w = read->windows.front();
            // lua/multi.lua's fit test: an ask needs one unit left, the others their cost.
            const std::int64_t needed = c.part == policy::Part::ask ? 1 : static_cast<std::int64_t>(c.cost);
            out.fits[i] = w.remaining >= needed;
            out.all_fit = out.all_fit && out.fits[i];
            out.state[i] = std::move(w);
        }
    }
    co_return out;
}

/// A check that did not run answers what was read: unchanged, allowed when it fits.
check::WindowState as_read(check::WindowState w, bool fits) {
    w.remaining = std::max<std::int64_t>(0, w.remaining);
    w.allowed = fits;
    w.retry_after_s = fits ? 0 : std::max<std::int64_t>(1, w.reset_after_s);
    return w;
}

}  // namespace

net::awaitable<result<check::Verdict>> apply_split(std::array<Store*, 2> stores, SplitCall call) {
    auto first = co_await read_first(stores, call);
    if (!first) co_return first.error();
    std::vector<std::optional<check::WindowState>> answers(call.checks.size());
    for (std::size_t s = 0; s < stores.size(); ++s) {
        std::vector<LimitCheck> sent;
        std::vector<std::size_t> sent_index;
        for (const std::size_t i : call.part[s]) {
            const LimitCheck& c = call.checks[i];
            const bool runs = runs_anyway(c) || (c.part != policy::Part::ask && (first->all_fit || !first->fits[i]));
            if (!runs) {
                answers[i] = as_read(std::move(*first->state[i]), first->fits[i]);
                continue;
            }
            sent.push_back(std::move(call.checks[i]));
            sent_index.push_back(i);
        }
        if (sent.empty()) continue;
        auto verdict = co_await stores[s]->apply_all(std::move(sent));
        if (!verdict) co_return verdict.error();
        for (std::size_t j = 0; j < sent_index.size() && j < verdict->windows.size(); ++j) {
            answers[sent_index[j]] = std::move(verdict->windows[j]);
        }
    }
    check::Verdict out;
    out.allowed = true;
    for (auto& a : answers) {
        if (!a) co_return Problem{errc::bad_script_reply, "a store answered fewer windows than it was sent checks"};
        out.allowed = out.allowed && a->allowed;
        out.windows.push_back(std::move(*a));
    }
    co_return out;
}

}  // namespace ratelimitd::store
