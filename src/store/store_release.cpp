// The defaults of Store: a store that keeps no leases says so; one that cannot decide at once
// (try_apply_now) says nothing, and is awaited; try_apply_now_into moves try_apply_now's verdict,
// apply_into and apply_declined_into the awaited one's.
#include "ratelimitd/store/store.hpp"

namespace ratelimitd::store {

boost::asio::awaitable<result<check::Verdict>> Store::release(const policy::Policy& p, std::string /*key*/,
                                                              std::string /*lease*/) {
    co_return Problem{errc::invalid_request, "policy \"" + p.name + "\": this store keeps no leases to release"};
}

std::optional<result<check::Verdict>> Store::try_apply_now(const policy::Policy& /*p*/, const std::string& /*key*/,
                                                          std::uint32_t /*cost*/,
                                                          std::chrono::steady_clock::time_point /*now*/) {
    return std::nullopt;
}

std::optional<result<void>> Store::try_apply_now_into(const policy::Policy& p, const std::string& key,
                                                      std::uint32_t cost, std::chrono::steady_clock::time_point now,
                                                      check::Verdict& out) {
    auto answer = try_apply_now(p, key, cost, now);
    if (!answer) return std::nullopt;
    if (!*answer) return result<void>(answer->error());
    out = std::move(**answer);
    return result<void>();
}

namespace {

boost::asio::awaitable<result<void>> moved_into(boost::asio::awaitable<result<check::Verdict>> asked,
                                                check::Verdict& out) {
    auto verdict = co_await std::move(asked);
    if (!verdict) co_return verdict.error();
    out = std::move(*verdict);
    co_return result<void>();
}

}  // namespace

boost::asio::awaitable<result<void>> Store::apply_into(const policy::Policy& p, std::string key, std::uint32_t cost,
                                                       check::Verdict& out) {
    return moved_into(apply(p, std::move(key), cost), out);
}

boost::asio::awaitable<result<void>> Store::apply_declined_into(const policy::Policy& p, std::string key,
                                                                std::uint32_t cost, check::Verdict& out) {
    return moved_into(apply_declined(p, std::move(key), cost), out);
}

}  // namespace ratelimitd::store
