// Counters that one thread writes and any thread reads, grouped by label set, with no lock.
#pragma once

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>

namespace ratelimitd::service {

/// A counter with a single writer: add() is a relaxed load and store (no locked instruction,
/// no shared cache line with the other threads' counters); get() is safe from any thread.
class OwnedCounter {
public:
    void add(std::uint64_t n) noexcept { v_.store(v_.load(std::memory_order_relaxed) + n, std::memory_order_relaxed); }
    [[nodiscard]] std::uint64_t get() const noexcept { return v_.load(std::memory_order_relaxed); }

private:
    std::atomic<std::uint64_t> v_{0};
};

/// One thread's series of a metric family, each a label set (already rendered, e.g.
/// `policy="login"`) with N counters.
///
/// Why it needs no lock: the owner finds its series in a private index, and a new series
/// (a policy seen for the first time, after a reload too) is linked at the head of a list
/// with a release store; readers walk the list from an acquire load. Series are never
/// removed before the family dies (counters only grow, and label sets are bounded by the
/// registry and the endpoint table), so a reader never meets a freed one.
/// @par Thread Safety
/// at() on the owning thread only; for_each() from any thread.
template <std::size_t N>
class OwnedFamily {
public:
    using Cells = std::array<OwnedCounter, N>;

    OwnedFamily() = default;
    OwnedFamily(const OwnedFamily&) = delete;
    OwnedFamily& operator=(const OwnedFamily&) = delete;
    ~OwnedFamily() {
        for (Series* s = head_.load(std::memory_order_acquire); s != nullptr;) {
            Series* next = s->next;
            delete s;
            s = next;
        }
    }

    /// The counters of `labels`, made on first use. Owner thread only.
    Cells& at(std::string_view labels) {
        if (auto it = index_.find(labels); it != index_.end()) return it->second->cells;
        auto* s = new Series{std::string(labels), {}, head_.load(std::memory_order_relaxed)};
        index_.emplace(s->labels, s);  // the key views s->labels, which never moves
        head_.store(s, std::memory_order_release);
        return s->cells;
    }

    /// Calls f(labels, cells) for every series, newest first. Any thread.
    template <class F>
    void for_each(F&& f) const {
        for (const Series* s = head_.load(std::memory_order_acquire); s != nullptr; s = s->next) f(s->labels, s->cells);
    }

private:
    struct Series {
        std::string labels;
        Cells cells;
        Series* next;
    };
    std::atomic<Series*> head_{nullptr};
    std::unordered_map<std::string_view, Series*> index_;  // owner only
};

}  // namespace ratelimitd::service
