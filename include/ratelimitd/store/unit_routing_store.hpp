// envoyproxy/ratelimit's REDIS_PERSECOND on the Store seam: the counters of its per-second
// limits in a second store, every other in the first, each check sent where its limit's unit
// says (Settings::redis_per_second_url).
#pragma once

#include "ratelimitd/store/store.hpp"

#include <vector>

namespace ratelimitd::store {

/// True for a limit whose counter lives in the per-second store: one of envoyproxy/ratelimit's
/// fixed windows (Algorithm::erl_fixed_window) whose unit is SECOND. Its key is laid out as
/// in the other store (envoyproxy/ratelimit writes the same key to either Redis).
[[nodiscard]] bool counts_per_second(const policy::Policy& p) noexcept;

/// Two stores behind one: `per_second` for counts_per_second() limits, `other_units` for the
/// rest. A call whose checks all go to one store is that store's call. A call with checks in
/// both is made of one call to each (split_call.hpp): envoyproxy/ratelimit's pipelines to its
/// two Redis are not atomic together either.
/// @par Thread Safety
/// As the two stores it holds: used from one server thread.
class UnitRoutingStore final : public Store {
public:
    /// Both outlive this store (their backend keeps them).
    UnitRoutingStore(Store& other_units, Store& per_second) noexcept
        : other_units_(other_units), per_second_(per_second) {}

    boost::asio::awaitable<result<check::Verdict>> apply(const policy::Policy& p, std::string key,
                                                         std::uint32_t cost) override;
    std::optional<result<check::Verdict>> try_apply_now(const policy::Policy& p, const std::string& key,
                                                        std::uint32_t cost,
                                                        std::chrono::steady_clock::time_point now) override;
    boost::asio::awaitable<result<check::Verdict>> apply_all(std::vector<LimitCheck> checks) override;
    boost::asio::awaitable<result<check::Verdict>> peek(const policy::Policy& p, std::string key) override;
    /// A key names no unit: it is forgotten in both stores (true when either held it).
    boost::asio::awaitable<result<bool>> reset(std::string key) override;
    boost::asio::awaitable<result<check::Verdict>> release(const policy::Policy& p, std::string key,
                                                           std::string lease) override;
    boost::asio::awaitable<bool> ready() override;
    std::string describe() const override;

private:
    Store& of(const policy::Policy& p) noexcept { return counts_per_second(p) ? per_second_ : other_units_; }

    Store& other_units_;
    Store& per_second_;
};

}  // namespace ratelimitd::store
