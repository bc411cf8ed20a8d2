# Builds the mcpping addon: the shared C sources (csrc/sources.txt, read at
# configure time so the list lives in one place), node/*.cc, and cJSON from
# third_party/cjson, compiled in so that the addon (and its prebuild) never
# loads a system libcjson.
# Compiled against Node's own headers, including its uv.h; the libuv symbols
# are resolved from the node binary at load time, so no -luv here.
{
  "targets": [
    {
      "target_name": "mcpping",
      "sources": [
        "<!@(cat csrc/sources.txt)",
        "<!@(ls node/*.cc)",
        "third_party/cjson/cjson/cJSON.c"
      ],
      "include_dirs": [
        "<!(node -p \"require('node-addon-api').include_dir\")",
        "csrc/include",
        "csrc/src",
        "third_party/cjson"
      ],
      "defines": [
        "NAPI_VERSION=8",
        "NAPI_CPP_EXCEPTIONS",
        "_GNU_SOURCE"
      ],
      "cflags": ["-Wall", "-Wextra", "-Wno-unused-parameter", "-fvisibility=hidden"],
      "cflags_c": ["-std=c11"],
      "cflags_cc": ["-std=c++17", "-fexceptions"],
      "cflags!": ["-fno-exceptions"],
      "cflags_cc!": ["-fno-exceptions"]
    }
  ]
}
