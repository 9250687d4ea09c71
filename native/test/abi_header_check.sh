#!/usr/bin/env bash
# Proves native/include/hotspan.h compiles as strict C99 and as strict C++17,
# and native/include/hotspan.hpp as strict C++17
# (compile only). Usage: abi_header_check.sh [CC] [CXX]
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
inc="$here/../include"
src="$here/abi_c99_check.c"
cc="${1:-${CC:-gcc}}"
cxx="${2:-${CXX:-g++}}"
"$cc" -std=c99 -Wall -Wextra -Werror -pedantic -fsyntax-only -I"$inc" "$src"
echo "hotspan.h: C99 ok ($cc)"
"$cxx" -x c++ -std=c++17 -Wall -Wextra -Werror -pedantic -fsyntax-only -I"$inc" "$src"
echo "hotspan.h: C++17 ok ($cxx)"
"$cxx" -std=c++17 -Wall -Wextra -Werror -pedantic -Wshadow -Wconversion -fsyntax-only -I"$inc" "$here/abi_hpp_check.cc"
echo "hotspan.hpp: C++17 ok ($cxx)"
