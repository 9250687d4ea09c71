#include "shared_tracers.h"

#include <cstdio>
#include <mutex>
#include <random>
#include <unordered_map>

namespace hotspan_addon::shared_tracers {

namespace {

struct Table {
  std::mutex mu;
  std::unordered_map<std::string, std::weak_ptr<hotspan::Tracer>> by_token;
  std::unordered_map<uint64_t, std::string> token_of;  // tracer id -> token
  std::unordered_map<uint64_t, int32_t> profile_us;    // tracer id -> ProfileInterval, when not 0
  uint64_t nonce = 0;
};

// Leaked on purpose: worker threads may still look tokens up while the
// process runs its static destructors.
Table& table() {
  static Table* t = [] {
    auto* fresh = new Table;
    std::random_device rd;
    fresh->nonce = (static_cast<uint64_t>(rd()) << 32) ^ rd();
    return fresh;
  }();
  return *t;
}

// Drops entries of destroyed tracers; call with the lock held.
void Prune(Table& t) {
  for (auto it = t.token_of.begin(); it != t.token_of.end();) {
    auto entry = t.by_token.find(it->second);
    if (entry == t.by_token.end() || entry->second.expired()) {
      if (entry != t.by_token.end()) t.by_token.erase(entry);
      t.profile_us.erase(it->first);
      it = t.token_of.erase(it);
    } else {
      ++it;
    }
  }
}

}  // namespace

std::string TokenFor(const std::shared_ptr<hotspan::Tracer>& tracer) {
  Table& t = table();
  std::lock_guard<std::mutex> lock(t.mu);
  auto found = t.token_of.find(tracer->id());
  if (found != t.token_of.end()) return found->second;
  Prune(t);
  // Tracer ids are never reused; the per-process nonce keeps a token from one
  // process from naming a tracer in another by accident.
  char buf[64];
  std::snprintf(buf, sizeof buf, "hotspan:%llx:%llu",
                static_cast<unsigned long long>(t.nonce),
                static_cast<unsigned long long>(tracer->id()));
  std::string token(buf);
  t.by_token.emplace(token, tracer);
  t.token_of.emplace(tracer->id(), token);
  return token;
}

std::shared_ptr<hotspan::Tracer> Find(const std::string& token) {
  Table& t = table();
  std::lock_guard<std::mutex> lock(t.mu);
  auto found = t.by_token.find(token);
  return found == t.by_token.end() ? nullptr : found->second.lock();
}

int32_t ProfileInterval(const std::shared_ptr<hotspan::Tracer>& tracer) {
  Table& t = table();
  std::lock_guard<std::mutex> lock(t.mu);
  auto found = t.profile_us.find(tracer->id());
  return found == t.profile_us.end() ? 0 : found->second;
}

void SetProfileInterval(const std::shared_ptr<hotspan::Tracer>& tracer, int32_t interval_us) {
  // A token first: its entry is what Prune drops this one with.
  TokenFor(tracer);
  Table& t = table();
  std::lock_guard<std::mutex> lock(t.mu);
  if (interval_us == 0) {
    t.profile_us.erase(tracer->id());
  } else {
    t.profile_us[tracer->id()] = interval_us;
  }
}

}  // namespace hotspan_addon::shared_tracers
