// BlockingClient: a private io_context run for one step at a time, with a deadline.
#include "blocking_client.hpp"

#include "transport.hpp"

#include "ratelimitd/store/redis/resp_command.hpp"

namespace ratelimitd::store::redis {

namespace net = boost::asio;

BlockingClient::BlockingClient(Endpoint endpoint, std::chrono::milliseconds timeout)
    : endpoint_(std::move(endpoint)), timeout_(timeout), in_(16 * 1024) {}

BlockingClient::~BlockingClient() {
    if (transport_) transport_->close();
    ioc_.restart();
    ioc_.poll();  // lets the cancelled handlers run before the transport goes
    transport_.reset();
}

bool BlockingClient::run_until(const bool& done) {
    ioc_.restart();
    const auto until = std::chrono::steady_clock::now() + timeout_;
    while (!done && std::chrono::steady_clock::now() < until) {
        if (ioc_.run_one_until(until) == 0) break;
    }
    if (done) return true;
    if (transport_) transport_->close();
    ioc_.restart();
    ioc_.run();  // the cancelled operations finish
    return false;
}

std::string BlockingClient::connect() {
    if (transport_) transport_->close();
    ioc_.restart();
    ioc_.poll();
    transport_ = std::make_unique<Transport>(ioc_.get_executor(), endpoint_);
    reader_ = std::make_unique<ValueReader>();
    bool done = false;
    std::string failure;
    transport_->async_open([&](const std::string& f) {
        failure = f;
        done = true;
    });
    if (!run_until(done)) return "no connection within " + std::to_string(timeout_.count()) + " ms";
    if (!failure.empty()) transport_.reset();
    return failure;
}

std::optional<Value> BlockingClient::command(const std::vector<std::string>& argv, std::string& why) {
    auto replies = pipeline({argv}, why);
    if (!replies) return std::nullopt;
    return std::move(replies->front());
}

std::optional<std::vector<Value>> BlockingClient::pipeline(const std::vector<std::vector<std::string>>& argvs,
                                                           std::string& why) {
    if (!transport_ || reader_ == nullptr) {
        why = "not connected";
        return std::nullopt;
    }
    out_.clear();
    for (const auto& argv : argvs) append_command(out_, {}, argv);

    bool done = false;
    boost::system::error_code failed;
    std::vector<Value> replies;
    replies.reserve(argvs.size());
    // Every reply the reader holds, then more bytes until each command has its own.
    std::function<void()> read_more;
    read_more = [&] {
        transport_->async_read_some(net::buffer(in_), [&](boost::system::error_code ec, std::size_t got) {
            if (!ec && reader_->feed(in_.data(), got)) {
                for (;;) {
                    Value reply;
                    const auto status = reader_->next(reply);
                    if (status == ValueReader::Status::malformed) {
                        ec = net::error::invalid_argument;
                        break;
                    }
                    if (status == ValueReader::Status::incomplete) return read_more();
                    replies.push_back(std::move(reply));
                    if (replies.size() == argvs.size()) break;
                }
            } else if (!ec) {
                ec = net::error::invalid_argument;  // not the Redis protocol
            }
            failed = ec;
            done = true;
        });
    };
    transport_->async_write(out_, [&](boost::system::error_code ec, std::size_t) {
        if (!ec) return read_more();
        failed = ec;
        done = true;
    });
    const bool in_time = run_until(done);
    if (!in_time || failed) {
        why = !in_time ? "no answer within " + std::to_string(timeout_.count()) + " ms"
                       : Transport::describe_error(failed);
        transport_.reset();
        return std::nullopt;
    }
    return replies;
}

std::optional<Value> BlockingClient::take_parsed(std::string& why) {
    Value reply;
    switch (reader_->next(reply)) {
    case ValueReader::Status::reply: return reply;
    case ValueReader::Status::incomplete: return std::nullopt;
    case ValueReader::Status::malformed: break;
    }
    why = "the server sent something that is not the Redis protocol";
    return std::nullopt;
}

std::optional<Value> BlockingClient::receive(std::chrono::milliseconds wait, std::string& why) {
    why.clear();
    if (!transport_ || reader_ == nullptr) {
        why = "not connected";
        return std::nullopt;
    }
    if (auto v = take_parsed(why); v || !why.empty()) return v;
    if (!read_in_flight_ && !read_error_) {
        read_in_flight_ = true;
        transport_->async_read_some(net::buffer(in_), [this](boost::system::error_code ec, std::size_t got) {
            read_in_flight_ = false;
            if (ec) read_error_ = ec;
            else if (!reader_->feed(in_.data(), got)) read_error_ = net::error::no_memory;
        });
    }
    ioc_.restart();
    ioc_.run_one_for(wait);
    if (read_error_) {
        why = Transport::describe_error(read_error_);
        return std::nullopt;
    }
    return take_parsed(why);
}

}  // namespace ratelimitd::store::redis
