// Syntax of config files: YAML and JSON text into one bounded JSON tree. The parsers' own
// messages can quote the text they read (nlohmann's "last read: '...'", "number overflow
// parsing '...'"), so every message here is rebuilt from a position and a fixed description.
#include "ratelimitd/policy/registry_reader.hpp"

#include "ratelimitd/core/quote.hpp"
#include "ratelimitd/policy/config_error.hpp"
#include "ratelimitd/policy/schema_checks.hpp"

#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/yaml.h>

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstdint>
#include <new>
#include <set>
#include <sstream>
#include <system_error>
#include <vector>

namespace ratelimitd::policy {
namespace {

using Json = ConfigTree;
namespace b = reader_bounds;

const std::string depth_bound = "nested deeper than " + std::to_string(b::max_depth) +
                                " levels of maps and lists (the bound of a config file)";
const std::string values_bound = "more than " + std::to_string(b::max_values) +
                                 " values (the bound of a config file, YAML aliases expanded)";
const std::string text_bound = "more than 16 MiB of text (the bound of a config file, "
                               "YAML aliases expanded)";

[[noreturn]] void fail_at_path(const std::string& file, const std::string& path,
                               const std::string& what) {
    throw ConfigError(file + ": " + (path.empty() ? std::string("(top level)") : path) + ": " +
                      what);
}

bool ends_with_ci(std::string_view text, std::string_view suffix) {
    if (text.size() < suffix.size()) return false;
    const auto tail = text.substr(text.size() - suffix.size());
    for (std::size_t i = 0; i < suffix.size(); ++i) {
        char c = tail[i];
        if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
        if (c != suffix[i]) return false;
    }
    return true;
}

/// Appends `key: value` to `object` and returns the value. The callers have refused a duplicate
/// key already; ordered_json's operator[] would look for it first, one string comparison per
/// member, and 200,000 policies took minutes to load that way.
Json& append_member(Json& object, std::string key, Json value) {
    auto& members = object.get_ref<Json::object_t&>();
    using Members = std::vector<Json::object_t::value_type, Json::object_t::allocator_type>;
    static_cast<Members&>(members).emplace_back(std::move(key), std::move(value));
    return members.back().second;
}

//------------------------------------------------------------------------------
// YAML

/// YAML 1.2 core-schema float form: [-+]? ( . digits | digits [ . digits? ] ) [ (e|E) [-+]? digits ].
/// (.inf and .nan are left as text: no setting takes them.)
bool is_yaml_float(std::string_view s) {
    std::size_t i = 0;
    const auto digits = [&] {
        const std::size_t from = i;
        while (i < s.size() && s[i] >= '0' && s[i] <= '9') ++i;
        return i > from;
    };
    if (i < s.size() && (s[i] == '-' || s[i] == '+')) ++i;
    const bool whole = digits();
    bool fraction = false;
    if (i < s.size() && s[i] == '.') {
        ++i;
        fraction = digits();
    }
    if (!whole && !fraction) return false;
    if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
        ++i;
        if (i < s.size() && (s[i] == '-' || s[i] == '+')) ++i;
        if (!digits()) return false;
    }
    return i == s.size();
}

/// YAML 1.2 core-schema resolution of a plain (unquoted) scalar. Quoted scalars stay strings,
/// so `limit: "60"` is a string and fails the integer check, as the author asked for.
Json plain_scalar(const std::string& s) {
    if (s == "true" || s == "True" || s == "TRUE") return true;
    if (s == "false" || s == "False" || s == "FALSE") return false;
    if (s == "null" || s == "Null" || s == "NULL" || s == "~") return nullptr;

    std::string_view digits = s;
    if (!digits.empty() && (digits.front() == '-' || digits.front() == '+')) {
        digits.remove_prefix(1);
    }
    const bool integral =
        !digits.empty() && digits.find_first_not_of("0123456789") == std::string_view::npos;
    if (integral) {
        // from_chars rejects a leading '+'; skip it and keep the sign of '-'.
        const char* first = s.data() + (s.front() == '+' ? 1 : 0);
        std::int64_t n = 0;
        const auto [end, ec] = std::from_chars(first, s.data() + s.size(), n);
        if (ec == std::errc{} && end == s.data() + s.size()) return n;
        // Too large for int64: leave it as text; the range check names it.
    }
    if (!integral && is_yaml_float(s)) {
        // `access_log_sample: 0.5`; from_chars rejects a leading '+' as above.
        const char* first = s.data() + (s.front() == '+' ? 1 : 0);
        double x = 0;
        const auto [end, ec] = std::from_chars(first, s.data() + s.size(), x);
        if (ec == std::errc{} && end == s.data() + s.size()) return x;
        // Out of double's range: leave it as text; the field's check names it.
    }
    return s;
}

std::string yaml_position(const YAML::Mark& mark) {
    if (mark.is_null()) return "";
    return "line " + std::to_string(mark.line + 1) + ", column " + std::to_string(mark.column + 1) +
           ": ";
}

/// yaml-cpp trees share the node of an anchor among its aliases; the converted tree copies
/// it each time, so a few lines of aliases can expand to billions of values. The budgets
/// count what the copy would hold.
class YamlConverter {
public:
    explicit YamlConverter(const std::string& file) : file_(file) {}

