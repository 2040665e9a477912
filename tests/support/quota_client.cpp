// QuotaStreamClient: a synchronous StreamRateLimitQuotas stream for the tests.
#include "support/quota_client.hpp"

namespace ratelimitd::test {

QuotaReports quota_report(const std::string& domain, const std::vector<QuotaUsage>& usages) {
    QuotaReports report;
    report.set_domain(domain);
    for (const auto& u : usages) {
        auto& usage = *report.add_bucket_quota_usages();
        for (const auto& [key, value] : u.bucket) (*usage.mutable_bucket_id()->mutable_bucket())[key] = value;
        usage.mutable_time_elapsed()->set_seconds(u.elapsed.count() / 1000);
        usage.mutable_time_elapsed()->set_nanos(static_cast<std::int32_t>(u.elapsed.count() % 1000) * 1'000'000);
        usage.set_num_requests_allowed(u.allowed);
        usage.set_num_requests_denied(u.denied);
    }
    return report;
}

QuotaBucket bucket_of(const QuotaResponse::BucketAction& action) {
    const auto& pairs = action.bucket_id().bucket();
    return QuotaBucket(pairs.begin(), pairs.end());
}

std::shared_ptr<grpc::Channel> QuotaStreamClient::channel_to(unsigned short port) {
    // A pool of its own: channels to one address would otherwise share a connection, and the
    // tests count streams per connection.
    grpc::ChannelArguments args;
    args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
    return grpc::CreateCustomChannel("127.0.0.1:" + std::to_string(port), grpc::InsecureChannelCredentials(), args);
}

QuotaStreamClient::QuotaStreamClient(unsigned short port, std::chrono::milliseconds deadline)
    : QuotaStreamClient(channel_to(port), deadline) {}

QuotaStreamClient::QuotaStreamClient(std::shared_ptr<grpc::Channel> channel, std::chrono::milliseconds deadline)
    : channel_(std::move(channel)),
      stub_(envoy::service::rate_limit_quota::v3::RateLimitQuotaService::NewStub(channel_)) {
    context_.set_deadline(std::chrono::system_clock::now() + deadline);
    stream_ = stub_->StreamRateLimitQuotas(&context_);
}

bool QuotaStreamClient::send(const QuotaReports& report) { return stream_->Write(report); }

std::optional<QuotaResponse> QuotaStreamClient::read() {
    QuotaResponse response;
    if (!stream_->Read(&response)) return std::nullopt;
    return response;
}

grpc::Status QuotaStreamClient::finish() {
    stream_->WritesDone();
    QuotaResponse ignored;
    while (stream_->Read(&ignored)) {
    }
    return stream_->Finish();
}

void QuotaStreamClient::close_writes() { stream_->WritesDone(); }

grpc::Status QuotaStreamClient::status() { return stream_->Finish(); }

}  // namespace ratelimitd::test
