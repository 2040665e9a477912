// Fuzz target: the text of a cluster error reply ("MOVED 3999 127.0.0.1:6381", "ASK ...",
// "TRYAGAIN", "CLUSTERDOWN"), a node address as CLUSTER SLOTS and MOVED write it, and the
// key -> slot hash (with its {hash tag} rule). A redirect is accepted only with a slot
// 0..16383 and a port 1..65535; the slot of any key is 0..16383.
#include "ratelimitd/store/redis/cluster/key_slot.hpp"
#include "ratelimitd/store/redis/cluster/slot_map.hpp"

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using namespace ratelimitd::store::redis::cluster;
    const std::string_view text(reinterpret_cast<const char*>(data), size);

    const Redirect r = parse_redirect(text);
    if (r.kind == Redirect::Kind::moved || r.kind == Redirect::Kind::ask) {
        if (r.slot < 0 || r.slot > 16383 || r.target.port < 1 || r.target.port > 65535) std::abort();
        // Round trip of what a redirect names. A host with brackets of its own ("[[]]:2" names
        // "[]") or none ("[]:2") is no address a node announces; connecting to it just fails.
        if (!r.target.host.empty() && r.target.host.find_first_of("[]") == std::string::npos) {
            const auto back = parse_node_address(r.target.str());
            if (!back || !(*back == r.target)) std::abort();
        }
    }
    if (const auto a = parse_node_address(text)) {
        if (a->port < 1 || a->port > 65535) std::abort();
    }
    if (key_slot(text) >= 16384) std::abort();
    return 0;
}
