// OtlpGrpcReceiver: the synchronous gRPC service; requests are decoded by gRPC with the generated
// message classes, so a body that does not match the schema fails the call (and the test).
#include "support/otlp_grpc_receiver.hpp"

#include "opentelemetry/proto/collector/trace/v1/trace_service.grpc.pb.h"

#include <grpcpp/grpcpp.h>

#include <stdexcept>

namespace ratelimitd::test {

namespace collector = opentelemetry::proto::collector::trace::v1;

class OtlpGrpcReceiver::Service final : public collector::TraceService::Service {
public:
    grpc::Status Export(grpc::ServerContext* context, const collector::ExportTraceServiceRequest* request,
                        collector::ExportTraceServiceResponse* /*response*/) override {
        std::map<std::string, std::string> metadata;
        for (const auto& [key, value] : context->client_metadata()) {
            const std::string name(key.data(), key.size());
            if (name.starts_with("grpc-") || name.starts_with(":")) continue;
            metadata[name] = std::string(value.data(), value.size());
        }
        const std::lock_guard lock(mutex);
        requests.push_back(*request);
        metadatas.push_back(std::move(metadata));
        return grpc::Status::OK;
    }

    mutable std::mutex mutex;
    std::vector<collector::ExportTraceServiceRequest> requests;
    std::vector<std::map<std::string, std::string>> metadatas;
};

OtlpGrpcReceiver::OtlpGrpcReceiver() : service_(std::make_unique<Service>()) {
    grpc::ServerBuilder builder;
    builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), &port_);
    builder.RegisterService(service_.get());
    server_ = builder.BuildAndStart();
    if (server_ == nullptr || port_ == 0) throw std::runtime_error("the OTLP/gRPC receiver did not start");
}

OtlpGrpcReceiver::~OtlpGrpcReceiver() { server_->Shutdown(); }

std::vector<ReceivedSpan> OtlpGrpcReceiver::spans() const {
    std::vector<ReceivedSpan> out;
    const std::lock_guard lock(service_->mutex);
    for (const auto& request : service_->requests) {
        for (const auto& resource_spans : request.resource_spans()) {
            std::map<std::string, std::string> resource;
            for (const auto& kv : resource_spans.resource().attributes()) resource[kv.key()] = kv.value().string_value();
            for (const auto& scope : resource_spans.scope_spans()) {
                for (const auto& span : scope.spans()) out.push_back({span, resource});
            }
        }
    }
    return out;
}

std::vector<std::map<std::string, std::string>> OtlpGrpcReceiver::metadata() const {
    const std::lock_guard lock(service_->mutex);
    return service_->metadatas;
}

std::size_t OtlpGrpcReceiver::calls() const {
    const std::lock_guard lock(service_->mutex);
    return service_->requests.size();
}

}  // namespace ratelimitd::test
