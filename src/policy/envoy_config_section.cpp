// `domains:` and `envoy_config:`: where the Envoy domains come from. Each file is read and
// checked on its own (messages name that file); the registry refuses the whole reload when
// any is wrong, so the rules in force never mix two versions.
#include "ratelimitd/policy/envoy_config_section.hpp"

#include "ratelimitd/config/tree_values.hpp"
#include "ratelimitd/core/quote.hpp"
#include "ratelimitd/policy/config_error.hpp"
#include "ratelimitd/policy/envoy_domain_reader.hpp"
#include "ratelimitd/policy/registry_reader.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <memory>
#include <system_error>

namespace ratelimitd::policy {
namespace {

namespace fs = std::filesystem;
using config::describe;

bool is_yaml_name(const fs::path& p) {
    std::string ext = p.extension().string();
    std::transform(ext.begin(), ext.end(), ext.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return ext == ".yaml" || ext == ".yml";
}

}  // namespace

bool EnvoyConfigSection::present(const ConfigTree& root) {
    return root.is_object() && (find(root, "domains") != nullptr || find(root, "envoy_config") != nullptr);
}

void EnvoyConfigSection::read(const ConfigTree& root, Registry& reg, bool rules_from_xds) {
    const ConfigTree* list = find(root, "domains");
    const ConfigTree* files = find(root, "envoy_config");
    const ConfigTree* denied = find(root, "envoy_denied_calls");
    const ConfigTree* merge = find(root, "envoy_merge_domains");
    if ((list == nullptr || list->is_null()) && (files == nullptr || files->is_null())) {
        if (denied != nullptr && rules_from_xds) {
            reg.xds_charge_denied = need_one_of(*denied, "envoy_denied_calls", {"refuse", "charge"}) == "charge";
        } else if (denied != nullptr) {
            fail("envoy_denied_calls", "only allowed with domains:, envoy_config: or xds_server (no Envoy rules here)");
        }
        if (merge != nullptr) {
            fail("envoy_merge_domains", "only allowed with domains: or envoy_config: (no Envoy rules here)");
        }
        return;
    }
    if (merge != nullptr) merge_domains_ = need_bool(*merge, "envoy_merge_domains");
    auto domains = std::make_shared<RlsDomains>();
    if (list != nullptr && !list->is_null()) read_inline(*list, *domains);
    if (files != nullptr && !files->is_null()) read_files(*files, *domains);
    if (denied != nullptr) domains->charge_denied = need_one_of(*denied, "envoy_denied_calls", {"refuse", "charge"}) == "charge";
    reg.domains = std::move(domains);
}

void EnvoyConfigSection::read_inline(const ConfigTree& list, RlsDomains& out) const {
    if (!list.is_array()) {
        fail("domains", "expected a list of {domain, descriptors} as envoyproxy/ratelimit writes them, got " +
                            describe(list));
    }
    const EnvoyDomainReader reader(file());
    for (std::size_t i = 0; i < list.size(); ++i) {
        const std::string path = join("domains", i);
        add(reader.read(list[i], path), file(), join(path, "domain"), out);
    }
    out.files.push_back(file());
}

void EnvoyConfigSection::read_files(const ConfigTree& v, RlsDomains& out) const {
    if (v.is_array()) {
        // The files themselves, already chosen (ERL mode lists its runtime directory as
        // envoyproxy/ratelimit does); none at all is a config without domains.
        if (v.size() > envoy_bounds::max_files) {
            fail("envoy_config", "more than " + std::to_string(envoy_bounds::max_files) + " config files");
        }
        for (std::size_t i = 0; i < v.size(); ++i) {
            std::string name = need_string(v[i], join("envoy_config", i), "a file path");
            if (fs::path(name).is_relative()) {
                name = (fs::path(file()).parent_path() / name).lexically_normal().string();
            }
            read_file(name, out);
        }
        return;
    }
    std::string path = need_string(v, "envoy_config", "a file or a directory of envoyproxy/ratelimit configs");
    if (path.empty()) fail("envoy_config", "expected a file or a directory, got an empty path");
    // A relative path is relative to the registry file, wherever the process was started.
    if (fs::path(path).is_relative()) path = (fs::path(file()).parent_path() / path).lexically_normal().string();
    for (const auto& name : list_files(path)) read_file(name, out);
}

void EnvoyConfigSection::read_file(const std::string& name, RlsDomains& out) const {
    const std::string text = read_config_file(name);
    const ConfigTree doc = read_config_tree(text, name);
    add(EnvoyDomainReader(name).read(doc, ""), name, "domain", out);
    out.files.push_back(name);
}

std::vector<std::string> EnvoyConfigSection::list_files(const std::string& path) const {
    std::error_code ec;
    const auto status = fs::status(path, ec);
    if (ec || !fs::exists(status)) fail("envoy_config", "cannot read " + quote(path, 256) + ": no such file or directory");
    if (!fs::is_directory(status)) return {path};
    std::vector<std::string> names;
    for (fs::directory_iterator it(path, ec), end; !ec && it != end; it.increment(ec)) {
        if (is_yaml_name(it->path()) && it->is_regular_file(ec)) names.push_back(it->path().string());
        if (names.size() > envoy_bounds::max_files) {
            fail("envoy_config", quote(path, 256) + " holds more than " + std::to_string(envoy_bounds::max_files) +
                                     " config files");
        }
    }
    if (ec) fail("envoy_config", "cannot list " + quote(path, 256) + ": " + ec.message());
    if (names.empty()) fail("envoy_config", quote(path, 256) + " holds no *.yaml or *.yml file");
    // Sorted, so that the first duplicate reported is the same on every machine.
    std::sort(names.begin(), names.end());
    return names;
}

void EnvoyConfigSection::add(RlsDomain domain, const std::string& file, const std::string& path,
                             RlsDomains& out) const {
    if (auto it = out.by_name.find(domain.name); it != out.by_name.end() && merge_domains_) {
        EnvoyDomainReader(file).merge(it->second, std::move(domain));
        return;
    }
    if (const RlsDomain* earlier = out.find(domain.name)) {
        throw ConfigError(file + ": " + path + ": duplicate domain " + quote(domain.name) + " (already defined in " +
                          earlier->source_file + ")");
    }
    std::string name = domain.name;
    out.by_name.emplace(std::move(name), std::move(domain));
}

}  // namespace ratelimitd::policy
