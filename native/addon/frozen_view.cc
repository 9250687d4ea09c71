#include "frozen_view.h"

#include <utility>

#include "arg_check.h"

namespace hotspan_addon {

namespace {

const napi_type_tag kFrozenViewTag = {0x686f747370616e31ULL, 0x66726f7a656e3a31ULL};

void Finalize(napi_env, void* data, void*) { delete static_cast<FrozenView*>(data); }

}  // namespace

FrozenView::FrozenView(hotspan::FrozenSnapshot frozen, int64_t origin)
    : snapshot(std::move(frozen)), origin_ns(origin), query(snapshot, origin) {
  lookups_.resize(snapshot.timelines.size());
}

const FrozenView::Lookups& FrozenView::lookups(size_t t) {
  std::unique_ptr<Lookups>& l = lookups_[t];
  if (!l) {
    l.reset(new Lookups());
    const hotspan::FrozenTimeline& tl = snapshot.timelines[t];
    for (const auto& fp : tl.foreign_parents) l->foreign.emplace(fp.first, fp.second);
    for (const auto& a : tl.attrs) l->attrs.emplace(a.first, &a.second);
  }
  return *l;
}

const std::vector<std::vector<hotspan::SpanIds>>& FrozenView::span_ids(uint64_t salt, uint64_t sampler) {
  // Keyed by salt: a view handed to another tracer's method resolves anew.
  if (!ids_resolved_ || ids_salt_ != salt) {
    hotspan::resolve_span_ids(snapshot, salt, ids_, sampler);
    ids_salt_ = salt;
    ids_resolved_ = true;
  }
  return ids_;
}

Napi::Object NewFrozenView(Napi::Env env, const hotspan::Tracer& tracer) {
  auto* view = new FrozenView(tracer.freeze(), tracer.origin_ns());
  Napi::Object obj = Napi::Object::New(env);
  if (napi_wrap(env, obj, view, Finalize, nullptr, nullptr) != napi_ok) {
    delete view;
    throw Napi::Error::New(env);
  }
  if (napi_type_tag_object(env, obj, &kFrozenViewTag) != napi_ok) throw Napi::Error::New(env);
  napi_property_descriptor count = {"count", nullptr, nullptr, nullptr, nullptr,
                                    Napi::Number::New(env, static_cast<double>(view->query.size())),
                                    napi_enumerable, nullptr};
  if (napi_define_properties(env, obj, 1, &count) != napi_ok) throw Napi::Error::New(env);
  return obj;
}

FrozenView& ArgFrozenView(const Napi::CallbackInfo& info, size_t index, const char* arg) {
  napi_env env = info.Env();
  napi_value v = info[index];
  bool tagged = false;
  if (info[index].IsObject() && napi_check_object_type_tag(env, v, &kFrozenViewTag, &tagged) != napi_ok) {
    throw Napi::Error::New(env);
  }
  if (!tagged) ThrowArgTypeCxx(env, arg, "a frozen view from freeze()", v);
  void* data = nullptr;
  if (napi_unwrap(env, v, &data) != napi_ok) throw Napi::Error::New(env);
  return *static_cast<FrozenView*>(data);
}

}  // namespace hotspan_addon
