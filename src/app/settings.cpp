// Settings for the process: the table's precedence plus the defaults that need the machine.
#include "ratelimitd/app/settings.hpp"

#include "ratelimitd/app/cpu_count.hpp"
#include "ratelimitd/store/backend_factory.hpp"

#include <string>

namespace ratelimitd::app {

result<Settings> resolve_settings(const CommandLine& cl, const policy::FileSettings& file, const EnvLookup& env) {
    Settings defaults;
    defaults.threads = available_cpus();
    return config::apply_precedence(cl, file, env, defaults);
}

const char* usage() {
    static const std::string text = config::usage() + "\n--redis takes one of:\n" + store::backend_usage();
    return text.c_str();
}

}  // namespace ratelimitd::app
