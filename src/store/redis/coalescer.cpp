// Coalescer: queue order, batch and in-flight limits, one slot per batch.
#include "ratelimitd/store/redis/coalescer.hpp"

#include "ratelimitd/store/redis/cluster/key_slot.hpp"

#include <boost/asio/recycling_allocator.hpp>

#include <algorithm>
#include <cstddef>
#include <iterator>

namespace ratelimitd::store::redis {

namespace {

// Whole max_align_t units: the recycling allocator is typed, and a block must be aligned for
// whatever a waiter holds.
using Unit = std::max_align_t;
std::size_t units(std::size_t bytes) { return (bytes + sizeof(Unit) - 1) / sizeof(Unit); }

}  // namespace

void* ReplyWaiter::operator new(std::size_t size) {
    return boost::asio::recycling_allocator<Unit>().allocate(units(size));
}

void ReplyWaiter::operator delete(void* p, std::size_t size) noexcept {
    boost::asio::recycling_allocator<Unit>().deallocate(static_cast<Unit*>(p), units(size));
}

Coalescer::Coalescer(Coalescing limits) : limits_(limits) {
    limits_.max_batch = std::max<std::size_t>(limits_.max_batch, 1);
    limits_.max_in_flight = std::max<std::size_t>(limits_.max_in_flight, 1);
}

void Coalescer::push(QueuedCheck&& check) {
    check.slot = limits_.one_slot_per_batch ? cluster::key_slot(check.args.key) : -1;
    queue_.push_back(std::move(check));
}

std::optional<std::vector<QueuedCheck>> Coalescer::take(std::size_t in_flight) {
    std::vector<QueuedCheck> batch;
    if (!take(in_flight, batch)) return std::nullopt;
    return batch;
}

bool Coalescer::take(std::size_t in_flight, std::vector<QueuedCheck>& batch) {
    batch.clear();
    if (queue_.empty() || in_flight >= limits_.max_in_flight) return false;
    // While calls are out, the next reply is near: waiting for it fills a batch for the price of
    // one call, unless enough checks wait already.
    if (queue_.size() < in_flight * limits_.fill_per_call) return false;
    if (limits_.one_slot_per_batch) {
        // The first check's slot leaves; checks of other slots keep their order.
        const int slot = queue_.front().slot;
        for (auto it = queue_.begin(); it != queue_.end() && batch.size() < limits_.max_batch;) {
            if (it->slot == slot) {
                batch.push_back(std::move(*it));
                it = queue_.erase(it);
            } else {
                ++it;
            }
        }
        return true;
    }
    const auto n = static_cast<std::ptrdiff_t>(std::min(queue_.size(), limits_.max_batch));
    batch.insert(batch.end(), std::make_move_iterator(queue_.begin()), std::make_move_iterator(queue_.begin() + n));
    queue_.erase(queue_.begin(), queue_.begin() + n);
    return true;
}

std::vector<QueuedCheck> Coalescer::take_expired(time_point now) {
    std::vector<QueuedCheck> expired;
    for (auto it = queue_.begin(); it != queue_.end();) {
        if (it->deadline <= now) {
            expired.push_back(std::move(*it));
            it = queue_.erase(it);
        } else {
            ++it;
        }
    }
    return expired;
}

std::vector<QueuedCheck> Coalescer::take_all() {
    std::vector<QueuedCheck> all(std::make_move_iterator(queue_.begin()), std::make_move_iterator(queue_.end()));
    queue_.clear();
    return all;
}

std::chrono::steady_clock::time_point batch_deadline(const std::vector<QueuedCheck>& batch) {
    auto earliest = std::chrono::steady_clock::time_point::max();
    for (const auto& c : batch) earliest = std::min(earliest, c.deadline);
    return earliest;
}

}  // namespace ratelimitd::store::redis
