// ERL mode names what it ignores: ERL-looking variables it does not read are warned by name,
// with the known name a likely misspelling meant; other variables are left alone.
#include "ratelimitd/erl/unknown_variables.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace ratelimitd::erl {
namespace {

TEST(UnknownVariables, AMisspellingNamesTheVariableItMeant) {
    EXPECT_EQ(closest_known_variable("RUNTIME_IGNORE_DOTFILES"), "RUNTIME_IGNOREDOTFILES");
    EXPECT_EQ(closest_known_variable("REDIS_SOCKET_TPYE"), "REDIS_SOCKET_TYPE");
    EXPECT_EQ(closest_known_variable("GRPC_PROT"), "GRPC_PORT");
    EXPECT_EQ(closest_known_variable("OTEL_EXPORTER_OTLP_ENDPOINT"), "") << "nothing close";
}

TEST(UnknownVariables, OnlyErlLookingUnknownNamesAreWarnedInTheirOrder) {
    const std::vector<std::string> env{"PATH",
                                       "HOME",
                                       "RUNTIME_IGNORE_DOTFILES",
                                       "RUNTIME_ROOT",
                                       "REDIS_ERROR_ANSWER",
                                       "GRPC_SERVER_TLS_CA_CERT",
                                       "OTEL_EXPORTER_OTLP_ENDPOINT",
                                       "OTEL_METRICS_EXPORTER",
                                       "RATELIMITD_LISTEN",
                                       "KUBERNETES_SERVICE_HOST"};
    const std::vector<std::string> expected{
        "RUNTIME_IGNORE_DOTFILES is not read in ERL mode; did you mean RUNTIME_IGNOREDOTFILES?",
        "GRPC_SERVER_TLS_CA_CERT is not read in ERL mode",
        // The trace settings read OTEL_EXPORTER_OTLP_ENDPOINT (docs/tracing.md); metrics are not exported.
        "OTEL_METRICS_EXPORTER is not read in ERL mode"};
    EXPECT_EQ(unknown_variable_warnings(env), expected);
}

}  // namespace
}  // namespace ratelimitd::erl
