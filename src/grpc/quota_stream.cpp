// QuotaStream: the read/answer/write loop of one quota stream.
#include "ratelimitd/grpc/quota_stream.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <exception>
#include <random>

namespace ratelimitd::rls {

namespace {

/// 128 random bits in hex: the stream's Envoy in the share ledger, unique across replicas.
std::string new_envoy_id() {
    std::random_device random;
    const auto word = [&random] { return (static_cast<std::uint64_t>(random()) << 32) | random(); };
    return fmt::format("{:016x}{:016x}", word(), word());
}

}  // namespace

QuotaStream::QuotaStream(const QuotaAnswerer& answerer, PeerStreams& peers, QuotaMetrics& metrics,
                         StreamRoster& roster, std::string peer)
    : answerer_(answerer),
      peers_(peers),
      metrics_(metrics),
      roster_(roster),
      peer_(std::move(peer)),
      envoy_id_(new_envoy_id()) {
    const bool listed = roster_.enter(this);
    admitted_ = peers_.admit(peer_);
    if (admitted_) {
        metrics_.count_stream_opened();
    } else {
        metrics_.count_stream_refused();
    }
    const std::lock_guard lock(mutex_);
    if (!admitted_ || !listed) {
        read_closed_ = true;
        ending_ = true;
    }
    advance();
}

void QuotaStream::end() {
    const std::lock_guard lock(mutex_);
    read_closed_ = true;
    ending_ = true;
    advance();
}

void QuotaStream::OnReadDone(bool ok) {
    Answer answer;
    if (ok) {
        try {
            answerer_.answer(report_, answer, idle_, envoy_id_);
        } catch (const std::exception& e) {
            // An allocation failure at most: the report goes unanswered, the stream stays.
            spdlog::error("grpc StreamRateLimitQuotas: {}", e.what());
            answer.Clear();
        }
    }
    const std::lock_guard lock(mutex_);
    reading_ = false;
    if (!ok) read_closed_ = true;
    if (answer.bucket_action_size() > 0) answers_.push_back(std::move(answer));
    advance();
}

void QuotaStream::OnWriteDone(bool ok) {
    const std::lock_guard lock(mutex_);
    writing_ = false;
    answers_.pop_front();
    if (!ok) {
        // The stream is broken: nothing more will be delivered.
        answers_.clear();
        read_closed_ = true;
    }
    advance();
}

void QuotaStream::OnDone() {
    roster_.leave(this);  // waits for an end_all() in progress, which may be ending this stream
    if (admitted_) {
        peers_.release(peer_);
        metrics_.count_stream_closed();
    }
    delete this;
}

void QuotaStream::advance() {
    if (finished_) return;
    if (!writing_ && !answers_.empty() && !ending_) {
        writing_ = true;
        StartWrite(&answers_.front());
    }
    if (!read_closed_ && !reading_ && !ending_ && answers_.size() < max_pending_answers) {
        reading_ = true;
        StartRead(&report_);
    }
    if (read_closed_ && !writing_ && (!reading_ || ending_)) {
        finished_ = true;
        Finish(grpc::Status::OK);
    }
}

}  // namespace ratelimitd::rls
