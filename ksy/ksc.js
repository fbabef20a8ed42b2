#!/usr/bin/env node
// A minimal command line for the pinned Kaitai Struct compiler (npm kaitai-struct-compiler 0.11.0).
//
// The npm package ships only the JavaScript API (the one the Web IDE uses), no `kaitai-struct-compiler`
// executable, so this file gives it the subset of the JVM compiler's CLI that build.sh needs:
//
//   node ksc.js -t LANG [-t LANG ...] --outdir DIR FILE.ksy [FILE.ksy ...]
//   node ksc.js --version
//
// Imports (`meta/imports: [name]`) resolve relative to the importing file's folder, as in ksc.
// The JS API fixes the runtime options to the compiler's defaults (e.g. no --python-package), which is
// what the committed ksy/generated/ parsers are built with.
"use strict";

const fs = require("fs");
const path = require("path");
const yaml = require("js-yaml");
const compiler = require("kaitai-struct-compiler");

function usage(message) {
  process.stderr.write(`ksc.js: ${message}\nusage: node ksc.js -t LANG --outdir DIR FILE.ksy...\n`);
  process.exit(2);
}

function parseArgs(argv) {
  const args = { targets: [], outdir: null, files: [] };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === "-t" || a === "--target") args.targets.push(argv[++i]);
    else if (a === "-d" || a === "--outdir") args.outdir = argv[++i];
    else if (a === "--version") args.version = true;
    else if (a.startsWith("-")) usage(`unknown option ${a}`);
    else args.files.push(a);
  }
  return args;
}

function loadKsy(file) {
  return yaml.load(fs.readFileSync(file, "utf8"));
}

function importerFor(file) {
  const base = path.dirname(path.resolve(file));
  return {
    importYaml(name, mode) {
      const resolved = path.isAbsolute(name) ? name : path.join(base, name);
      return Promise.resolve(loadKsy(resolved + ".ksy"));
    },
  };
}

async function main() {
  const args = parseArgs(process.argv.slice(2));
  if (args.version) {
    process.stdout.write(`kaitai-struct-compiler ${compiler.version} (${compiler.buildDate})\n`);
    return;
  }
  if (!args.targets.length) usage("no target (-t)");
  if (!args.outdir) usage("no --outdir");
  if (!args.files.length) usage("no .ksy file");
  for (const t of args.targets) if (!compiler.languages.includes(t)) usage(`unknown target ${t}`);
  fs.mkdirSync(args.outdir, { recursive: true });
  let failed = false;
  for (const file of args.files) {
    for (const target of args.targets) {
      try {
        const out = await compiler.compile(target, loadKsy(file), importerFor(file), false);
        for (const name of Object.keys(out).sort()) {
          fs.writeFileSync(path.join(args.outdir, name), out[name]);
        }
      } catch (e) {
        failed = true;
        const what = e && e.toString ? e.toString() : String(e);
        process.stderr.write(`${file} (${target}): ${what}\n`);
      }
    }
  }
  if (failed) process.exit(1);
}

main().catch((e) => {
  process.stderr.write(`ksc.js: ${e}\n`);
  process.exit(1);
});
