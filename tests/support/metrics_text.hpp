// Reading one value out of a Prometheus text exposition (GET /metrics).
#pragma once

#include <sstream>
#include <string>

namespace ratelimitd::test {

/// The value of one sample line of the exposition ("name{labels} value"), or -1.
inline double sample(const std::string& exposition, const std::string& series) {
    std::istringstream lines(exposition);
    for (std::string line; std::getline(lines, line);) {
        if (line.rfind(series + " ", 0) == 0) return std::stod(line.substr(series.size() + 1));
    }
    return -1;
}

}  // namespace ratelimitd::test
