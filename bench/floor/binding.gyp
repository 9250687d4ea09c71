{
  "target_defaults": {
    "defines": ["NAPI_VERSION=9"],
    "cflags_cc": ["-std=c++17", "-O2"],
    "cflags_cc!": ["-std=gnu++17"],
    "xcode_settings": { "CLANG_CXX_LANGUAGE_STANDARD": "c++17", "OTHER_CFLAGS": ["-O2"] }
  },
  "targets": [
    {
      "target_name": "floor",
      "sources": ["floor.cc"]
    },
    {
      "target_name": "cabi",
      "sources": ["cabi.cc"],
      "include_dirs": ["../../native/include"]
    },
    {
      "target_name": "hpp",
      "sources": ["hpp.cc"],
      "include_dirs": ["../../native/include"]
    }
  ]
}
