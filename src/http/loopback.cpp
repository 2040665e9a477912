// is_loopback_address: parsed with Asio, so every spelling of an address is one answer.
#include "ratelimitd/http/loopback.hpp"

#include <boost/asio/ip/address.hpp>

#include <string>

namespace ratelimitd::http {

bool is_loopback_address(std::string_view address) noexcept {
    boost::system::error_code ec;
    const auto ip = boost::asio::ip::make_address(std::string(address), ec);
    if (ec) return false;
    if (ip.is_v6() && ip.to_v6().is_v4_mapped()) {
        return boost::asio::ip::make_address_v4(boost::asio::ip::v4_mapped, ip.to_v6()).is_loopback();
    }
    return ip.is_loopback();
}

}  // namespace ratelimitd::http
