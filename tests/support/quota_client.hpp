// A client of Envoy's rate limit quota service built from proto/: one StreamRateLimitQuotas
// stream, written and read as the rate_limit_quota filter does, over loopback.
#pragma once

#include "envoy/service/rate_limit_quota/v3/rlqs.grpc.pb.h"

#include <grpcpp/grpcpp.h>

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace ratelimitd::test {

using QuotaReports = envoy::service::rate_limit_quota::v3::RateLimitQuotaUsageReports;
using QuotaResponse = envoy::service::rate_limit_quota::v3::RateLimitQuotaResponse;
using QuotaBucket = std::map<std::string, std::string>;

/// One bucket's usage line of a report.
struct QuotaUsage {
    QuotaBucket bucket;
    std::uint64_t allowed = 0;
    std::uint64_t denied = 0;
    std::chrono::milliseconds elapsed{1'000};  ///< time_elapsed
};

/// The report of `domain` with one usage per entry.
QuotaReports quota_report(const std::string& domain, const std::vector<QuotaUsage>& usages);

/// The bucket id of an action as a map, to compare with what was sent.
QuotaBucket bucket_of(const QuotaResponse::BucketAction& action);

/// A stream on a channel of its own, or on a shared one (several streams on one connection).
class QuotaStreamClient {
public:
    /// `deadline`: the whole stream's, so a read never waits past it.
    explicit QuotaStreamClient(std::shared_ptr<grpc::Channel> channel,
                               std::chrono::milliseconds deadline = std::chrono::milliseconds(30'000));
    explicit QuotaStreamClient(unsigned short port,
                               std::chrono::milliseconds deadline = std::chrono::milliseconds(30'000));

    /// Writes one report; false when the stream is closed.
    bool send(const QuotaReports& report);
    /// The next answer, or nullopt when the server ended the stream.
    std::optional<QuotaResponse> read();
    /// Half-closes and returns the stream's status.
    grpc::Status finish();
    /// Half-closes only (another thread may be reading); then status() once reads end.
    void close_writes();
    /// The stream's status, after read() has returned nullopt.
    grpc::Status status();

    /// A channel with a connection of its own.
    static std::shared_ptr<grpc::Channel> channel_to(unsigned short port);

private:
    std::shared_ptr<grpc::Channel> channel_;
    std::unique_ptr<envoy::service::rate_limit_quota::v3::RateLimitQuotaService::Stub> stub_;
    grpc::ClientContext context_;
    std::unique_ptr<grpc::ClientReaderWriter<QuotaReports, QuotaResponse>> stream_;
};

}  // namespace ratelimitd::test
