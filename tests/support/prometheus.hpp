// A real Prometheus server for tests: scrapes one target on loopback, answers PromQL queries.
#pragma once

#include "support/processes.hpp"

#include <nlohmann/json.hpp>

#include <chrono>
#include <string>

namespace ratelimitd::test {

/// `prometheus` on a free loopback port with its own TSDB in the scratch directory, scraping
/// 127.0.0.1:`target_port`/metrics as job "ratelimitd" every `scrape_interval`. The constructor
/// returns once /-/ready answers 200.
class PrometheusServer {
public:
    PrometheusServer(unsigned short target_port, std::chrono::seconds scrape_interval);
    unsigned short port() const { return port_; }
    /// GET /api/v1/query?query=`promql` (instant, now): the whole JSON answer, "status" included.
    nlohmann::json query(const std::string& promql) const;
    /// The first sample of an instant query as a number, or -1 when the result is empty.
    double scalar(const std::string& promql) const;

private:
    unsigned short port_;
    Child child_;
};

/// `text` with every byte outside [A-Za-z0-9-_.~] as %XX, for a query string value.
std::string url_encode(const std::string& text);

}  // namespace ratelimitd::test
