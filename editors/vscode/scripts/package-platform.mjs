// Builds a platform-specific .vsix: cross-compiles forge-lsp for the target
// into bin/forge-lsp (bin/forge-lsp.exe on Windows) and runs
// `vsce package --target TARGET`. The binary is removed afterwards so that a
// later universal `vsce package` does not pick it up.
//
//   npm run package:platform -- linux-x64 [--out FILE]
//
// Release flags for `forge-lsp version` come from FORGE_LSP_VERSION (default:
// the extension's version), FORGE_LSP_COMMIT (default: git rev-parse HEAD)
// and FORGE_LSP_DATE (default: the commit's date, else now).
import { execFileSync } from "node:child_process";
import { mkdirSync, readFileSync, rmSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

/** vsce --target names and the Go platform each one needs. */
export const TARGETS = {
  "linux-x64": { goos: "linux", goarch: "amd64" },
  "linux-arm64": { goos: "linux", goarch: "arm64" },
  "darwin-x64": { goos: "darwin", goarch: "amd64" },
  "darwin-arm64": { goos: "darwin", goarch: "arm64" },
  "win32-x64": { goos: "windows", goarch: "amd64" },
  "win32-arm64": { goos: "windows", goarch: "arm64" },
};

const extDir = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const repo = resolve(extDir, "..", "..");

function fail(msg) {
  process.stderr.write(`package:platform: ${msg}\n`);
  process.exit(2);
}

function gitOr(args, fallback) {
  try {
    return execFileSync("git", args, { cwd: repo, encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] }).trim() || fallback;
  } catch {
    return fallback;
  }
}

const argv = process.argv.slice(2);
const target = argv[0];
if (!target || !(target in TARGETS)) {
  fail(`give one target: ${Object.keys(TARGETS).join(", ")} (got ${JSON.stringify(target ?? "")})`);
}
const outIdx = argv.indexOf("--out");
const pkg = JSON.parse(readFileSync(join(extDir, "package.json"), "utf8"));
const out = resolve(outIdx > 0 && argv[outIdx + 1] ? argv[outIdx + 1] : join(extDir, `${pkg.name}-${target}-${pkg.version}.vsix`));

const { goos, goarch } = TARGETS[target];
const version = process.env.FORGE_LSP_VERSION || pkg.version;
const commit = process.env.FORGE_LSP_COMMIT || gitOr(["rev-parse", "HEAD"], "unknown");
const date = process.env.FORGE_LSP_DATE || gitOr(["log", "-1", "--format=%cI"], new Date().toISOString());
const binDir = join(extDir, "bin");
const binary = join(binDir, goos === "windows" ? "forge-lsp.exe" : "forge-lsp");

rmSync(binDir, { recursive: true, force: true });
mkdirSync(binDir, { recursive: true });
try {
  process.stdout.write(`== go build forge-lsp ${version} for ${goos}/${goarch}\n`);
  execFileSync(
    "go",
    [
      "build",
      "-trimpath",
      "-ldflags",
      `-s -w -X main.version=${version} -X main.commit=${commit} -X main.date=${date}`,
      "-o",
      binary,
      "./cmd/forge-lsp",
    ],
    { cwd: repo, stdio: "inherit", env: { ...process.env, GOOS: goos, GOARCH: goarch, CGO_ENABLED: "0" } },
  );
  process.stdout.write(`== vsce package --target ${target}\n`);
  const vsce = join(extDir, "node_modules", ".bin", process.platform === "win32" ? "vsce.cmd" : "vsce");
  execFileSync(vsce, ["package", "--target", target, "--out", out], { cwd: extDir, stdio: ["ignore", "inherit", "inherit"] });
} finally {
  rmSync(binDir, { recursive: true, force: true });
}
process.stdout.write(`${out}\n`);
