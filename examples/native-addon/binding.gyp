{
  "targets": [
    {
      "target_name": "example",
      "sources": ["example.cc"],
      "include_dirs": ["../../native/include"],
      "defines": ["NAPI_VERSION=9"],
      "cflags_cc": ["-std=c++17", "-O2", "-Wall", "-Wextra"],
      "cflags_cc!": ["-std=gnu++17", "-std=gnu++1y"],
      "ldflags": ["-pthread"],
      "xcode_settings": { "CLANG_CXX_LANGUAGE_STANDARD": "c++17" }
    }
  ]
}
