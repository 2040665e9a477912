// PrometheusServer: the real prometheus binary, started with a one-target scrape config.
#include "support/prometheus.hpp"

#include "support/http_client.hpp"
#include "support/wait.hpp"

#include <fstream>
#include <stdexcept>

namespace ratelimitd::test {

namespace {

std::string write_config(unsigned short target_port, std::chrono::seconds interval, const std::string& dir) {
    const std::string path = dir + "/prometheus.yml";
    std::ofstream(path) << "global:\n  scrape_interval: " << interval.count() << "s\n"
                        << "  evaluation_interval: " << interval.count() << "s\n"
                        << "scrape_configs:\n  - job_name: ratelimitd\n    static_configs:\n"
                        << "      - targets: ['127.0.0.1:" << target_port << "']\n";
    return path;
}

}  // namespace

std::string url_encode(const std::string& text) {
    static const char* const digits = "0123456789ABCDEF";
    std::string out;
    for (unsigned char c : text) {
        const bool plain = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
                           c == '-' || c == '_' || c == '.' || c == '~';
        if (plain) {
            out += static_cast<char>(c);
        } else {
            out += '%';
            out += digits[c >> 4];
            out += digits[c & 0xf];
        }
    }
    return out;
}

PrometheusServer::PrometheusServer(unsigned short target_port, std::chrono::seconds scrape_interval)
    : port_(free_port()) {
    const std::string dir = scratch_dir() + "/prometheus-" + std::to_string(port_);
    const std::string config = write_config(target_port, scrape_interval, scratch_dir());
    child_ = Child({"prometheus", "--config.file=" + config, "--storage.tsdb.path=" + dir,
                    "--web.listen-address=127.0.0.1:" + std::to_string(port_), "--log.level=warn"},
                   dir + ".log");
    const bool ready = wait_until(
        [&] {
            if (!can_connect(port_)) return false;
            HttpClient c(port_);
            return c.get("/-/ready").status == 200;
        },
        std::chrono::seconds(30), std::chrono::milliseconds(100));
    if (!ready) throw std::runtime_error("prometheus did not become ready: " + child_.log());
}

nlohmann::json PrometheusServer::query(const std::string& promql) const {
    HttpClient c(port_);
    const auto res = c.get("/api/v1/query?query=" + url_encode(promql));
    auto body = nlohmann::json::parse(res.body, nullptr, false);
    if (body.is_discarded()) return {{"status", "error"}, {"error", "HTTP " + std::to_string(res.status) + ": " + res.body}};
    return body;
}

double PrometheusServer::scalar(const std::string& promql) const {
    const auto answer = query(promql);
    if (answer.value("status", "") != "success") return -1;
    const auto& result = answer["data"]["result"];
    if (!result.is_array() || result.empty()) return -1;
    return std::stod(result[0]["value"][1].get<std::string>());
}

}  // namespace ratelimitd::test
