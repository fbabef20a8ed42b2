#!/usr/bin/env bash
# Compile the Kaitai Struct grammars with the pinned compiler (package-lock.json: kaitai-struct-compiler
# 0.11.0, js-yaml 4.1.0) into the committed Python parsers (ksy/generated/*.py), the committed JavaScript
# parsers (ksy/generated/javascript/*.js, for the npm runtime kaitai-struct 0.11.0) and the GraphViz
# figures (spec/figures/<id>.dot and .svg).
#
#   bash ksy/build.sh           regenerate ksy/generated/ and spec/figures/
#   bash ksy/build.sh --check   regenerate into a temp dir and compare with the committed parsers and
#                               .dot files; also compile every grammar to java, go and cpp_stl (the other
#                               targets an implementer reaches for) and load every JavaScript module;
#                               exit 1 on any drift or compiler error, 0 when all is well.  With javac and
#                               the Kaitai Java runtime jar (KAITAI_JAVA_RUNTIME=path.jar, or the Maven
#                               cache's io/kaitai/kaitai-struct-runtime/0.11), the Java is compiled too.
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

compile() {  # compile OUT_PY OUT_DOT (the JavaScript goes to OUT_PY/javascript)
  node "$here/ksc.js" -t python --outdir "$1" "${files[@]}"
  node "$here/ksc.js" -t javascript --outdir "$1/javascript" "${files[@]}"
  node "$here/ksc.js" -t graphviz --outdir "$2" "${files[@]}"
}

other_targets() {  # compile OUT for the targets not committed; any compiler error fails the check
  local t
  for t in java go cpp_stl; do
    node "$here/ksc.js" -t "$t" --outdir "$1/$t" "${files[@]}"
  done
  # every generated JavaScript module loads (a class named like a JS global broke this once)
  node -e 'for (const f of process.argv.slice(1)) require(f);' "$1"/javascript/*.js \
    || { echo "build.sh --check: a generated JavaScript module does not load" >&2; return 1; }
  local jar="${KAITAI_JAVA_RUNTIME:-$HOME/.m2/repository/io/kaitai/kaitai-struct-runtime/0.11/kaitai-struct-runtime-0.11.jar}"
  if command -v javac >/dev/null && [[ -f $jar ]]; then
    javac -nowarn -d "$1/java-classes" -cp "$jar" $(find "$1/java" -name "*.java") 2>"$1/javac.log" \
      || { head -n 40 "$1/javac.log" >&2; echo "build.sh --check: the generated Java does not compile" >&2; return 1; }
    java_note=", Java compiled"
  else
    java_note=" (Java not compiled: no javac or no Kaitai Java runtime jar)"
  fi
}

if [[ $mode == check ]]; then
  tmp="$(mktemp -d)"
  trap 'rm -rf "$tmp"' EXIT
  # the generated JavaScript requires kaitai-struct from ksy/node_modules: compile beside it
  tmp_js="$here/.check-$$"
  trap 'rm -rf "$tmp" "$tmp_js"' EXIT
  compile "$tmp/generated" "$tmp/figures"
  mkdir -p "$tmp_js"
  cp -r "$tmp/generated/javascript" "$tmp_js/javascript"
  java_note=""
  other_targets "$tmp_js"
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
  echo "build.sh --check: ${#grammars[@]} grammars, generated parsers and figure sources match;" \
       "java, go and cpp_stl compile, JavaScript loads$java_note"
  exit 0
fi

# Build: replace the generated files (keep the folder's README).
find "$here/generated" -maxdepth 1 -name '*.py' -delete 2>/dev/null || true
rm -rf "$here/generated/javascript"
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
