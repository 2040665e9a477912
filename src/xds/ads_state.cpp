// AdsState: ACK and NACK as the xDS protocol pairs them with a response (version_info, nonce).
#include "ratelimitd/xds/ads_state.hpp"

#include <utility>

namespace ratelimitd::xds {
namespace {

// google.rpc.Code INVALID_ARGUMENT: what a NACK says of a config it could not take.
constexpr int invalid_argument = 3;

}  // namespace

AdsState::AdsState(envoy::config::core::v3::Node node, std::string type_url)
    : node_(std::move(node)), type_url_(std::move(type_url)) {}

DiscoveryRequest AdsState::request(const std::string& nonce) {
    DiscoveryRequest r;
    r.set_version_info(accepted_version_);
    r.set_type_url(type_url_);
    r.set_response_nonce(nonce);
    // The node once per stream: the control plane keys the stream by it.
    if (!node_sent_) {
        *r.mutable_node() = node_;
        node_sent_ = true;
    }
    return r;
}

DiscoveryRequest AdsState::open_stream() {
    node_sent_ = false;
    return request("");
}

std::optional<std::string> AdsState::precheck(const DiscoveryResponse& response) const {
    if (response.type_url() != type_url_) {
        return "type_url: expected " + type_url_ + ", got " + response.type_url().substr(0, 256);
    }
    return std::nullopt;
}

DiscoveryRequest AdsState::accept(const DiscoveryResponse& response) {
    accepted_version_ = response.version_info();
    ++accepted_;
    return request(response.nonce());
}

DiscoveryRequest AdsState::reject(const DiscoveryResponse& response, const std::string& why) {
    ++rejected_;
    auto r = request(response.nonce());
    auto* status = r.mutable_error_detail();
    status->set_code(invalid_argument);
    status->set_message(why.size() > max_error_detail_bytes ? why.substr(0, max_error_detail_bytes) : why);
    return r;
}

}  // namespace ratelimitd::xds
