// A small xDS control plane for the tests, written from the published protocol: one
// AggregatedDiscoveryService (state of the world) on a free loopback port, serving whatever
// snapshot the test sets to every stream (or several sent back to back: burst()), and recording
// what each client sent back (the first request of each stream, every ACK and NACK, the gRPC
// metadata). Plaintext, or TLS requiring a
// client certificate. Header only: the globs build *_test.cpp.
#pragma once

#include "support/processes.hpp"

#include <envoy/service/discovery/v3/ads.grpc.pb.h>
#include <ratelimit/config/ratelimit/v3/rls_conf.pb.h>

#include <grpcpp/grpcpp.h>

#include <chrono>
#include <condition_variable>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

namespace ratelimitd::test {

using envoy::service::discovery::v3::DiscoveryRequest;
using envoy::service::discovery::v3::DiscoveryResponse;
using ratelimit::config::ratelimit::v3::RateLimitConfig;

inline constexpr const char* rls_config_type = "type.googleapis.com/ratelimit.config.ratelimit.v3.RateLimitConfig";

/// What a client sent on a stream after a response: an ACK or a NACK.
struct XdsReply {
    std::string version_info;
    std::string response_nonce;
    bool nack = false;
    std::string error_message;
};

/// Server TLS files: the server's certificate and key, and the CA client certificates must
/// come from (a client certificate is then required).
struct XdsServerTls {
    std::string cert, key, client_ca;
};

class XdsControlPlane final : public envoy::service::discovery::v3::AggregatedDiscoveryService::Service {
public:
    /// Listens on `port` (0: a free one).
    explicit XdsControlPlane(unsigned short port = 0, std::optional<XdsServerTls> tls = std::nullopt)
        : tls_(std::move(tls)) {
        start(port);
    }
    ~XdsControlPlane() override { stop(); }

    unsigned short port() const { return port_; }
    std::string address() const { return "127.0.0.1:" + std::to_string(port_); }

    static DiscoveryResponse response(const std::string& version, const std::vector<RateLimitConfig>& configs) {
        DiscoveryResponse r;
        r.set_version_info(version);
        r.set_type_url(rls_config_type);
        for (const auto& c : configs) r.add_resources()->PackFrom(c);
        return r;
    }
    /// Every stream is sent this state of the world (a new nonce each time).
    void set(const std::string& version, const std::vector<RateLimitConfig>& configs) {
        set_raw(response(version, configs));
    }
    /// A response as given (another type URL, garbage resources...); the nonce is set here.
    void set_raw(DiscoveryResponse r) { burst({std::move(r)}); }
    /// Each open stream is sent these back to back, without waiting for an answer between
    /// them (a control plane publishing versions faster than they are applied); a new stream
    /// gets the last. Returns their nonces.
    std::vector<std::string> burst(std::vector<DiscoveryResponse> responses) {
        std::lock_guard lock(mu_);
        std::vector<std::string> nonces;
        for (auto& r : responses) {
            r.set_nonce("nonce-" + std::to_string(++nonces_));
            nonces.push_back(r.nonce());
            history_.push_back(std::move(r));
        }
        changed_.notify_all();
        return nonces;
    }
    /// The nonce the current snapshot was sent with.
    std::string current_nonce() const {
        std::lock_guard lock(mu_);
        return history_.empty() ? "" : history_.back().nonce();
    }
    /// Every ACK and NACK received so far, in order.
    std::vector<XdsReply> replies() const {
        std::lock_guard lock(mu_);
        return replies_;
    }

    /// Waits until a reply answering `nonce` arrives; returns it.
    std::optional<XdsReply> await_reply(const std::string& nonce, std::chrono::milliseconds limit) const {
        std::unique_lock lock(mu_);
        std::optional<XdsReply> found;
        changed_.wait_for(lock, limit, [&] {
            for (const auto& r : replies_) {
                if (r.response_nonce == nonce) found = r;
            }
            return found.has_value();
        });
        return found;
    }
    /// Waits until `n` streams have opened; returns the first request of each.
    std::vector<DiscoveryRequest> await_streams(std::size_t n, std::chrono::milliseconds limit) const {
        std::unique_lock lock(mu_);
        changed_.wait_for(lock, limit, [&] { return first_requests_.size() >= n; });
        return first_requests_;
    }
    std::multimap<std::string, std::string> metadata() const {
        std::lock_guard lock(mu_);
        return metadata_;
    }

    /// The control plane goes away: every stream is ended and the port closed.
    void stop() {
        if (!server_) return;
        {
            std::lock_guard lock(mu_);
            stopping_ = true;
            changed_.notify_all();
        }
        server_->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(2));
        server_.reset();
    }
    /// It comes back on the same port, with the snapshot it had.
    void restart() {
        stop();
        start(port_);
    }

