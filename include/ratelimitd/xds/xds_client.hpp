// The xDS config source's I/O: one ADS stream to the control plane on a thread of its own,
// driving AdsState, reconnecting with Backoff, handing each accepted config to its caller.
#pragma once

#include "ratelimitd/core/error.hpp"
#include "ratelimitd/xds/ads_state.hpp"
#include "ratelimitd/xds/backoff.hpp"
#include "ratelimitd/xds/response_queue.hpp"
#include "ratelimitd/xds/xds_metrics.hpp"
#include "ratelimitd/xds/xds_tls_files.hpp"

#include <grpcpp/support/sync_stream.h>

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace grpc {
class Channel;
class ClientContext;
}  // namespace grpc

namespace ratelimitd::xds {

struct XdsClientOptions {
    std::string server;  ///< HOST:PORT
    std::string node_id = "default";
    std::vector<std::pair<std::string, std::string>> node_metadata;  ///< Node.metadata, string values
    std::string user_agent_version;                                  ///< Node.user_agent_version
    bool tls = false;
    std::string tls_ca_file;      ///< empty: gRPC's default roots
    std::string tls_cert_file;    ///< with tls_key_file: the client certificate shown
    std::string tls_key_file;
    std::string tls_server_san;   ///< empty: the server's host
    std::chrono::milliseconds connect_timeout{3'000};  ///< one connection attempt
    BackoffOptions backoff;
    std::size_t max_message_bytes = 4 * 1024 * 1024;
    std::vector<std::pair<std::string, std::string>> headers;  ///< gRPC metadata on the stream
};

/// Called on the client's thread with a response of the right type, before it is answered:
/// decodes and applies it (xds::decode_domains, then the swap). Returns the number of domains
/// once they serve checks (the ACK follows), or why the response is refused (the NACK's
/// error_detail). Must not throw.
using ConfigSink = std::function<result<std::size_t>(const DiscoveryResponse& response)>;

/// Opens the stream, answers each response (ACK after `sink` put it in force, NACK naming what
/// was wrong; a response that arrives while one is applied waits, and a newer one replaces it
/// unanswered: ResponseQueue), and when the stream ends (control plane gone, refused message, oversized message)
/// waits the backoff and opens a new one, until stop(). The last config accepted stays in
/// force meanwhile: nothing is handed to the sink until a new one is accepted. The TLS files
/// are read again on each connection attempt (a renewed certificate needs no restart); a
/// changed file that fails the checks is refused and the last good one used (XdsTlsFiles).
/// @par Thread Safety
/// start() and stop() from one thread; the sink runs on the client's.
class XdsClient {
public:
    XdsClient(XdsClientOptions options, ConfigSink sink, XdsMetrics& metrics);
    ~XdsClient();
    XdsClient(const XdsClient&) = delete;
    XdsClient& operator=(const XdsClient&) = delete;

    void start();
    /// Cancels the stream and joins the thread; returns within about 100 ms.
    void stop();

private:
    void run();
    /// One connection and stream until it ends; true when it delivered an accepted config.
    bool run_stream(AdsState& state);
    /// The open stream's responses answered until it ends; true when one was accepted.
    bool serve_stream(grpc::ClientContext& context,
                      grpc::ClientReaderWriterInterface<DiscoveryRequest, DiscoveryResponse>& stream, AdsState& state);
    /// The reading thread: every response into `queue`, superseded ones counted.
    void read_responses(grpc::ClientReaderWriterInterface<DiscoveryRequest, DiscoveryResponse>& stream, ResponseQueue& queue);
    /// The ACK once the sink put the response in force, or the NACK naming why not.
    DiscoveryRequest answer(AdsState& state, const ReceivedResponse& received);
    std::shared_ptr<grpc::Channel> make_channel();
    /// Waits for the channel to connect, in short slices so stop() is not kept waiting.
    bool await_connected(grpc::Channel& channel);
    /// Sleeps up to `wait`; false when stop() was called.
    bool pause(std::chrono::milliseconds wait);
    [[nodiscard]] bool stopping() const;

    XdsClientOptions options_;
    ConfigSink sink_;
    XdsMetrics& metrics_;
    XdsTlsFiles tls_files_;  // used on the client's thread only
    mutable std::mutex mu_;  // stopping_ and context_
    std::condition_variable wake_;
    bool stopping_ = false;
    grpc::ClientContext* context_ = nullptr;  // the stream in progress, cancelled by stop()
    std::thread thread_;
};

/// The Node the client names itself with: id, metadata (string values), user agent
/// "ratelimitd" and its version.
envoy::config::core::v3::Node make_node(const XdsClientOptions& options);

}  // namespace ratelimitd::xds
