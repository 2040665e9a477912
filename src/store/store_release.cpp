// The default of Store::release: a store that keeps no leases says so.
#include "ratelimitd/store/store.hpp"

namespace ratelimitd::store {

boost::asio::awaitable<result<check::Verdict>> Store::release(const policy::Policy& p, std::string /*key*/,
                                                              std::string /*lease*/) {
    co_return Problem{errc::invalid_request, "policy \"" + p.name + "\": this store keeps no leases to release"};
}

}  // namespace ratelimitd::store
