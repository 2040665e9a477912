// XdsClient: a synchronous gRPC bidirectional stream on its own thread (the config source is
// one stream; nothing on the check path waits for it).
#include "ratelimitd/xds/xds_client.hpp"

#include "ratelimitd/core/log_value.hpp"

#include <envoy/service/discovery/v3/ads.grpc.pb.h>
#include <grpcpp/grpcpp.h>
#include <spdlog/spdlog.h>


namespace ratelimitd::xds {
namespace {

using Clock = std::chrono::system_clock;
using envoy::service::discovery::v3::AggregatedDiscoveryService;

constexpr std::chrono::milliseconds stop_slice{100};
// A control plane gone without a FIN (a partition) is noticed by HTTP/2 pings; 5 minutes is
// the least interval common gRPC servers accept without answering "too many pings".
constexpr int keepalive_ms = 300'000;
constexpr int keepalive_timeout_ms = 20'000;

std::int64_t now_s() {
    return std::chrono::duration_cast<std::chrono::seconds>(Clock::now().time_since_epoch()).count();
}

}  // namespace

envoy::config::core::v3::Node make_node(const XdsClientOptions& options) {
    envoy::config::core::v3::Node node;
    node.set_id(options.node_id);
    node.set_user_agent_name("ratelimitd");
    node.set_user_agent_version(options.user_agent_version);
    auto* fields = node.mutable_metadata()->mutable_fields();
    for (const auto& [key, value] : options.node_metadata) (*fields)[key].set_string_value(value);
    return node;
}

XdsClient::XdsClient(XdsClientOptions options, ConfigSink sink, XdsMetrics& metrics)
    : options_(std::move(options)),
      sink_(std::move(sink)),
      metrics_(metrics),
      tls_files_(XdsTlsPaths{options_.tls_ca_file, options_.tls_cert_file, options_.tls_key_file}) {}

XdsClient::~XdsClient() { stop(); }

void XdsClient::start() {
    thread_ = std::thread([this] { run(); });
}

void XdsClient::stop() {
    {
        std::lock_guard lock(mu_);
        stopping_ = true;
        if (context_ != nullptr) context_->TryCancel();
    }
    wake_.notify_all();
    if (thread_.joinable()) thread_.join();
}

bool XdsClient::stopping() const {
    std::lock_guard lock(mu_);
    return stopping_;
}

bool XdsClient::pause(std::chrono::milliseconds wait) {
    std::unique_lock lock(mu_);
    return !wake_.wait_for(lock, wait, [this] { return stopping_; });
}

void XdsClient::run() {
    AdsState state(make_node(options_));
    Backoff backoff(options_.backoff);
    while (!stopping()) {
        if (run_stream(state)) backoff.reset();
        if (stopping()) break;
        const auto wait = backoff.next();
        spdlog::info("xds: next attempt to reach {} in {}ms (attempt {}); the config in force (version={}) keeps serving",
                     log_value(options_.server), wait.count(), backoff.attempt(),
                     log_value(state.accepted_version().empty() ? "none" : state.accepted_version()));
        if (!pause(wait)) break;
    }
}

std::shared_ptr<grpc::Channel> XdsClient::make_channel() {
    grpc::ChannelArguments args;
    args.SetMaxReceiveMessageSize(static_cast<int>(options_.max_message_bytes));
    // A channel of its own: gRPC's shared subchannel pool would carry a failed connection's
    // backoff into this attempt; the reconnect pace is Backoff's.
    args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
    args.SetInt(GRPC_ARG_KEEPALIVE_TIME_MS, keepalive_ms);
    args.SetInt(GRPC_ARG_KEEPALIVE_TIMEOUT_MS, keepalive_timeout_ms);
    std::shared_ptr<grpc::ChannelCredentials> credentials;
    if (options_.tls) {
        // Read again for this connection, checked first: a bad file keeps the last good one.
        credentials = grpc::SslCredentials(tls_files_.current());
        if (!options_.tls_server_san.empty()) args.SetSslTargetNameOverride(options_.tls_server_san);
    } else {
        credentials = grpc::InsecureChannelCredentials();
    }
    return grpc::CreateCustomChannel(options_.server, credentials, args);
}

bool XdsClient::await_connected(grpc::Channel& channel) {
    const auto deadline = Clock::now() + options_.connect_timeout;
    while (!stopping()) {
        const auto slice = std::min(deadline, Clock::now() + stop_slice);
        if (channel.WaitForConnected(slice)) return true;
        if (Clock::now() >= deadline) return false;
    }
    return false;
}

DiscoveryRequest XdsClient::answer(AdsState& state, const ReceivedResponse& received) {
    const DiscoveryResponse& response = received.response;
    DiscoveryRequest reply;
    if (auto why = state.precheck(response)) {
        reply = state.reject(response, *why);
    } else if (auto count = sink_(response); !count) {
        reply = state.reject(response, count.error().detail);
    } else {
        // The sink returned once the version serves checks: only now is it ACKed.
        reply = state.accept(response);
        metrics_.count_accepted(response.version_info(), *count, now_s(),
                                std::chrono::steady_clock::now() - received.received);
        spdlog::info("xds: accepted version={} domains={}", log_value(response.version_info()), *count);
    }
    if (reply.has_error_detail()) {
        metrics_.count_rejected();
        spdlog::error("xds: refused version={} (NACK), the config in force (version={}) keeps serving: {}",
                      log_value(response.version_info()), log_value(state.accepted_version()),
                      reply.error_detail().message());
    }
    return reply;
}

void XdsClient::read_responses(grpc::ClientReaderWriterInterface<DiscoveryRequest, DiscoveryResponse>& stream,
                               ResponseQueue& queue) {
    DiscoveryResponse response;
    while (stream.Read(&response)) {
        if (auto superseded = queue.put({std::move(response), std::chrono::steady_clock::now()})) {
            metrics_.count_superseded();
            spdlog::info("xds: version={} superseded before it was applied: not applied, not answered",
                         log_value(*superseded));
        }
        response = DiscoveryResponse();
    }
    queue.close();
}

bool XdsClient::serve_stream(grpc::ClientContext& context,
                             grpc::ClientReaderWriterInterface<DiscoveryRequest, DiscoveryResponse>& stream, AdsState& state) {
    bool delivered = false;
    // Read on a thread of its own, so a version that arrives while one is applied is seen (and
    // one that arrives after it supersedes it) instead of queued unread behind it.
    ResponseQueue queue;
    std::thread reader([&] { read_responses(stream, queue); });
    bool written = true;
    while (written) {
        auto received = queue.take();
        if (!received) break;
        const DiscoveryRequest reply = answer(state, *received);
        delivered = delivered || !reply.has_error_detail();
        written = stream.Write(reply);
        queue.done();
    }
    if (!written) context.TryCancel();  // the stream is broken: the reader's Read ends too
    reader.join();
    return delivered;
}

bool XdsClient::run_stream(AdsState& state) {
    auto channel = make_channel();
    if (!await_connected(*channel)) {
        if (!stopping()) {
            spdlog::warn("xds: cannot reach the control plane {} within {}ms (tls={})", log_value(options_.server),
                         options_.connect_timeout.count(), options_.tls ? "on" : "off");
        }
        return false;
    }
    grpc::ClientContext context;
    for (const auto& [name, value] : options_.headers) context.AddMetadata(name, value);
    {
        std::lock_guard lock(mu_);
        if (stopping_) return false;
        context_ = &context;
    }
    auto stub = AggregatedDiscoveryService::NewStub(channel);
    auto stream = stub->StreamAggregatedResources(&context);
    metrics_.count_stream();
    bool delivered = false;
    if (stream->Write(state.open_stream())) {
        metrics_.set_connected(true);
        spdlog::info("xds: stream open to {} node={}", log_value(options_.server), log_value(options_.node_id));
        delivered = serve_stream(context, *stream, state);
    }
    metrics_.set_connected(false);
    const grpc::Status status = stream->Finish();
    {
        std::lock_guard lock(mu_);
        context_ = nullptr;
    }
    if (!stopping()) {
        spdlog::warn("xds: stream to {} ended: {} {}", log_value(options_.server), static_cast<int>(status.error_code()),
                     log_value(status.error_message()));
    }
    return delivered;
}

}  // namespace ratelimitd::xds