    grpc::Status StreamAggregatedResources(
        grpc::ServerContext* context,
        grpc::ServerReaderWriter<DiscoveryResponse, DiscoveryRequest>* stream) override {
        DiscoveryRequest first;
        if (!stream->Read(&first)) return grpc::Status::OK;
        {
            std::lock_guard lock(mu_);
            first_requests_.push_back(first);
            for (const auto& [k, v] : context->client_metadata()) {
                metadata_.emplace(std::string(k.data(), k.size()), std::string(v.data(), v.size()));
            }
            changed_.notify_all();
        }
        std::size_t next = 0;  // the first response of history_ not sent on this stream
        {
            std::lock_guard lock(mu_);
            next = history_.empty() ? 0 : history_.size() - 1;  // a new stream: the state now
        }
        while (true) {
            std::vector<DiscoveryResponse> unsent;
            {
                std::unique_lock lock(mu_);
                // Short waits: a stream whose client went away is noticed.
                changed_.wait_for(lock, std::chrono::milliseconds(50),
                                  [&] { return stopping_ || history_.size() > next; });
                if (stopping_) return grpc::Status(grpc::StatusCode::UNAVAILABLE, "control plane going away");
                if (context->IsCancelled()) return grpc::Status::CANCELLED;
                unsent.assign(history_.begin() + static_cast<std::ptrdiff_t>(next), history_.end());
                next = history_.size();
            }
            if (unsent.empty()) continue;
            for (const auto& r : unsent) {
                if (!stream->Write(r)) return grpc::Status::OK;
            }
            // The client answers the last one; one it never applied (superseded) it never answers.
            if (!read_replies(stream, unsent.back().nonce())) return grpc::Status::OK;
        }
    }

private:
    // Records each reply until the one to `last_nonce`; false when the stream ended first.
    bool read_replies(grpc::ServerReaderWriter<DiscoveryResponse, DiscoveryRequest>* stream,
                      const std::string& last_nonce) {
        while (true) {
            DiscoveryRequest reply;
            if (!stream->Read(&reply)) return false;
            std::lock_guard lock(mu_);
            replies_.push_back({reply.version_info(), reply.response_nonce(), reply.has_error_detail(),
                                reply.error_detail().message()});
            changed_.notify_all();
            if (reply.response_nonce() == last_nonce) return true;
        }
    }

    static std::string read(const std::string& path) {
        std::ifstream in(path);
        std::ostringstream s;
        s << in.rdbuf();
        return s.str();
    }

    void start(unsigned short port) {
        std::shared_ptr<grpc::ServerCredentials> credentials = grpc::InsecureServerCredentials();
        if (tls_) {
            grpc::SslServerCredentialsOptions ssl(GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_AND_VERIFY);
            ssl.pem_root_certs = read(tls_->client_ca);
            ssl.pem_key_cert_pairs.push_back({read(tls_->key), read(tls_->cert)});
            credentials = grpc::SslServerCredentials(ssl);
        }
        {
            std::lock_guard lock(mu_);
            stopping_ = false;
        }
        int chosen = 0;
        grpc::ServerBuilder builder;
        builder.AddListeningPort("127.0.0.1:" + std::to_string(port), credentials, &chosen);
        builder.RegisterService(this);
        server_ = builder.BuildAndStart();
        if (!server_ || chosen == 0) throw std::runtime_error("the test control plane cannot listen");
        port_ = static_cast<unsigned short>(chosen);
    }

    std::optional<XdsServerTls> tls_;
    std::unique_ptr<grpc::Server> server_;
    unsigned short port_ = 0;
    mutable std::mutex mu_;
    mutable std::condition_variable changed_;
    bool stopping_ = false;
    int nonces_ = 0;
    std::vector<DiscoveryResponse> history_;  // every response set, in order
    std::vector<DiscoveryRequest> first_requests_;
    std::vector<XdsReply> replies_;
    std::multimap<std::string, std::string> metadata_;
};

/// A RateLimitConfig of one domain: each (key, value, requests per hour) a top-level rule.
inline RateLimitConfig rls_config(const std::string& domain,
                                  const std::vector<std::tuple<std::string, std::string, std::uint32_t>>& rules) {
    RateLimitConfig c;
    c.set_name(domain + "-config");
    c.set_domain(domain);
    for (const auto& [key, value, per_hour] : rules) {
        auto* d = c.add_descriptors();
        d->set_key(key);
        d->set_value(value);
        d->mutable_rate_limit()->set_unit(ratelimit::config::ratelimit::v3::HOUR);
        d->mutable_rate_limit()->set_requests_per_unit(per_hour);
    }
    return c;
}

}  // namespace ratelimitd::test