    Json convert(const YAML::Node& node, const std::string& path, std::size_t depth) {
        if (++values_ > b::max_values) fail(node, values_bound);
        switch (node.Type()) {
        case YAML::NodeType::Null:
        case YAML::NodeType::Undefined: return nullptr;
        case YAML::NodeType::Scalar:
            text_bytes_ += node.Scalar().size();
            if (text_bytes_ > b::max_document_bytes) fail(node, text_bound);
            // yaml-cpp tags plain scalars "?" and quoted or block scalars "!"; explicit tags
            // (!!str ...) are kept as text too.
            return node.Tag() == "?" ? plain_scalar(node.Scalar()) : Json(node.Scalar());
        case YAML::NodeType::Sequence: return convert_sequence(node, path, depth);
        case YAML::NodeType::Map: return convert_map(node, path, depth);
        }
        return nullptr;
    }

private:
    [[noreturn]] void fail(const YAML::Node& node, const std::string& what) const {
        throw ConfigError(file_ + ": " + yaml_position(node.Mark()) + what);
    }

    Json convert_sequence(const YAML::Node& node, const std::string& path, std::size_t depth) {
        if (depth >= b::max_depth) fail(node, depth_bound);
        Json arr = Json::array();
        std::size_t i = 0;
        for (const auto& item : node) arr.push_back(convert(item, join(path, i++), depth + 1));
        return arr;
    }

    Json convert_map(const YAML::Node& node, const std::string& path, std::size_t depth) {
        if (depth >= b::max_depth) fail(node, depth_bound);
        Json obj = Json::object();
        std::set<std::string, std::less<>> keys;
        for (const auto& kv : node) {
            if (!kv.first.IsScalar()) fail_at_path(file_, path, "expected text keys, got a complex key");
            const std::string& key = kv.first.Scalar();
            const std::string child = join(path, key);
            // yaml-cpp keeps both entries of a duplicated key; silently taking one would hide
            // a copy-paste mistake such as two policies with the same name.
            if (!keys.insert(key).second) fail_at_path(file_, child, "duplicate key");
            append_member(obj, key, convert(kv.second, child, depth + 1));
        }
        return obj;
    }

    const std::string& file_;
    std::size_t values_ = 0;
    std::size_t text_bytes_ = 0;
};

/// Counts a YAML stream's nodes from the parser's events, before yaml-cpp builds its tree:
/// that tree costs about 500 bytes a node (a 15 MiB list of 7.8 million numbers took 3.7 GB
/// and 49 s before the converter's count refused it). Every key and every value is one event,
/// and a map has no more keys than values, so more than twice max_values events means more
/// than max_values values: refused here, in constant memory.
class YamlNodeCounter : public YAML::EventHandler {
public:
    explicit YamlNodeCounter(const std::string& file) : file_(file) {}

