#!/usr/bin/env node
// The `majordomus` command of the npm package: finds the binary package built for this
// platform (installed beside this one as an optional dependency) and runs it with the same
// arguments, standard streams and exit status. It says in one line what is missing when there
// is no binary for this platform, when the C library is older than the binary needs, or when
// the binary package is of another version than this one.
"use strict";

const { spawn } = require("node:child_process");
const path = require("node:path");

const manifest = require("../package.json");
const floor = manifest.majordomus.glibc;

function fail(message) {
  process.stderr.write(`majordomus: ${message}\n`);
  process.exit(1);
}

// Which C library this Linux runs on: Node reports glibc's version, and nothing under musl.
function glibcVersion() {
  const report = process.report && process.report.getReport();
  return report && report.header ? report.header.glibcVersionRuntime : undefined;
}

function older(version, than) {
  const a = version.split(".").map(Number);
  const b = than.split(".").map(Number);
  for (let i = 0; i < Math.max(a.length, b.length); i++) {
    if ((a[i] || 0) !== (b[i] || 0)) return (a[i] || 0) < (b[i] || 0);
  }
  return false;
}

const platform = `${process.platform}-${process.arch}`;
const known = manifest.majordomus.platforms;
if (!known.includes(platform)) {
  fail(
    `no binary package is built for ${platform} (this release has: ${known.join(", ")}); ` +
      "install from source instead: cargo install --locked --git <the repository's URL>"
  );
}
if (process.platform === "linux") {
  const glibc = glibcVersion();
  if (!glibc) {
    fail(`the ${platform} binary needs glibc ${floor} or newer, and this system has none (musl?); install from source with cargo`);
  }
  if (older(glibc, floor)) {
    fail(`the ${platform} binary needs glibc ${floor} or newer, and this system has ${glibc}; install from source with cargo`);
  }
}

const binaryPackage = `majordomus-${platform}`;
let packageJson;
try {
  packageJson = require.resolve(`${binaryPackage}/package.json`);
} catch (_) {
  fail(
    `the binary package \`${binaryPackage}\` is not installed beside \`majordomus\` ` +
      "(was it installed with --omit=optional or --no-optional?); reinstall `majordomus` with optional dependencies"
  );
}
const binaryVersion = require(packageJson).version;
if (binaryVersion !== manifest.version) {
  fail(
    `\`${binaryPackage}\` is ${binaryVersion} but \`majordomus\` is ${manifest.version}; ` +
      `install both at one version: npm install majordomus@${manifest.version}`
  );
}
const exe = process.platform === "win32" ? "majordomus.exe" : "majordomus";
const binary = path.join(path.dirname(packageJson), "bin", exe);

// `init --wire` writes the command a client should start: under `npx` that is `npx` itself,
// else this launcher (so an upgrade of the package is what the client starts next).
const env = { ...process.env };
env.MAJORDOMUS_LAUNCHER =
  process.env.npm_command === "exec" ? `npx -y majordomus@${manifest.version}` : __filename;

const child = spawn(binary, process.argv.slice(2), { stdio: "inherit", env });
for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"]) {
  process.on(signal, () => child.kill(signal));
}
child.on("error", (error) => fail(`cannot start ${binary}: ${error.message}`));
child.on("exit", (code, signal) => {
  if (signal) {
    // Die of the same signal, so the caller sees what ended the binary.
    process.removeAllListeners(signal);
    process.kill(process.pid, signal);
  } else {
    process.exit(code === null ? 1 : code);
  }
});
