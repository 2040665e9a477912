// RlsClient: blocking stubs over an insecure loopback channel.
#include "support/rls_client.hpp"

#include <regex>

namespace ratelimitd::test {

RlsRequest rls_request(const std::string& domain, const std::vector<Descriptor>& descriptors,
                       std::uint32_t hits_addend) {
    RlsRequest req;
    req.set_domain(domain);
    if (hits_addend) req.set_hits_addend(hits_addend);
    for (const auto& d : descriptors) {
        auto* out = req.add_descriptors();
        for (const auto& [k, v] : d.entries) {
            auto* e = out->add_entries();
            e->set_key(k);
            e->set_value(v);
        }
        if (d.hits_addend) out->mutable_hits_addend()->set_value(*d.hits_addend);
    }
    return req;
}

unsigned short grpc_port_from_log(const std::string& log) {
    static const std::regex line(R"(grpc listening on [^ \n]*:([0-9]+))");
    std::smatch m;
    if (!std::regex_search(log, m, line)) return 0;
    return static_cast<unsigned short>(std::stoi(m[1].str()));
}

RlsClient::RlsClient(unsigned short port)
    : channel_(grpc::CreateChannel("127.0.0.1:" + std::to_string(port), grpc::InsecureChannelCredentials())),
      rls_(envoy::service::ratelimit::v3::RateLimitService::NewStub(channel_)),
      health_(grpc::health::v1::Health::NewStub(channel_)) {}

grpc::Status RlsClient::call(const RlsRequest& req, RlsResponse& res, std::chrono::milliseconds deadline) const {
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + deadline);
    return rls_->ShouldRateLimit(&ctx, req, &res);
}

RlsResponse::Code RlsClient::code(const RlsRequest& req) const {
    RlsResponse res;
    return call(req, res).ok() ? res.overall_code() : RlsResponse::UNKNOWN;
}

std::optional<grpc::health::v1::HealthCheckResponse::ServingStatus> RlsClient::health(const std::string& service) const {
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(5));
    grpc::health::v1::HealthCheckRequest req;
    req.set_service(service);
    grpc::health::v1::HealthCheckResponse res;
    if (!health_->Check(&ctx, req, &res).ok()) return std::nullopt;
    return res.status();
}

}  // namespace ratelimitd::test
