// The command line: the settings table's flags, and the commands.
#include "ratelimitd/config/command_line.hpp"

#include "ratelimitd/config/setting_table.hpp"

#include <optional>
#include <string_view>

namespace ratelimitd::config {
namespace {


// Takes a value like a setting's flag, but picks the command.
constexpr std::string_view check_config_flag = "check-config";

}  // namespace

result<CommandLine> parse_command_line(int argc, const char* const* argv) {
    CommandLine cl;
    for (int i = 1; i < argc; ++i) {
        std::string_view arg = argv[i];
        if (arg == "--help" || arg == "-h") {
            cl.command = Command::help;
            continue;
        }
        if (arg == "--erl-env") {
            cl.erl_env = true;
            continue;
        }
        if (arg == "--version") {
            cl.command = Command::version;
            continue;
        }
        if (arg.substr(0, 2) != "--") return invalid_request("unexpected argument \"" + std::string(arg) + "\" (see --help)");
        std::string name(arg.substr(2));
        std::optional<std::string> value;
        if (auto eq = name.find('='); eq != std::string::npos) {
            value = name.substr(eq + 1);
            name.resize(eq);
        }
        if (name != check_config_flag && find_setting_by_flag(name) == nullptr) {
            return invalid_request("unknown flag --" + name + " (see --help)");
        }
        if (!value) {
            if (i + 1 >= argc) return invalid_request("--" + name + " needs a value");
            value = argv[++i];
        }
        if (name == check_config_flag) {
            if (cl.command != Command::help && cl.command != Command::version) cl.command = Command::check_config;
            cl.file = *value;
        } else {
            cl.flags[name] = *value;
        }
    }
    return cl;
}

}  // namespace ratelimitd::config
