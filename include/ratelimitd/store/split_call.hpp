// One Store::apply_all call whose checks live in two stores (UnitRoutingStore): decided as
// envoyproxy/ratelimit decides a call across its two Redis, read first, then charged.
#pragma once

#include "ratelimitd/store/store.hpp"

#include <array>
#include <vector>

namespace ratelimitd::store {

/// `checks` split between two stores: part[s] holds the indexes (into `checks`) of store s's
/// checks, each part in call order.
struct SplitCall {
    std::vector<LimitCheck> checks;
    std::array<std::vector<std::size_t>, 2> part;
};

/// Store::apply_all's answer for a call split between `stores[0]` and `stores[1]`, both parts
/// non-empty. Checks that charge whatever the others do (Part::charge, reports) are sent as
/// they are. When some decide or ask (Part::decide, Part::ask), each of those is first peeked
/// in its store; then, as lua/multi.lua decides within one store, all are charged when all
/// fit, else only those that do not fit run (and the others answer their peek, unchanged).
/// Each store's part is one apply_all call, so each store's part stays atomic in itself.
/// Never throws; the first store error is the call's.
boost::asio::awaitable<result<check::Verdict>> apply_split(std::array<Store*, 2> stores, SplitCall call);

}  // namespace ratelimitd::store