    void OnDocumentStart(const YAML::Mark&) override {}
    void OnDocumentEnd() override {}
    void OnNull(const YAML::Mark& mark, YAML::anchor_t) override { count(mark); }
    void OnAlias(const YAML::Mark& mark, YAML::anchor_t) override { count(mark); }
    void OnScalar(const YAML::Mark& mark, const std::string&, YAML::anchor_t, const std::string&) override {
        count(mark);
    }
    void OnSequenceStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t,
                         YAML::EmitterStyle::value) override {
        count(mark);
    }
    void OnSequenceEnd() override {}
    void OnMapStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t, YAML::EmitterStyle::value) override {
        count(mark);
    }
    void OnMapEnd() override {}

private:
    void count(const YAML::Mark& mark) {
        if (++events_ > 2 * b::max_values) throw ConfigError(file_ + ": " + yaml_position(mark) + values_bound);
    }

    const std::string& file_;
    std::size_t events_ = 0;
};

void count_yaml_nodes(const std::string& text, const std::string& file) {
    std::istringstream in(text);
    YAML::Parser parser(in);
    YamlNodeCounter counter(file);
    while (parser.HandleNextDocument(counter)) {
    }
}

Json parse_yaml(std::string_view text, const std::string& file) {
    YAML::Node root;
    try {
        const std::string copy(text);
        count_yaml_nodes(copy, file);
        root = YAML::Load(copy);
    } catch (const YAML::Exception& e) {
        // The fixed part of yaml-cpp's messages ends at the first ':'; what follows can be a
        // character of the input ("unknown escape character: x").
        const std::string what = e.msg.substr(0, e.msg.find(':'));
        throw ConfigError(file + ": " + yaml_position(e.mark) + "invalid YAML: " + what);
    }
    return YamlConverter(file).convert(root, "", 0);
}

//------------------------------------------------------------------------------
// JSON

/// "line L, column C" of the byte offset `byte`, counted as nlohmann counts them.
std::string json_position(std::string_view text, std::size_t byte) {
    byte = std::min(byte, text.size());
    const std::string_view read = text.substr(0, byte);
    std::size_t line = 1;
    for (const char c : read) line += c == '\n' ? 1 : 0;
    const auto last_newline = read.rfind('\n');
    const std::size_t column =
        last_newline == std::string_view::npos ? byte : byte - last_newline - 1;
    return "line " + std::to_string(line) + ", column " + std::to_string(column);
}

/// What went wrong, from nlohmann's message without the text it quotes.
std::string json_problem(const nlohmann::json::exception& ex, const std::string& last_token) {
    if (ex.id == 406) return "number out of range (at most about 1.8e308)";
    std::string what = ex.what();
    // "[json.exception.parse_error.101] parse error at line 3, column 5: <problem>"
    const auto start = what.find(": ");
    if (start == std::string::npos) return "syntax error";
    what.erase(0, start + 2);
    const std::string quoted = "; last read: '" + last_token + "'";
    if (const auto at = what.find(quoted); at != std::string::npos) {
        what.erase(at, quoted.size());
    } else if (const auto from = what.find("; last read"); from != std::string::npos) {
        const auto to = what.find("; expected", from);
        what.erase(from, to == std::string::npos ? std::string::npos : to - from);
    }
    return what;
}

/// Builds the tree from nlohmann's SAX events, refusing a duplicated key (which nlohmann
/// would silently overwrite) with its field path, and the bounds of depth and size.
class JsonTreeBuilder : public nlohmann::json_sax<Json> {
public:
    JsonTreeBuilder(std::string_view text, const std::string& file) : text_(text), file_(file) {}

    Json take() { return std::move(root_); }

    bool null() override { return add(nullptr); }
    bool boolean(bool v) override { return add(v); }
    bool number_integer(number_integer_t v) override { return add(v); }
    bool number_unsigned(number_unsigned_t v) override { return add(v); }
    bool number_float(number_float_t v, const string_t& /*text*/) override { return add(v); }
    bool string(string_t& v) override { return add(std::move(v)); }
    bool binary(binary_t& v) override { return add(Json::binary(std::move(v))); }
    bool start_object(std::size_t /*elements*/) override { return open(Json::object()); }
    bool start_array(std::size_t /*elements*/) override { return open(Json::array()); }
    bool end_object() override { return close(); }
    bool end_array() override { return close(); }

