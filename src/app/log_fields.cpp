// split_log_message: `event key=value key="quoted"` into text and fields.
#include "ratelimitd/app/log_fields.hpp"

#include <algorithm>
#include <array>
#include <optional>

namespace ratelimitd::app {

namespace {

bool is_space(char c) noexcept { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }
bool is_key_start(char c) noexcept { return c >= 'a' && c <= 'z'; }
bool is_key_byte(char c) noexcept { return is_key_start(c) || (c >= '0' && c <= '9') || c == '_'; }

/// The end of the double-quoted string that starts at `open` (one past its closing quote), or
/// nullopt when it is not closed.
std::optional<std::size_t> quoted_end(std::string_view s, std::size_t open) {
    for (std::size_t i = open + 1; i < s.size(); ++i) {
        if (s[i] == '\\') {
            ++i;  // the escaped byte cannot close the string
        } else if (s[i] == '"') {
            return i + 1;
        }
    }
    return std::nullopt;
}

std::string unquote(std::string_view quoted) {
    std::string out;
    const std::string_view inner = quoted.substr(1, quoted.size() - 2);
    for (std::size_t i = 0; i < inner.size(); ++i) {
        if (inner[i] == '\\' && i + 1 < inner.size() && (inner[i + 1] == '"' || inner[i + 1] == '\\')) ++i;
        out += inner[i];
    }
    return out;
}

std::size_t word_end(std::string_view s, std::size_t from) {
    while (from < s.size() && !is_space(s[from])) ++from;
    return from;
}

struct Word {
    std::size_t end;                 ///< one past the word
    std::optional<LogField> field;   ///< when the word is KEY=VALUE
};

/// The word at `at`: a field, or text up to the next space (a quoted phrase as one word).
Word read_word(std::string_view s, std::size_t at) {
    std::size_t i = at;
    if (is_key_start(s[i])) {
        while (i < s.size() && is_key_byte(s[i])) ++i;
    }
    if (i == at || i >= s.size() || s[i] != '=') {
        if (s[at] == '"') {
            const auto end = quoted_end(s, at);
            if (end) return {*end, std::nullopt};
        }
        return {word_end(s, at), std::nullopt};
    }
    std::string key(s.substr(at, i - at));
    const std::size_t value_at = i + 1;
    if (value_at < s.size() && s[value_at] == '"') {
        const auto end = quoted_end(s, value_at);
        if (!end || (*end < s.size() && !is_space(s[*end]))) return {word_end(s, at), std::nullopt};
        return {*end, LogField{std::move(key), unquote(s.substr(value_at, *end - value_at))}};
    }
    const std::size_t end = word_end(s, value_at);
    return {end, LogField{std::move(key), std::string(s.substr(value_at, end - value_at))}};
}

bool is_reserved(std::string_view key) noexcept {
    constexpr std::array<std::string_view, 3> reserved{"ts", "level", "msg"};
    return std::find(reserved.begin(), reserved.end(), key) != reserved.end();
}

}  // namespace

SplitMessage split_log_message(std::string_view message) {
    SplitMessage out;
    std::size_t i = 0;
    while (i < message.size()) {
        if (is_space(message[i])) {
            ++i;
            continue;
        }
        Word word = read_word(message, i);
        const bool taken = word.field && !is_reserved(word.field->key) &&
                           std::none_of(out.fields.begin(), out.fields.end(),
                                        [&](const LogField& f) { return f.key == word.field->key; });
        if (taken) {
            out.fields.push_back(std::move(*word.field));
        } else {
            if (!out.text.empty()) out.text += ' ';
            out.text.append(message.substr(i, word.end - i));
        }
        i = word.end;
    }
    return out;
}

}  // namespace ratelimitd::app
