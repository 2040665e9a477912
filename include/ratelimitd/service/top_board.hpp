// The heavy hitters of the whole process: every server thread's ThreadTop, merged on read.
#pragma once

#include "ratelimitd/service/bucket_top.hpp"
#include "ratelimitd/service/thread_top.hpp"
#include "ratelimitd/service/top_merge.hpp"

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace ratelimitd::service {

/// One policy's merged ranking.
struct PolicyTop {
    std::string policy;
    std::vector<RankedTenant> tenants;
};

/// Owns one ThreadTop per server thread. The hot path writes its own thread's ThreadTop with
/// no lock; a read (GET /v1/top) runs a copy of each ThreadTop's live sketches on that
/// thread's own executor, one after the other, and merges the copies where it runs. So a
/// check never waits for a reader: at worst a reader's copy waits its turn in the queue of
/// the thread, between two requests.
/// @par Thread Safety
/// add_thread() on the main thread before the threads run; gather() from any server thread;
/// options() and buckets() from anywhere.
class TopBoard {
public:
    explicit TopBoard(const TopOptions& options) : options_(options), buckets_(options, *this) {}

    /// The ThreadTop of the thread running `executor`; it lives as long as the board.
    ThreadTop& add_thread(boost::asio::any_io_executor executor);

    [[nodiscard]] const TopOptions& options() const noexcept { return options_; }

    /// The quota service's buckets (RLQS), ranked per rule; recorded from gRPC's threads.
    [[nodiscard]] BucketTop& buckets() noexcept { return buckets_; }

    /// The `n` largest of `by` per policy (`policy`, or every policy with entries), by policy
    /// name. Completes on the caller's executor.
    boost::asio::awaitable<std::vector<PolicyTop>> gather(std::optional<std::string> policy, TopBy by,
                                                          std::size_t n);

private:
    struct Lane {
        boost::asio::any_io_executor executor;
        std::unique_ptr<ThreadTop> top;
    };
    TopOptions options_;
    std::vector<Lane> lanes_;
    BucketTop buckets_;
};

}  // namespace ratelimitd::service