    bool key(string_t& k) override {
        auto& f = frames_.back();
        if (!f.keys.insert(k).second) fail_at_path(file_, join(f.path, k), "duplicate key");
        f.key = std::move(k);
        return true;
    }

    bool parse_error(std::size_t byte, const std::string& last_token,
                     const nlohmann::detail::exception& ex) override {
        throw ConfigError(file_ + ": " + json_position(text_, byte) +
                          ": invalid JSON: " + json_problem(ex, last_token));
    }

private:
    struct Frame {
        Json* container;
        std::string path;
        std::set<std::string> keys;  // objects: keys seen so far
        std::string key;             // objects: the key whose value comes next
        std::size_t next_index = 0;  // arrays: index of the next element
    };

    /// Where the next value goes, and its field path.
    std::pair<Json*, std::string> slot() {
        if (frames_.empty()) return {&root_, ""};
        auto& f = frames_.back();
        if (f.container->is_object()) {
            std::string path = join(f.path, f.key);
            return {&append_member(*f.container, std::move(f.key), nullptr), std::move(path)};
        }
        f.container->push_back(nullptr);
        return {&f.container->back(), join(f.path, f.next_index++)};
    }

    void count(const std::string& path) {
        if (++values_ > b::max_values) fail_at_path(file_, path, values_bound);
    }

    bool add(Json v) {
        auto [target, path] = slot();
        count(path);
        *target = std::move(v);
        return true;
    }

    bool open(Json container) {
        auto [target, path] = slot();
        count(path);
        if (frames_.size() >= b::max_depth) fail_at_path(file_, path, depth_bound);
        *target = std::move(container);
        frames_.push_back(Frame{target, std::move(path), {}, {}, 0});
        return true;
    }

    bool close() {
        frames_.pop_back();
        return true;
    }

    std::string_view text_;
    const std::string& file_;
    Json root_;
    std::vector<Frame> frames_;
    std::size_t values_ = 0;
};

Json parse_json(std::string_view text, const std::string& file) {
    JsonTreeBuilder builder(text, file);
    Json::sax_parse(text, &builder, nlohmann::json::input_format_t::json, /*strict=*/true,
                    /*ignore_comments=*/false);
    return builder.take();
}

Json read_by_extension(std::string_view text, const std::string& file) {
    if (text.size() > b::max_document_bytes) {
        throw ConfigError(file + ": larger than 16 MiB (the bound of a config file)");
    }
    if (ends_with_ci(file, ".yaml") || ends_with_ci(file, ".yml")) return parse_yaml(text, file);
    if (ends_with_ci(file, ".json")) return parse_json(text, file);
    throw ConfigError(file + ": expected a .yaml, .yml or .json file");
}

}  // namespace

ConfigTree read_config_tree(std::string_view text, const std::string& file_name) {
    // The parsers are third-party code: whatever else they throw is a refused file too, never
    // an exception that ends a reload (and with it the serving process).
    try {
        return read_by_extension(text, file_name);
    } catch (const ConfigError&) {
        throw;
    } catch (const std::bad_alloc&) {
        throw ConfigError(file_name + ": cannot be read: out of memory while parsing");
    } catch (const std::exception&) {
        throw ConfigError(file_name + ": cannot be read: the parser failed unexpectedly");
    }
}

std::string read_config_file(const std::string& path) {
    const auto cannot_read = [&](int err) {
        return ConfigError(path + ": cannot read: " + std::generic_category().message(err));
    };
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) throw cannot_read(errno);

    std::string text;
    char buf[64 * 1024];
    for (;;) {
        const ssize_t n = ::read(fd, buf, sizeof buf);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) {
            const int err = errno;
            ::close(fd);
            throw cannot_read(err);
        }
        if (n == 0) break;
        text.append(buf, static_cast<std::size_t>(n));
        if (text.size() > reader_bounds::max_document_bytes) {
            ::close(fd);
            throw ConfigError(path + ": cannot read: larger than 16 MiB");
        }
    }
    ::close(fd);
    return text;
}

}  // namespace ratelimitd::policy
