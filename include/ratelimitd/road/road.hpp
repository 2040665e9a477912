// The one road: every door (check, auth, report, release; gRPC's ShouldRateLimit and POST
// /json), every admin door that reads or forgets state (peek, reset, their Envoy forms) and the
// simulator fill a road::Call and hand it to Road::decide, which plans it on one registry
// snapshot, decides it on the thread's CheckService and leaves what it came to in the call.
// The doors only translate their wire format into the call and the call back into their wire
// format (docs/design.md, "One road").
#pragma once

#include "ratelimitd/road/call.hpp"
#include "ratelimitd/policy/registry_handle.hpp"
#include "ratelimitd/service/check_service.hpp"
#include "ratelimitd/service/crossing_sink.hpp"
#include "ratelimitd/service/top_board.hpp"

#include <boost/asio/awaitable.hpp>

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>

namespace ratelimitd::road {

/// One per server thread (and one per simulation), beside its CheckService; holds references
/// only (a const Road still decides: the service it refers to is not its own). Bad input comes
/// back as the call's problem, and charges nothing. Never throws but for bad_alloc.
class Road {
public:
    /// The road of the thread `service` serves, on its registry. `env_secret`:
    /// RATELIMITD_HASH_SECRET as the settings read it (auth's hashed identities); it must
    /// outlive the road.
    explicit Road(service::CheckService& service, const std::optional<std::string>& env_secret = no_secret()) noexcept;

    /// The one entry, for a caller whose frame owns `call` until the awaitable completes (gRPC,
    /// the admin doors, release, the simulator, tests). Not a coroutine: what is decided at
    /// once (bad input, no limits, the embedded store, a cached denial) costs no frame of the
    /// road's; the rest is one wait on the service.
    boost::asio::awaitable<void> decide(Call& call) const;

    /// The one entry, for a door that is not a coroutine and answers at once when it can (the
    /// HTTP check, auth and report doors): the answer is `finish(call)`, made at once when the
    /// call needed no wait. When it must wait, the call moves into one frame of the road's
    /// holding it and `finish`: the frame-size rule below is kept here, for every door.
    template <class Finish>
    auto decide(Call&& call, Finish finish) const
        -> boost::asio::awaitable<std::invoke_result_t<Finish&, Call&>> {
        if (at_once(call)) return ready(finish(call));
        call.drop_asked();  // borrowed from the door's frame, which is gone when the wait ends
        return wait(std::move(call), std::move(finish));
    }

    /// What the admin doors read besides state: the registry in force, the store's readiness,
    /// the heavy hitters (nullptr when off) and where crossed thresholds go (nullptr: nowhere).
    [[nodiscard]] std::shared_ptr<const policy::Registry> registry() const { return registry_.current(); }
    [[nodiscard]] boost::asio::awaitable<bool> ready() const;
    [[nodiscard]] service::TopBoard* top_board() const noexcept;
    [[nodiscard]] service::CrossingSink* crossing_sink() const noexcept;

    /// A decided refund of `units` the store took: logged (policy, key hash, units, the
    /// caller's `peer` and `request_id`), once per limit the call names (a refund's: `named`);
    /// counted by the service already.
    static void log_refund(const Call& call, std::uint64_t units, std::string_view peer, std::string_view request_id);

    /// The first 16 hex digits of `key`'s SHA-256: how log and audit lines name a counter key
    /// without writing the tenant's key out.
    static std::string key_hash(std::string_view key);

private:
    /// A waiting call's frame must stay a block the thread's FramePool recycles (size classes
    /// up to 4 KiB, core/frame_pool.hpp; over it, every waiting check would be a malloc, which
    /// perf.redis_session counts). wait()'s frame holds the call, `finish` and some 250 bytes of
    /// its own (GCC 12, read from -fdump-tree-gimple's .CO_FRAME). The bound was 760 while
    /// Asio's own cache (1,020-byte blocks) held the frames; the pool replaced it, and the
    /// plan's and the decision's tenants kept in place (policy::TenantText) made the call
    /// about 110 bytes larger.
    static constexpr std::size_t wait_frame_room = 3584;

    static const std::optional<std::string>& no_secret() noexcept;

    /// Plans `call` and decides it when that needs no wait. True when the call is final.
    bool at_once(Call& call) const;
    /// The waits at_once left (not a coroutine: it hands back the one that applies).
    boost::asio::awaitable<void> later(Call& call) const;

    template <class Finish>
    auto wait(Call call, Finish finish) const -> boost::asio::awaitable<std::invoke_result_t<Finish&, Call&>> {
        static_assert(sizeof(Call) + sizeof(Finish) <= wait_frame_room,
                      "a waiting call's frame would be too big for Asio to recycle");
        co_await later(call);
        co_return finish(call);
    }
    template <class T>
    static boost::asio::awaitable<T> ready(T answer) {
        co_return answer;
    }
    static boost::asio::awaitable<void> done();

    // at_once, by what is asked.
    bool plan_check(Call& call) const;
    bool plan_auth(Call& call) const;
    bool plan_report(Call& call) const;
    bool plan_release(Call& call) const;
    bool plan_state(Call& call) const;
    bool plan_rls(Call& call) const;
    bool plan_envoy_state(Call& call) const;
    /// CheckService::decide_now of the call's plan; true when it decided.
    bool try_now(Call& call) const;

    // later, by what is asked.
    boost::asio::awaitable<void> release_later(Call& call) const;
    boost::asio::awaitable<void> peek_later(Call& call) const;
    boost::asio::awaitable<void> reset_later(Call& call) const;
    boost::asio::awaitable<void> rls_later(Call& call) const;
    boost::asio::awaitable<void> charge_denied(const policy::RlsPlan& plan) const;

    const policy::RegistryHandle& registry_;
    service::CheckService& service_;
    const std::optional<std::string>& env_secret_;
};

}  // namespace ratelimitd::road
