// Starts nginx -p <scratch> -c <conf> on the rendered shipped config plus a test upstream.
#include "support/nginx.hpp"
#include "support/wait.hpp"

#include <arpa/inet.h>
#include <signal.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>

namespace ratelimitd::test {

std::string render_nginx_config(const std::map<std::string, std::string>& vars) {
    std::ifstream in(std::string(RATELIMITD_SOURCE_DIR) + "/config/nginx/ratelimitd.conf");
    if (!in) throw std::runtime_error("cannot read config/nginx/ratelimitd.conf");
    std::stringstream ss;
    ss << in.rdbuf();
    std::string text = ss.str();
    for (const auto& [name, value] : vars) {
        const std::string placeholder = "${" + name + "}";
        for (auto at = text.find(placeholder); at != std::string::npos; at = text.find(placeholder, at + value.size())) {
            text.replace(at, placeholder.size(), value);
        }
    }
    if (const auto left = text.find("${"); left != std::string::npos) {
        throw std::runtime_error("config/nginx/ratelimitd.conf: placeholder left: " + text.substr(left, 24));
    }
    return text;
}

Nginx::Nginx(const Options& options) : port_(free_port()), upstream_port_(free_port()) {
    static std::atomic<int> n{0};
    const std::string dir = scratch_dir() + "/nginx-" + std::to_string(n++);
    ::mkdir(dir.c_str(), 0755);
    ::mkdir((dir + "/tmp").c_str(), 0755);

    const std::string site = dir + "/ratelimitd.conf";
    upstream_log_ = dir + "/upstream.log";
    std::ofstream(site) << render_nginx_config({{"LISTEN", "127.0.0.1:" + std::to_string(port_)},
                                                {"RATELIMITD_ADDR", "127.0.0.1:" + std::to_string(options.ratelimitd_port)},
                                                {"UPSTREAM_ADDR", "127.0.0.1:" + std::to_string(upstream_port_)},
                                                {"RATELIMITD_DOWN", options.down}});

    // The shipped file goes into http {} unchanged, as it would into conf.d/.
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
         << "    scgi_temp_path " << dir << "/tmp/scgi;\n";
    if (!options.proxy_bind.empty()) conf << "    proxy_bind " << options.proxy_bind << ";\n";
    conf << "    include " << site << ";\n"
         << "    server {\n"
         << "        listen 127.0.0.1:" << upstream_port_ << ";\n"
         << "        access_log " << upstream_log_ << ";\n"
         << "        location / { default_type text/plain; return 200 \"upstream ok\\n\"; }\n"
         << "    }\n"
         << "}\n";
    const std::string main_conf = dir + "/nginx.conf";
    std::ofstream(main_conf) << conf.str();

    const std::string binary = ::access("/usr/sbin/nginx", X_OK) == 0 ? "/usr/sbin/nginx" : "nginx";
    child_ = Child({binary, "-p", dir + "/", "-e", "stderr", "-c", main_conf, "-g",
                    "daemon off; pid " + dir + "/nginx.pid; error_log stderr;"},
                   dir + "/nginx.log");
    const auto until = std::chrono::steady_clock::now() + process_start_bound;
    while (std::chrono::steady_clock::now() < until) {
        if (can_connect(port_) && can_connect(upstream_port_)) return;
        if (!child_.running()) break;
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    const std::string log = child_.log();
    child_.signal(SIGTERM);
    child_.wait(std::chrono::seconds(5));
    throw std::runtime_error("nginx did not start: " + log);
}

int Nginx::upstream_requests() const {
    std::ifstream in(upstream_log_);
    int lines = 0;
    for (std::string line; std::getline(in, line);) ++lines;
    return lines;
}

Nginx::~Nginx() {
    child_.signal(SIGTERM);
    child_.wait(std::chrono::seconds(5));
}

}  // namespace ratelimitd::test
