// TlsCerts: openssl req / ca runs into a scratch directory.
#include "support/tls_certs.hpp"

#include "support/processes.hpp"

#include <atomic>
#include <cstdlib>
#include <fstream>
#include <stdexcept>

#include <sys/stat.h>

namespace ratelimitd::test {

namespace {

void run(const std::string& command) {
    if (std::system((command + " >/dev/null 2>&1").c_str()) != 0) {
        throw std::runtime_error("certificate generation failed: " + command);
    }
}

void write(const std::string& path, const std::string& text) { std::ofstream(path) << text; }

// EC keys: generated in milliseconds, unlike RSA.
const char* const new_key = "-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes";

CertFiles make_ca(const std::string& dir, const std::string& name) {
    CertFiles ca{dir + "/" + name + ".crt", dir + "/" + name + ".key"};
    run("openssl req -x509 " + std::string(new_key) + " -days 3 -subj /CN=" + name + " -keyout " + ca.key +
        " -out " + ca.cert);
    return ca;
}

}  // namespace

TlsCerts::TlsCerts() {
    static std::atomic<int> n{0};
    dir_ = scratch_dir() + "/tls-" + std::to_string(n++);
    ::mkdir(dir_.c_str(), 0700);
    ca_ = make_ca(dir_, "ratelimitd-test-ca");
    other_ca_ = make_ca(dir_, "ratelimitd-other-ca");
    // `openssl ca` takes any validity dates, so an expired certificate is made directly.
    write(dir_ + "/index.txt", "");
    write(dir_ + "/serial", "1000\n");
    write(dir_ + "/ca.cnf",
          "[ca]\ndefault_ca = test\n[test]\ndir = " + dir_ + "\ndatabase = $dir/index.txt\nserial = $dir/serial\n"
          "new_certs_dir = $dir\ncertificate = " + ca_.cert + "\nprivate_key = " + ca_.key +
          "\ndefault_md = sha256\npolicy = any\nunique_subject = no\ncopy_extensions = none\n"
          "[any]\ncommonName = supplied\n"
          // clientAuth too: cluster nodes and replicas show their server certificate as clients.
          "[server]\nbasicConstraints = CA:FALSE\nextendedKeyUsage = serverAuth, clientAuth\n"
          "subjectAltName = DNS:localhost,IP:127.0.0.1\n"
          "[named]\nbasicConstraints = CA:FALSE\nextendedKeyUsage = serverAuth\nsubjectAltName = DNS:redis.test\n"
          "[client]\nbasicConstraints = CA:FALSE\nextendedKeyUsage = clientAuth\n");
    const std::string valid = "-days 3";
    server_ = issue("server", "/CN=localhost", "server", valid);
    expired_ = issue("expired", "/CN=localhost", "server", "-startdate 20200101000000Z -enddate 20200102000000Z");
    named_ = issue("named", "/CN=redis.test", "named", valid);
    client_ = issue("client", "/CN=ratelimitd", "client", valid);
}

CertFiles TlsCerts::issue(const std::string& name, const std::string& subject, const std::string& extensions,
                          const std::string& dates) const {
    CertFiles out{dir_ + "/" + name + ".crt", dir_ + "/" + name + ".key"};
    const std::string csr = dir_ + "/" + name + ".csr";
    run("openssl req -new " + std::string(new_key) + " -subj " + subject + " -keyout " + out.key + " -out " + csr);
    run("openssl ca -batch -notext -config " + dir_ + "/ca.cnf -extensions " + extensions + " " + dates + " -in " +
        csr + " -out " + out.cert);
    return out;
}

std::vector<std::string> TlsCerts::redis_args(unsigned short tls_port, const CertFiles& cert,
                                              bool require_client_cert) const {
    return {"--tls-port", std::to_string(tls_port), "--tls-cert-file", cert.cert, "--tls-key-file", cert.key,
            "--tls-ca-cert-file", ca_.cert, "--tls-auth-clients", require_client_cert ? "yes" : "no"};
}

}  // namespace ratelimitd::test
