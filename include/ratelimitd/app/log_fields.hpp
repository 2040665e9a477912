// Splitting a log message into its event text and its key=value fields, for JSON lines.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace ratelimitd::app {

struct LogField {
    std::string key;
    std::string value;  ///< unquoted: `key="a \"b\""` gives `a "b"`
};

/// A message as the JSON formatter writes it: "msg" and one JSON field per key=value.
struct SplitMessage {
    std::string text;  ///< what is not a field, words joined by one space ("store failure")
    std::vector<LogField> fields;
};

/// Call sites log `event text key=value key="quoted value"` (docs/operations.md, "Logs").
/// A word is a field when it is KEY=VALUE with KEY of [a-z][a-z0-9_]* and VALUE either a run of
/// non-space bytes or a double-quoted string (\" and \\ unescaped, other escapes kept as
/// written; the closing quote ends the word). Everything else stays in the text, in order:
/// words without '=', a quoted phrase (which may hold '=' and spaces), an unterminated quote,
/// and a key that is reserved (ts, level, msg) or repeated, so no field is written twice and a
/// value can never replace the line's own ts, level or msg.
SplitMessage split_log_message(std::string_view message);

}  // namespace ratelimitd::app
