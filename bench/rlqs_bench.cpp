// Drives ratelimitd's RLQS door as fast as answers come: `streams` StreamRateLimitQuotas
// streams on connections of their own, each sending a report of `buckets` distinct buckets
// (kind=api, tenant=t-<stream>-<i>), waiting for its answer, and sending the next, for
// `seconds`. Prints "reports N answered_buckets M" (bench/rlqs.sh reads it).
//   rlqs_bench PORT BUCKETS STREAMS SECONDS
#include "envoy/service/rate_limit_quota/v3/rlqs.grpc.pb.h"

#include <grpcpp/grpcpp.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

namespace {

namespace rlqs = envoy::service::rate_limit_quota::v3;

rlqs::RateLimitQuotaUsageReports report_of(int stream, int buckets) {
    rlqs::RateLimitQuotaUsageReports report;
    report.set_domain("web");
    for (int i = 0; i < buckets; ++i) {
        auto& usage = *report.add_bucket_quota_usages();
        auto& id = *usage.mutable_bucket_id()->mutable_bucket();
        id["kind"] = "api";
        id["tenant"] = "t-" + std::to_string(stream) + "-" + std::to_string(i);
        usage.set_num_requests_allowed(1);
        usage.mutable_time_elapsed()->set_nanos(200'000'000);
    }
    return report;
}

struct Counts {
    std::atomic<long> reports{0};
    std::atomic<long> actions{0};
};

void run_stream(unsigned short port, int stream, int buckets, std::chrono::steady_clock::time_point until,
                Counts& counts) {
    grpc::ChannelArguments args;
    args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);  // a connection per stream
    auto channel =
        grpc::CreateCustomChannel("127.0.0.1:" + std::to_string(port), grpc::InsecureChannelCredentials(), args);
    auto stub = rlqs::RateLimitQuotaService::NewStub(channel);
    grpc::ClientContext context;
    auto rw = stub->StreamRateLimitQuotas(&context);
    const auto report = report_of(stream, buckets);
    rlqs::RateLimitQuotaResponse answer;
    while (std::chrono::steady_clock::now() < until) {
        if (!rw->Write(report) || !rw->Read(&answer)) break;
        counts.reports.fetch_add(1, std::memory_order_relaxed);
        counts.actions.fetch_add(answer.bucket_action_size(), std::memory_order_relaxed);
    }
    rw->WritesDone();
    while (rw->Read(&answer)) {
    }
    rw->Finish();
}

}  // namespace

int main(int argc, char** argv) {
    if (argc != 5) {
        std::fprintf(stderr, "usage: rlqs_bench PORT BUCKETS STREAMS SECONDS\n");
        return 2;
    }
    const auto port = static_cast<unsigned short>(std::atoi(argv[1]));
    const int buckets = std::atoi(argv[2]);
    const int streams = std::atoi(argv[3]);
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(std::atoi(argv[4]));
    Counts counts;
    std::vector<std::thread> threads;
    for (int s = 0; s < streams; ++s) threads.emplace_back(run_stream, port, s, buckets, until, std::ref(counts));
    for (auto& t : threads) t.join();
    std::printf("reports %ld answered_buckets %ld\n", counts.reports.load(), counts.actions.load());
    return 0;
}
