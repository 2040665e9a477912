// The lines of an access log: a file (gzip-compressed or not, told by its content) or stdin.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace ratelimitd::simulate {

/// Reads a log in large blocks and hands out its lines without copying them. A `.gz` file
/// (or any gzip stream, stdin included) is inflated on the fly; anything else is read as is.
/// Memory is one block, whatever the log's size or its lines' length: a line longer than
/// `max_line` is handed out empty, flagged by line_too_long(), and the rest of it skipped.
class LineSource {
public:
    /// Longer than any request line a proxy writes (nginx's large header buffers are 8 KiB): a
    /// longer one is not a log line, and holding it would make memory follow the input.
    static constexpr std::size_t max_line = 64 * 1024;

    /// Opens `path` ("-": standard input). Throws std::runtime_error naming the file and the
    /// reason when it cannot be opened.
    explicit LineSource(const std::string& path);
    ~LineSource();
    LineSource(const LineSource&) = delete;
    LineSource& operator=(const LineSource&) = delete;

    /// The next line without its "\n" (and "\r\n"); false at the end. The view is valid
    /// until the next call. Throws std::runtime_error on a read error (a corrupt gzip stream).
    bool next(std::string_view& line);

    /// True when the line just handed out was longer than max_line (it came out empty).
    [[nodiscard]] bool line_too_long() const noexcept { return too_long_; }

    /// Lines handed out so far.
    [[nodiscard]] std::size_t lines_read() const noexcept { return lines_; }

private:
    /// Reads the next block behind what is left of the current one; false at the end.
    bool refill();
    /// Drops the rest of an over-long line, up to and with its "\n"; false at the end.
    bool skip_rest_of_line();
    /// Hands out [begin_, begin_ + len) as a line, without a trailing "\r".
    void hand_out(std::size_t len, std::size_t consumed, std::string_view& line);

    struct Gz;
    std::unique_ptr<Gz> gz_;
    std::string name_;
    std::vector<char> buffer_;
    std::size_t begin_ = 0;  ///< first unread byte in buffer_
    std::size_t end_ = 0;    ///< one past the last valid byte
    bool eof_ = false;
    bool too_long_ = false;
    std::size_t lines_ = 0;
};

}  // namespace ratelimitd::simulate
