#!/usr/bin/env bash
# Compile the Kaitai Struct grammars with the pinned compiler (package-lock.json: kaitai-struct-compiler
# 0.11.0, js-yaml 4.1.0) into the committed Python parsers (ksy/generated/) and the GraphViz figures
# (spec/figures/<id>.dot and .svg).
#
#   bash ksy/build.sh           regenerate ksy/generated/ and spec/figures/
#   bash ksy/build.sh --check   regenerate into a temp dir and compare with the committed parsers and
#                               .dot files; exit 1 on any drift, 0 when they match
#
# Installs nothing.  Needs: node >= 18; the npm packages, installed once with `npm ci` in ksy/;
# for the .svg figures (not for --check), GraphViz's `dot` (Debian: apt-get install graphviz).
# The .svg files are not compared by --check: their bytes depend on the GraphViz version, while the
# .dot sources they are drawn from depend only on the pinned compiler.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(dirname "$here")"
grammars=(python_pickle torch_t7 torch_t7_ascii pytorch_zip pytorch_legacy pytorch_tar)

mode=build
case "${1:-}" in
  "") ;;
  --check) mode=check ;;
  *) echo "usage: $0 [--check]" >&2; exit 2 ;;
esac

if [[ ! -d "$here/node_modules/kaitai-struct-compiler" || ! -d "$here/node_modules/js-yaml" ]]; then
  echo "build.sh: the pinned compiler is not installed; run: (cd ksy && npm ci)" >&2
  exit 2
fi

files=()
for g in "${grammars[@]}"; do files+=("$here/$g.ksy"); done

compile() {  # compile OUT_PY OUT_DOT
  node "$here/ksc.js" -t python --outdir "$1" "${files[@]}"
  node "$here/ksc.js" -t graphviz --outdir "$2" "${files[@]}"
}

if [[ $mode == check ]]; then
  tmp="$(mktemp -d)"
  trap 'rm -rf "$tmp"' EXIT
  compile "$tmp/generated" "$tmp/figures"
  drift=0
  if ! diff -r "$tmp/generated" "$here/generated" --exclude=README.md --exclude=__pycache__ >"$tmp/diff" 2>&1; then
    drift=1
  fi
  for dot in "$tmp"/figures/*.dot; do
    if ! diff "$dot" "$root/spec/figures/$(basename "$dot")" >>"$tmp/diff" 2>&1; then
      drift=1
    fi
  done
  if [[ $drift != 0 ]]; then
    head -n 60 "$tmp/diff" >&2
    echo "build.sh --check: ksy/generated/ or spec/figures/*.dot differ from the grammars; run bash ksy/build.sh" >&2
    exit 1
  fi
  echo "build.sh --check: ${#grammars[@]} grammars, generated parsers and figure sources match"
  exit 0
fi

# Build: replace the generated files (keep the folder's README).
find "$here/generated" -maxdepth 1 -name '*.py' -delete 2>/dev/null || true
mkdir -p "$here/generated" "$root/spec/figures"
compile "$here/generated" "$root/spec/figures"
if command -v dot >/dev/null; then
  for g in "${grammars[@]}"; do
    # the compiler draws edges to ports of value instances and params that it gives no port: dot
    # warns and draws them to the node instead, so its warnings are dropped
    dot -Tsvg "$root/spec/figures/$g.dot" -o "$root/spec/figures/$g.svg" 2>/dev/null
  done
else
  echo "build.sh: GraphViz 'dot' not found; spec/figures/*.svg not redrawn (apt-get install graphviz)" >&2
fi
echo "build.sh: compiled ${#grammars[@]} grammars into ksy/generated/ and spec/figures/"
