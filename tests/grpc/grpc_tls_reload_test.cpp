// Issue 45 item 3: the gRPC listener's certificate files rewritten under a running server the
// way Kubernetes rewrites a mounted Secret (kubectl / an editor truncating and writing in
// place; kubelet swapping the ..data symlink to a new directory), through the bad states an
// operator meets: an empty key, a half-written certificate, a key that does not match, the
// files deleted, then a good new pair. The process never exits, every new connection during
// the bad states completes its handshake with the old pair and gets its answer from a real
// gRPC call, each refusal is counted on /metrics, and the new pair is served within the
// reload interval (plus the second gRPC takes to read the checked copy).
#include "grpc/grpc_tls_certs.hpp"
#include "grpc/grpc_tls_server.hpp"
#include "support/http_client.hpp"
#include "support/metrics_text.hpp"
#include "support/processes.hpp"
#include "support/wait.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

namespace ratelimitd::test::grpc_tls_reload_test {
namespace {

using namespace std::chrono_literals;
namespace fs = std::filesystem;

// A Secret's files by name; nullopt: the key is gone from the Secret (the file is deleted).
using SecretFiles = std::map<std::string, std::optional<std::string>>;

// kubectl cp, an editor, `: > tls.key`: each file opened with O_TRUNC and written where it is,
// so a reader can find it empty or half written.
class InPlaceSecret {
public:
    explicit InPlaceSecret(std::string dir) : dir_(std::move(dir)) { fs::create_directories(dir_); }
    std::string path(const std::string& name) const { return dir_ + "/" + name; }
    void write(const SecretFiles& files) const {
        for (const auto& [name, content] : files) {
            if (content) std::ofstream(path(name), std::ios::trunc) << *content;
            else fs::remove(path(name));
        }
    }

private:
    std::string dir_;
};

// kubelet's atomic writer: the files in a new timestamped directory, ..data (a symlink to it)
// replaced by renaming a new symlink over it, and each name a symlink to ..data/name.
class KubeletSecret {
public:
    explicit KubeletSecret(std::string dir) : dir_(std::move(dir)) { fs::create_directories(dir_); }
    std::string path(const std::string& name) const { return dir_ + "/" + name; }
    void write(const SecretFiles& files) {
        const auto version = "..2026_12_06_01_00_00." + std::to_string(++versions_);
        fs::create_directory(dir_ + "/" + version);
        for (const auto& [name, content] : files) {
            if (content) std::ofstream(dir_ + "/" + version + "/" + name) << *content;
            if (!fs::is_symlink(path(name))) fs::create_symlink("..data/" + name, path(name));
        }
        fs::create_symlink(version, dir_ + "/..data_tmp");
        fs::rename(dir_ + "/..data_tmp", dir_ + "/..data");
        if (!previous_.empty()) fs::remove_all(dir_ + "/" + previous_);
        previous_ = version;
    }

private:
    std::string dir_;
    std::string previous_;
    int versions_ = 0;
};

double reloads(const TlsServer& server, const std::string& outcome) {
    HttpClient http(server.http_port);
    return sample(http.get("/metrics").body, "ratelimitd_tls_reload_total{outcome=\"" + outcome + "\"}");
}

// Every new connection over `window` completes its handshake and its call is answered, and the
// process stays up. A bad file reaches gRPC's own watcher within a second, and it aborts on an
// empty key or fails every handshake on a bad pair at once, so a window of two reload
// intervals (1 s each here) and a tick shows either; it ends early on the first failure.
::testing::AssertionResult served_throughout(TlsServer& server, const std::string& ca, const PemPair* client,
                                             std::chrono::milliseconds window) {
    const auto until = std::chrono::steady_clock::now() + window;
    int calls = 0;
    do {
        const auto status = TlsClient(server.port, ca, client).call();
        ++calls;
        if (!status.ok()) {
            return ::testing::AssertionFailure() << "call " << calls << " refused: " << status.error_code() << " "
                                                 << status.error_message() << " (process running: "
                                                 << server.child.running() << ")";
        }
    } while (std::chrono::steady_clock::now() < until);
    if (!server.child.running()) return ::testing::AssertionFailure() << "the process exited";
    return ::testing::AssertionSuccess() << calls << " calls served";
}

// No line of a key's PEM body shows in the log.
void expect_no_key_material(const std::string& log, const std::string& key_pem) {
    std::istringstream key(key_pem);
    for (std::string line; std::getline(key, line);) {
        if (line.size() > 20 && line.find("-----") == std::string::npos) {
            EXPECT_EQ(log.find(line), std::string::npos);
        }
    }
}

struct BadStep {
    const char* what;
    SecretFiles files;
    std::string logged;  // what the refusal names
};

// The operator's bad states, each followed by the good new pair from other_server().
template <class Secret>
void bad_files_never_cost_a_connection(Secret& secret, const GrpcTlsCerts& certs) {
    const auto cert = read(certs.server().cert), key = read(certs.server().key);
    secret.write({{"tls.crt", cert}, {"tls.key", key}});
    TlsServer server({"--grpc-tls", "on", "--grpc-tls-cert", secret.path("tls.crt"), "--grpc-tls-key",
                      secret.path("tls.key"), "--grpc-tls-reload-interval", "1s"});
    ASSERT_TRUE(TlsClient(server.port, certs.ca().cert).call().ok()) << server.child.log();
    const std::vector<BadStep> steps{
        {"an empty key", {{"tls.crt", cert}, {"tls.key", ""}}, secret.path("tls.key") + " is empty"},
        {"a half-written certificate", {{"tls.crt", cert.substr(0, 300)}, {"tls.key", key}},
         secret.path("tls.crt") + " holds"},
        {"a key that does not match", {{"tls.crt", cert}, {"tls.key", read(certs.other_server().key)}},
         secret.path("tls.key") + " does not match"},
        {"deleted files", {{"tls.crt", std::nullopt}, {"tls.key", std::nullopt}},
         "cannot read " + secret.path("tls.crt") + ": No such file or directory"},
    };
    double refused = 0;
    for (const auto& step : steps) {
        secret.write(step.files);
        EXPECT_TRUE(served_throughout(server, certs.ca().cert, nullptr, 2500ms)) << step.what << "\n"
                                                                                 << server.child.log();
        ASSERT_TRUE(server.child.running()) << step.what << "\n" << server.child.log();
        EXPECT_TRUE(wait_until([&] { return reloads(server, "refused") > refused; }, 10s, 100ms)) << step.what;
        refused = reloads(server, "refused");
        EXPECT_NE(server.child.log().find(step.logged), std::string::npos) << step.what << "\n" << server.child.log();
    }
    secret.write({{"tls.crt", read(certs.other_server().cert)}, {"tls.key", read(certs.other_server().key)}});
    // A client trusting only the new pair's CA is served once it is in force.
    EXPECT_TRUE(wait_until([&] { return TlsClient(server.port, certs.other_ca().cert).call().ok(); }, 10s, 100ms))
        << server.child.log();
    EXPECT_FALSE(TlsClient(server.port, certs.ca().cert).call().ok()) << "the old pair is no longer served";
    EXPECT_GE(reloads(server, "applied"), 1);
    EXPECT_GE(reloads(server, "refused"), 4);
    EXPECT_TRUE(server.child.running());
    expect_no_key_material(server.child.log(), key);
    expect_no_key_material(server.child.log(), read(certs.other_server().key));
}

TEST(GrpcTlsReload, BadFilesWrittenInPlaceNeverReplaceTheLastGoodPair) {
    GrpcTlsCerts certs;
    InPlaceSecret secret(certs.dir() + "/in-place");
    bad_files_never_cost_a_connection(secret, certs);
}

TEST(GrpcTlsReload, BadFilesSwappedInByKubeletNeverReplaceTheLastGoodPair) {
    GrpcTlsCerts certs;
    KubeletSecret secret(certs.dir() + "/kubelet");
    bad_files_never_cost_a_connection(secret, certs);
}

TEST(GrpcTlsReload, ABadClientCaNeverReplacesTheLastGoodOne) {
    GrpcTlsCerts certs;
    InPlaceSecret secret(certs.dir() + "/client-ca");
    const auto ca = read(certs.ca().cert);
    secret.write({{"ca.crt", ca}});
    TlsServer server({"--grpc-tls", "on", "--grpc-tls-cert", certs.server().cert, "--grpc-tls-key",
                      certs.server().key, "--grpc-tls-client-ca", secret.path("ca.crt"), "--grpc-tls-reload-interval",
                      "1s"});
    ASSERT_TRUE(TlsClient(server.port, certs.ca().cert, &certs.client()).call().ok()) << server.child.log();
    const std::vector<SecretFiles> steps{{{"ca.crt", ""}}, {{"ca.crt", ca.substr(0, 300)}}, {{"ca.crt", std::nullopt}}};
    double refused = 0;
    for (const auto& files : steps) {
        secret.write(files);
        EXPECT_TRUE(served_throughout(server, certs.ca().cert, &certs.client(), 2500ms)) << server.child.log();
        EXPECT_TRUE(wait_until([&] { return reloads(server, "refused") > refused; }, 10s, 100ms));
        refused = reloads(server, "refused");
    }
    secret.write({{"ca.crt", read(certs.other_ca().cert)}});
    EXPECT_TRUE(wait_until([&] { return TlsClient(server.port, certs.ca().cert, &certs.other_ca_client()).call().ok(); },
                           10s, 100ms))
        << server.child.log();
    EXPECT_FALSE(TlsClient(server.port, certs.ca().cert, &certs.client()).call().ok()) << "the old CA is replaced";
    EXPECT_GE(reloads(server, "applied"), 1);
    EXPECT_TRUE(server.child.running());
}

}  // namespace
}  // namespace ratelimitd::test::grpc_tls_reload_test
