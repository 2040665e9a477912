// OTLP/gRPC: TraceService/Export on one channel kept for the process (gRPC reconnects it), with
// the batch's deadline; TLS with the system's roots unless the target is insecure. The request is
// the encoder's bytes (its head and the queue's chunk), sent as they are through gRPC's generic
// stub (no message is built, no byte copied into gRPC's own slices).
#include "ratelimitd/otlp/transport.hpp"

#include <grpcpp/generic/generic_stub.h>
#include <grpcpp/grpcpp.h>

#include <cctype>

namespace ratelimitd::otlp {
namespace {

// TraceService/Export's full method name (trace_service.proto's package and service).
constexpr const char* export_method = "/opentelemetry.proto.collector.trace.v1.TraceService/Export";

// The OTLP/gRPC spec's retryable codes; any other failure is permanent for the batch.
bool retryable(grpc::StatusCode code) {
    switch (code) {
    case grpc::StatusCode::CANCELLED:
    case grpc::StatusCode::DEADLINE_EXCEEDED:
    case grpc::StatusCode::RESOURCE_EXHAUSTED:
    case grpc::StatusCode::ABORTED:
    case grpc::StatusCode::OUT_OF_RANGE:
    case grpc::StatusCode::UNAVAILABLE:
    case grpc::StatusCode::DATA_LOSS:
        return true;
    default:
        return false;
    }
}

class GrpcTransport final : public Transport {
public:
    explicit GrpcTransport(const ExporterTarget& target)
        : headers_(target.headers), stub_(grpc::CreateChannel(address_of(target), credentials_of(target))) {}

    ~GrpcTransport() override {
        queue_.Shutdown();
        void* tag = nullptr;
        bool ok = false;
        while (queue_.Next(&tag, &ok)) {
        }
    }

    bool send(std::string_view head, std::string_view spans, std::chrono::steady_clock::time_point deadline,
              bool& permanent) override {
        grpc::ClientContext context;
        context.set_deadline(std::chrono::system_clock::now() + (deadline - std::chrono::steady_clock::now()));
        // gRPC metadata keys are lower case.
        for (const auto& [key, value] : headers_) {
            std::string lower = key;
            for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
            context.AddMetadata(lower, value);
        }
        // Slices over the caller's bytes, not copies: the call ends (Next below) before send does.
        grpc::Slice slices[] = {grpc::Slice(head.data(), head.size(), grpc::Slice::STATIC_SLICE),
                                grpc::Slice(spans.data(), spans.size(), grpc::Slice::STATIC_SLICE)};
        const grpc::ByteBuffer request(slices, 2);
        grpc::ByteBuffer response;
        grpc::Status status;
        auto call = stub_.PrepareUnaryCall(&context, export_method, request, &queue_);
        call->StartCall();
        call->Finish(&response, &status, this);
        // The one call in flight on this queue: its completion is the next event (the context's
        // deadline bounds the wait).
        void* tag = nullptr;
        bool ok = false;
        if (!queue_.Next(&tag, &ok)) return false;
        if (status.ok()) return true;
        permanent = !retryable(status.error_code());
        return false;
    }

private:
    static std::string address_of(const ExporterTarget& target) {
        return target.host.find(':') != std::string::npos ? "[" + target.host + "]:" + target.port
                                                          : target.host + ":" + target.port;
    }
    static std::shared_ptr<grpc::ChannelCredentials> credentials_of(const ExporterTarget& target) {
        return target.tls ? grpc::SslCredentials(grpc::SslCredentialsOptions{}) : grpc::InsecureChannelCredentials();
    }

    std::vector<std::pair<std::string, std::string>> headers_;
    grpc::GenericStub stub_;
    grpc::CompletionQueue queue_;
};

}  // namespace

std::unique_ptr<Transport> make_grpc_transport(const ExporterTarget& target) {
    return std::make_unique<GrpcTransport>(target);
}

}  // namespace ratelimitd::otlp
