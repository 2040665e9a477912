// Certificates for the gRPC TLS tests, made per test with the openssl command into the
// scratch directory: two CAs, server certificates from each, and client certificates that
// carry or lack the SAN the server asks for. Header only: the globs build *_test.cpp.
#pragma once

#include "support/processes.hpp"

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <stdexcept>
#include <string>

#include <unistd.h>

namespace ratelimitd::test {

struct PemPair {
    std::string cert;
    std::string key;
};

class GrpcTlsCerts {
public:
    GrpcTlsCerts() {
        static std::atomic<int> n{0};
        dir_ = scratch_dir() + "/grpc-tls-" + std::to_string(::getpid()) + "-" + std::to_string(n++);
        std::filesystem::create_directories(dir_);
        ca_ = self_signed("ca");
        other_ca_ = self_signed("other-ca");
        server_ = issue("server", ca_, "serverAuth", "DNS:localhost,IP:127.0.0.1");
        other_server_ = issue("other-server", other_ca_, "serverAuth", "DNS:localhost,IP:127.0.0.1");
        client_ = issue("client", ca_, "clientAuth", "DNS:envoy.test,URI:spiffe://test/envoy");
        wrong_san_client_ = issue("wrong-san-client", ca_, "clientAuth", "DNS:other.test");
        other_ca_client_ = issue("other-ca-client", other_ca_, "clientAuth", "DNS:envoy.test");
    }

    const std::string& dir() const { return dir_; }
    const PemPair& ca() const { return ca_; }
    const PemPair& other_ca() const { return other_ca_; }
    const PemPair& server() const { return server_; }              ///< from ca(): localhost, 127.0.0.1
    const PemPair& other_server() const { return other_server_; }  ///< the same names, from other_ca()
    const PemPair& client() const { return client_; }              ///< DNS:envoy.test, URI:spiffe://test/envoy
    const PemPair& wrong_san_client() const { return wrong_san_client_; }  ///< DNS:other.test
    const PemPair& other_ca_client() const { return other_ca_client_; }    ///< DNS:envoy.test, from other_ca()

private:
    static void run(const std::string& command) {
        if (std::system((command + " >/dev/null 2>&1").c_str()) != 0) {
            throw std::runtime_error("certificate generation failed: " + command);
        }
    }
    // EC keys: generated in milliseconds, unlike RSA.
    static constexpr const char* new_key = "-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 3";

    PemPair self_signed(const std::string& name) const {
        PemPair out{dir_ + "/" + name + ".crt", dir_ + "/" + name + ".key"};
        run(std::string("openssl req -x509 ") + new_key + " -subj /CN=" + name + " -keyout " + out.key + " -out " +
            out.cert);
        return out;
    }

    PemPair issue(const std::string& name, const PemPair& ca, const std::string& usage, const std::string& sans) const {
        PemPair out{dir_ + "/" + name + ".crt", dir_ + "/" + name + ".key"};
        run(std::string("openssl req -x509 ") + new_key + " -subj /CN=" + name + " -CA " + ca.cert + " -CAkey " +
            ca.key + " -addext basicConstraints=CA:FALSE -addext extendedKeyUsage=" + usage +
            " -addext subjectAltName=" + sans + " -keyout " + out.key + " -out " + out.cert);
        return out;
    }

    std::string dir_;
    PemPair ca_, other_ca_, server_, other_server_, client_, wrong_san_client_, other_ca_client_;
};

}  // namespace ratelimitd::test
