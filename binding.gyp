{
  "targets": [
    {
      "target_name": "hotspan",
      "dependencies": ["<!(node -p \"require('node-addon-api').targets\"):node_addon_api_except"],
      "sources": [
        "<!@(node -p \"require('fs').readdirSync('native/core', { recursive: true }).filter(f => f.endsWith('.cc')).map(f => f.split(require('path').sep).join('/')).map(f => 'native/core/' + f).join(' ')\")",
        "<!@(node -p \"require('fs').readdirSync('native/addon').filter(f => f.endsWith('.cc')).map(f => 'native/addon/' + f).join(' ')\")"
      ],
      "include_dirs": ["native/core", "native/include"],
      "defines": [
        "NAPI_VERSION=9",
        "NODE_API_SWALLOW_UNTHROWABLE_EXCEPTIONS"
      ],
      "cflags_cc": ["-std=c++17", "-O2", "-fvisibility=hidden"],
      "cflags_cc!": ["-std=gnu++17", "-fno-exceptions"],
      "xcode_settings": {
        "CLANG_CXX_LANGUAGE_STANDARD": "c++17",
        "GCC_ENABLE_CPP_EXCEPTIONS": "YES",
        "GCC_SYMBOLS_PRIVATE_EXTERN": "YES"
      },
      "msvs_settings": { "VCCLCompilerTool": { "ExceptionHandling": 1 } }
    }
  ]
}
