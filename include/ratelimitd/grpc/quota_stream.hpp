// One StreamRateLimitQuotas call: reports read, answers written, in order, with back pressure.
#pragma once

#include "ratelimitd/grpc/peer_streams.hpp"
#include "ratelimitd/grpc/quota_answerer.hpp"
#include "ratelimitd/grpc/stream_roster.hpp"

#include "envoy/service/rate_limit_quota/v3/rlqs.grpc.pb.h"

#include <deque>
#include <mutex>
#include <string>

namespace ratelimitd::rls {

/// Reads reports one at a time and answers each (QuotaAnswerer) on the thread gRPC read it on.
/// Answers wait in a queue of at most max_pending_answers; while it is full no report is read,
/// so a client that never reads its answers holds at most that many (and gRPC's flow control
/// stops it sending). Ends with OK when the client half-closes or goes away; a stream past
/// its connection's cap (PeerStreams) ends with OK at once, before reading anything (an
/// error would be Envoy's to admit, so none is what a client can cause).
/// @par Thread Safety
/// gRPC calls the On* methods from its threads, a read and a write completion possibly at once:
/// the queue and the state are under mutex_.
class QuotaStream final
    : public grpc::ServerBidiReactor<envoy::service::rate_limit_quota::v3::RateLimitQuotaUsageReports,
                                     envoy::service::rate_limit_quota::v3::RateLimitQuotaResponse> {
public:
    static constexpr std::size_t max_pending_answers = 4;

    /// Starts reading when `peers` admits `peer` and `roster` is not ending; the stream
    /// deletes itself when done.
    QuotaStream(const QuotaAnswerer& answerer, PeerStreams& peers, QuotaMetrics& metrics, StreamRoster& roster,
                std::string peer);

    /// Ends the stream with OK now, a read still pending (gRPC completes it with ok false),
    /// or as soon as the write in flight is done.
    void end();

    void OnReadDone(bool ok) override;
    void OnWriteDone(bool ok) override;
    void OnDone() override;

private:
    using Answer = envoy::service::rate_limit_quota::v3::RateLimitQuotaResponse;

    /// Under mutex_: starts the next write, the next read or the finish, whichever is due.
    void advance();

    const QuotaAnswerer& answerer_;
    PeerStreams& peers_;
    QuotaMetrics& metrics_;
    StreamRoster& roster_;
    std::string peer_;
    const std::string envoy_id_;  ///< this stream's Envoy in the share ledger: a reconnect is a new one
    bool admitted_ = false;
    envoy::service::rate_limit_quota::v3::RateLimitQuotaUsageReports report_;
    IdleBuckets idle_;  ///< touched only in OnReadDone, one read at a time

    std::mutex mutex_;
    std::deque<Answer> answers_;  ///< front: being written when writing_
    bool reading_ = false;
    bool writing_ = false;
    bool read_closed_ = false;    ///< the client half-closed, went away or a write failed
    bool ending_ = false;       ///< end(): finish without waiting for the pending read
    bool finished_ = false;
};

}  // namespace ratelimitd::rls
