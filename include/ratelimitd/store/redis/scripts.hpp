// The embedded Lua scripts with their SHA1 digests, one per algorithm.
#pragma once

#include "ratelimitd/policy/policy.hpp"

#include <string>
#include <string_view>
#include <vector>

namespace ratelimitd::store::redis {

struct Script {
    std::string name;   ///< "token_bucket", ...
    std::string_view text;
    std::string sha1;   ///< lower-case hex, what SCRIPT LOAD answers
};

/// Every embedded script with its digest (computed once, on first use).
const std::vector<Script>& scripts();

/// The script deciding checks of this algorithm.
const Script& script_for(policy::Algorithm a);

/// The script deciding layered checks (lua/multi.lua, with every algorithm pasted in).
const Script& multi_script();

/// The script giving back what one slot group of a cross-slot layered check charged
/// (lua/refund.lua; Redis Cluster only, see cluster/cross_slot_check.cpp).
const Script& refund_script();

/// The script deciding a batch of independent checks in one call (lua/batch.lua).
const Script& batch_script();

/// Every policy::Algorithm in declaration order: the rows of policy::algorithm_table, which the
/// build checked against the enum before writing the dispatch tables of lua/batch.lua,
/// lua/multi.lua and lua/refund.lua.
std::vector<policy::Algorithm> all_algorithms();

/// Lower-case hex SHA1 of `text` (OpenSSL).
std::string sha1_hex(std::string_view text);

}  // namespace ratelimitd::store::redis
