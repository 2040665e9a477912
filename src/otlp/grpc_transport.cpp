// OTLP/gRPC: TraceService/Export on one channel kept for the process (gRPC reconnects it), with
// the batch's deadline; TLS with the system's roots unless the target is insecure.
#include "ratelimitd/otlp/transport.hpp"

#include "opentelemetry/proto/collector/trace/v1/trace_service.grpc.pb.h"

#include <grpcpp/grpcpp.h>

#include <cctype>

namespace ratelimitd::otlp {
namespace {

namespace collector = opentelemetry::proto::collector::trace::v1;

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
    explicit GrpcTransport(const ExporterTarget& target) : headers_(target.headers) {
        const auto credentials = target.tls ? grpc::SslCredentials(grpc::SslCredentialsOptions{})
                                            : grpc::InsecureChannelCredentials();
        const std::string address = target.host.find(':') != std::string::npos ? "[" + target.host + "]:" + target.port
                                                                                : target.host + ":" + target.port;
        stub_ = collector::TraceService::NewStub(grpc::CreateChannel(address, credentials));
    }

    bool send(const Request& request, std::chrono::steady_clock::time_point deadline, bool& permanent) override {
        grpc::ClientContext context;
        context.set_deadline(std::chrono::system_clock::now() + (deadline - std::chrono::steady_clock::now()));
        // gRPC metadata keys are lower case.
        for (const auto& [key, value] : headers_) {
            std::string lower = key;
            for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
            context.AddMetadata(lower, value);
        }
        collector::ExportTraceServiceResponse response;
        const grpc::Status status = stub_->Export(&context, request, &response);
        if (status.ok()) return true;
        permanent = !retryable(status.error_code());
        return false;
    }

private:
    std::vector<std::pair<std::string, std::string>> headers_;
    std::unique_ptr<collector::TraceService::Stub> stub_;
};

}  // namespace

std::unique_ptr<Transport> make_grpc_transport(const ExporterTarget& target) {
    return std::make_unique<GrpcTransport>(target);
}

}  // namespace ratelimitd::otlp
