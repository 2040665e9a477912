// One config replayed: each logged request decided on the road as /v1/auth decides it
// (road::Road::decide, Ask::auth, on the embedded store), on the log's clock, and counted.
#pragma once

#include "ratelimitd/policy/identity.hpp"
#include "ratelimitd/policy/policy.hpp"
#include "ratelimitd/policy/registry_handle.hpp"
#include "ratelimitd/road/road.hpp"
#include "ratelimitd/service/check_service.hpp"
#include "ratelimitd/service/metrics.hpp"
#include "ratelimitd/simulate/log_request.hpp"
#include "ratelimitd/simulate/replay_clock.hpp"
#include "ratelimitd/simulate/route_cache.hpp"
#include "ratelimitd/simulate/tally.hpp"
#include "ratelimitd/store/memory/memory_store.hpp"

#include <boost/asio/awaitable.hpp>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

namespace ratelimitd::simulate {

/// What one request came to: allowed or not, and the verdict of each limit (for tests that
/// compare a replay with the server line by line).
struct LineVerdict {
    bool limited = false;  ///< some limit applied (not a `policy: none` route or unmatched)
    bool allowed = true;   ///< as /v1/auth answers: 200 (shadow denials allow)
};

/// A config's registry, an embedded store on a ReplayClock, and the service that decides on
/// it, with the Tally of what it decided. Single-threaded.
class Simulation {
public:
    /// `env_secret`: RATELIMITD_HASH_SECRET, as the server would read it (hashed identities).
    /// `tolerance_ms`: how far behind the clock a line may be before it counts as late.
    Simulation(std::shared_ptr<const policy::Registry> registry, const std::optional<std::string>& env_secret,
               std::int64_t tolerance_ms = 5'000);

    /// Decides `req` at max(its time, the clock) and counts it. Completes without suspending
    /// (the embedded store answers synchronously), so a replay loop awaits it inline.
    boost::asio::awaitable<LineVerdict> decide(const LogRequest& req);

    /// The counts so far (lines and unparsed are the reader's: the caller fills them).
    [[nodiscard]] Summary summary() const;

    [[nodiscard]] const policy::Registry& registry() const noexcept { return *registry_; }

private:
    /// The index of `p` in the tally's policies (the handful of policies: a linear search).
    std::size_t policy_index(const policy::Policy* p);

    std::shared_ptr<const policy::Registry> registry_;
    policy::RegistryHandle handle_;
    ReplayClock clock_;
    store::memory::MemoryStore store_;
    service::Metrics metrics_;
    service::CheckService service_;
    std::optional<std::string> env_secret_;  ///< RATELIMITD_HASH_SECRET, which road_ refers to
    road::Road road_;
    std::int64_t tolerance_ms_;
    std::int64_t next_sweep_ms_ = 0;
    std::size_t decided_since_sweep_ = 0;
    std::size_t keys_after_sweep_ = 0;
    std::uint64_t late_ = 0;
    RouteCache routes_;  ///< the routes of the paths seen (planning the rest is per line)
    std::vector<const policy::Policy*> policies_;  ///< the tally's order
    Tally tally_;
    const LogRequest* current_ = nullptr;  ///< the request being decided: what headers_ reads
    policy::HeaderValues headers_;
};

}  // namespace ratelimitd::simulate
