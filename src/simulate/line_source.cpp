// LineSource: zlib's gzread reads gzip and plain files alike (it passes through what is not
// compressed), so one path serves .gz files, plain files and stdin.
#include "ratelimitd/simulate/line_source.hpp"

#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <stdexcept>

#include <fcntl.h>
#include <unistd.h>

namespace ratelimitd::simulate {
namespace {

constexpr std::size_t block_size = 1 << 20;

// A file whose first bytes are not gzip's magic is read with read(2) straight into the
// buffer: zlib's pass-through would copy every byte once more. Standard input cannot be
// peeked at without consuming it, so it always goes through zlib.
bool gzip_magic(int fd) {
    unsigned char magic[2] = {0, 0};
    return ::pread(fd, magic, 2, 0) == 2 && magic[0] == 0x1f && magic[1] == 0x8b;
}

}  // namespace

struct LineSource::Gz {
    gzFile file = nullptr;
    int plain_fd = -1;  ///< a plain file, read without zlib
    ~Gz() {
        if (file != nullptr) gzclose(file);
        if (plain_fd >= 0) ::close(plain_fd);
    }

    /// Up to `n` bytes into `to`; 0 at the end, -1 on an error.
    long read(char* to, std::size_t n) {
        if (plain_fd < 0) return gzread(file, to, static_cast<unsigned>(n));
        for (;;) {
            const ssize_t got = ::read(plain_fd, to, n);
            if (got >= 0 || errno != EINTR) return got;
        }
    }
};

LineSource::LineSource(const std::string& path) : gz_(std::make_unique<Gz>()), name_(path == "-" ? "stdin" : path) {
    buffer_.resize(block_size);
    int fd = 0;
    if (path != "-") {
        fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
        if (fd < 0) throw std::runtime_error("cannot open " + path + ": " + std::strerror(errno));
        if (!gzip_magic(fd)) {
            gz_->plain_fd = fd;
            return;
        }
    } else {
        fd = ::dup(0);
        if (fd < 0) throw std::runtime_error(std::string("cannot read stdin: ") + std::strerror(errno));
    }
    gz_->file = gzdopen(fd, "rb");
    if (gz_->file == nullptr) {
        ::close(fd);
        throw std::runtime_error("cannot read " + name_ + ": out of memory");
    }
    gzbuffer(gz_->file, block_size);
}

LineSource::~LineSource() = default;

bool LineSource::refill() {
    if (eof_) return false;
    // Keep the unfinished line at the front; grow when one line fills the whole buffer.
    const std::size_t left = end_ - begin_;
    if (left > 0 && begin_ > 0) std::memmove(buffer_.data(), buffer_.data() + begin_, left);
    begin_ = 0;
    end_ = left;
    if (buffer_.size() - end_ < block_size / 2) buffer_.resize(buffer_.size() * 2);
    const long n = gz_->read(buffer_.data() + end_, buffer_.size() - end_);
    if (n < 0) {
        if (gz_->plain_fd >= 0) throw std::runtime_error("cannot read " + name_ + ": " + std::strerror(errno));
        int code = 0;
        const char* what = gzerror(gz_->file, &code);
        throw std::runtime_error("cannot read " + name_ + ": " + (what != nullptr ? what : "read error"));
    }
    if (n == 0) {
        eof_ = true;
        return false;
    }
    end_ += static_cast<std::size_t>(n);
    return true;
}

void LineSource::hand_out(std::size_t len, std::size_t consumed, std::string_view& line) {
    const char* start = buffer_.data() + begin_;
    begin_ += consumed;
    if (len > 0 && start[len - 1] == '\r') --len;
    line = std::string_view(start, len);
    ++lines_;
}

bool LineSource::skip_rest_of_line() {
    for (;;) {
        const char* start = buffer_.data() + begin_;
        if (const void* nl = std::memchr(start, '\n', end_ - begin_)) {
            begin_ += static_cast<std::size_t>(static_cast<const char*>(nl) - start) + 1;
            return true;
        }
        begin_ = end_;
        if (!refill()) return false;
    }
}

bool LineSource::next(std::string_view& line) {
    too_long_ = false;
    for (;;) {
        const std::size_t avail = end_ - begin_;
        // Only the first max_line + 1 bytes are searched: a line is either within them or too long.
        const std::size_t window = std::min(avail, max_line + 1);
        const char* start = buffer_.data() + begin_;
        if (const void* nl = std::memchr(start, '\n', window)) {
            const auto len = static_cast<std::size_t>(static_cast<const char*>(nl) - start);
            hand_out(len, len + 1, line);
            return true;
        }
        if (avail > max_line) {
            too_long_ = true;
            line = std::string_view();
            ++lines_;
            skip_rest_of_line();
            return true;
        }
        if (!refill()) {
            if (begin_ == end_) return false;
            hand_out(end_ - begin_, end_ - begin_, line);  // the last line had no "\n"
            return true;
        }
    }
}

}  // namespace ratelimitd::simulate
