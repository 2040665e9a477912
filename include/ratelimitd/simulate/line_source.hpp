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
/// Memory is one block plus the longest line, whatever the log's size.
class LineSource {
public:
    /// Opens `path` ("-": standard input). Throws std::runtime_error naming the file and the
    /// reason when it cannot be opened.
    explicit LineSource(const std::string& path);
    ~LineSource();
    LineSource(const LineSource&) = delete;
    LineSource& operator=(const LineSource&) = delete;

    /// The next line without its "\n" (and "\r\n"); false at the end. The view is valid
    /// until the next call. Throws std::runtime_error on a read error (a corrupt gzip stream).
    bool next(std::string_view& line);

    /// Lines handed out so far.
    [[nodiscard]] std::size_t lines_read() const noexcept { return lines_; }

private:
    /// Reads the next block behind what is left of the current one; false at the end.
    bool refill();

    struct Gz;
    std::unique_ptr<Gz> gz_;
    std::string name_;
    std::vector<char> buffer_;
    std::size_t begin_ = 0;  ///< first unread byte in buffer_
    std::size_t end_ = 0;    ///< one past the last valid byte
    bool eof_ = false;
    std::size_t lines_ = 0;
};

}  // namespace ratelimitd::simulate
