#include "record/cpu_profile_store.h"

#include <utility>

namespace hotspan {

bool CpuProfile::valid() const {
  if (node_frame.size() != node_parent.size() || sample_node.size() != sample_ns.size()) return false;
  for (size_t i = 0; i < node_frame.size(); ++i) {
    if (node_frame[i] >= frames.size()) return false;
    const int32_t p = node_parent[i];
    if (p < -1 || (p >= 0 && static_cast<size_t>(p) >= i)) return false;
  }
  for (uint32_t n : sample_node) {
    if (n >= node_frame.size()) return false;
  }
  return true;
}

size_t CpuProfile::bytes() const {
  size_t n = sizeof(CpuProfile) + frames.size() * sizeof(CpuFrame);
  for (const CpuFrame& f : frames) n += f.function.size() + f.url.size();
  n += node_frame.size() * (sizeof(uint32_t) + sizeof(int32_t));
  n += sample_node.size() * (sizeof(uint32_t) + sizeof(int64_t));
  return n;
}

namespace {
constexpr size_t kSampleBytes = sizeof(uint32_t) + sizeof(int64_t);
}

bool CpuProfileStore::add(CpuProfile profile) {
  if (!profile.valid()) return false;
  LockGuard<Mutex> lock(mu_);
  const size_t samples = profile.sample_node.size();
  const size_t tables = profile.bytes() - samples * kSampleBytes;
  const size_t room = bytes_ < max_bytes_ ? max_bytes_ - bytes_ : 0;
  if (tables > room) {
    dropped_ += samples;
    return true;
  }
  const size_t fit = (room - tables) / kSampleBytes;
  if (fit < samples) {
    dropped_ += samples - fit;
    profile.sample_node.resize(fit);
    profile.sample_ns.resize(fit);
    profile.sample_node.shrink_to_fit();
    profile.sample_ns.shrink_to_fit();
  }
  if (profile.sample_node.empty()) return true;
  bytes_ += profile.bytes();
  profiles_.push_back(std::make_shared<const CpuProfile>(std::move(profile)));
  return true;
}

std::vector<std::shared_ptr<const CpuProfile>> CpuProfileStore::copy() const {
  LockGuard<Mutex> lock(mu_);
  return profiles_;
}

uint64_t CpuProfileStore::dropped() const {
  LockGuard<Mutex> lock(mu_);
  return dropped_;
}

size_t CpuProfileStore::bytes() const {
  LockGuard<Mutex> lock(mu_);
  return bytes_;
}

}  // namespace hotspan
