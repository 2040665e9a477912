// Starts nginx -p <scratch> -c <conf> on a limit_req config of its own plus a test upstream.
#include "support/nginx_limit_req.hpp"
#include "support/wait.hpp"

#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace ratelimitd::test {
namespace {

std::string limit_req_config(const std::string& dir, unsigned short port, unsigned short upstream_port,
                             const std::string& rate, const std::string& limit_req_args) {
    std::ostringstream conf;
    if (::geteuid() == 0) conf << "user root root;\n";  // workers must read the scratch dir
    conf << "worker_processes 1;\n"
         << "events { worker_connections 1024; }\n"
         << "http {\n"
         << "    access_log off;\n"
         << "    client_body_temp_path " << dir << "/tmp/body;\n"
         << "    proxy_temp_path " << dir << "/tmp/proxy;\n"
         << "    fastcgi_temp_path " << dir << "/tmp/fastcgi;\n"
         << "    uwsgi_temp_path " << dir << "/tmp/uwsgi;\n"
         << "    scgi_temp_path " << dir << "/tmp/scgi;\n"
         << "    limit_req_zone $binary_remote_addr zone=z:1m rate=" << rate << ";\n"
         << "    server {\n"
         << "        listen 127.0.0.1:" << port << ";\n"
         << "        location / {\n"
         << "            limit_req zone=z " << limit_req_args << ";\n"
         << "            limit_req_status 429;\n"
         << "            proxy_pass http://127.0.0.1:" << upstream_port << ";\n"
         << "        }\n"
         << "    }\n"
         << "    server {\n"
         << "        listen 127.0.0.1:" << upstream_port << ";\n"
         << "        access_log " << dir << "/upstream.log;\n"
         << "        location / { default_type text/plain; return 200 \"upstream ok\\n\"; }\n"
         << "    }\n"
         << "}\n";
    return conf.str();
}

}  // namespace

NginxLimitReq::NginxLimitReq(const std::string& rate, const std::string& limit_req_args)
    : port_(free_port()), upstream_port_(free_port()) {
    static std::atomic<int> n{0};
    dir_ = scratch_dir() + "/nginx-limit-req-" + std::to_string(n++);
    ::mkdir(dir_.c_str(), 0755);
    ::mkdir((dir_ + "/tmp").c_str(), 0755);
    const std::string main_conf = dir_ + "/nginx.conf";
    std::ofstream(main_conf) << limit_req_config(dir_, port_, upstream_port_, rate, limit_req_args);

    const std::string binary = ::access("/usr/sbin/nginx", X_OK) == 0 ? "/usr/sbin/nginx" : "nginx";
    // Delays are logged one level below refusals (error): warn keeps both.
    child_ = Child({binary, "-p", dir_ + "/", "-e", dir_ + "/error.log", "-c", main_conf, "-g",
                    "daemon off; pid " + dir_ + "/nginx.pid; error_log " + dir_ + "/error.log warn;"},
                   dir_ + "/nginx.log");
    if (wait_until([&] { return (can_connect(port_) && can_connect(upstream_port_)) || !child_.running(); },
                   process_start_bound, std::chrono::milliseconds(10)) &&
        child_.running()) {
        return;
    }
    const std::string log = child_.log();
    child_.signal(SIGTERM);
    child_.wait(std::chrono::seconds(5));
    throw std::runtime_error("nginx (limit_req) did not start: " + log);
}

NginxLimitReq::~NginxLimitReq() {
    child_.signal(SIGTERM);
    child_.wait(std::chrono::seconds(5));
}

int NginxLimitReq::upstream_requests() const {
    std::ifstream in(dir_ + "/upstream.log");
    int lines = 0;
    for (std::string line; std::getline(in, line);) ++lines;
    return lines;
}

std::vector<std::string> NginxLimitReq::error_lines_with(const std::string& marker) const {
    std::ifstream in(dir_ + "/error.log");
    std::vector<std::string> lines;
    for (std::string line; std::getline(in, line);) {
        if (line.find(marker) != std::string::npos) lines.push_back(line);
    }
    return lines;
}

std::vector<double> NginxLimitReq::delayed_excess() const {
    const std::string marker = "delaying request, excess: ";
    std::vector<double> excess;
    for (const auto& line : error_lines_with(marker)) {
        excess.push_back(std::stod(line.substr(line.find(marker) + marker.size())));
    }
    return excess;
}

int NginxLimitReq::refused_requests() const {
    return static_cast<int>(error_lines_with("limiting requests, excess: ").size());
}

}  // namespace ratelimitd::test
