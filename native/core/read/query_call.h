// One query step as numbers in, numbers out: the single entry point the
// addon and the WebAssembly core both expose, so lib/read/query.ts drives one
// engine (snapshot_query.h) on either backend.
//
// args (doubles): op, groups (0/1), timeline id (-1: any), within (global
// index of a group record whose [start, end) bounds the spans' starts; -1:
// none), min depth, except (a span id to leave out; 0: none), then the op's
// own a, b. `name` (when has_name) keeps only records of that name.
//
//   kTotals      -> count, total ms, min ms, max ms
//   kOrdered     -> global indices in start order
//   kNth a=index -> global index (-1: none), count
//   kUnion a=clip to `within` (0/1), b=with gaps (0/1) -> busy ms, gaps ms...
//   kDurations   -> durations ms, in start order
//   kGroupOf a=start ms -> global index of the innermost group (-1: none)
#pragma once

#include <cstddef>
#include <string_view>
#include <vector>

#include "read/snapshot_query.h"

namespace hotspan {

enum class QueryOp : int { kTotals = 1, kOrdered = 2, kNth = 3, kUnion = 4, kDurations = 5, kGroupOf = 6 };
constexpr size_t kQueryArgs = 8;

enum class QueryStatus : int { kOk = 0, kBadArgs = 1 };

template <typename SnapshotT>
QueryStatus query_call(const SnapshotQuery<SnapshotT>& q, const double* args, size_t nargs,
                       bool has_name, std::string_view name, std::vector<double>& out);

extern template QueryStatus query_call(const SnapshotQuery<FrozenSnapshot>&, const double*, size_t,
                                       bool, std::string_view, std::vector<double>&);
extern template QueryStatus query_call(const SnapshotQuery<Snapshot>&, const double*, size_t, bool,
                                       std::string_view, std::vector<double>&);

}  // namespace hotspan
