// Builds the extension bundle (dist/extension.js) with esbuild, or with
// --tests transpiles sources and tests file by file into out/ for node's
// test runner (the `vscode` module is then provided by test/vscode-stub).
import * as esbuild from "esbuild";
import { readdirSync, rmSync } from "node:fs";
import { join } from "node:path";

const production = process.argv.includes("--production");
const tests = process.argv.includes("--tests");

function tsFiles(dir) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? tsFiles(join(dir, e.name)) : e.name.endsWith(".ts") ? [join(dir, e.name)] : [],
  );
}

if (tests) {
  rmSync("out", { recursive: true, force: true });
  await esbuild.build({
    entryPoints: [...tsFiles("src"), ...tsFiles("test")],
    outdir: "out",
    outbase: ".",
    format: "cjs",
    platform: "node",
    target: "node18",
    sourcemap: "inline",
    logLevel: "warning",
  });
} else {
  await esbuild.build({
    entryPoints: ["src/extension.ts"],
    bundle: true,
    outfile: "dist/extension.js",
    external: ["vscode"],
    format: "cjs",
    platform: "node",
    target: "node18",
    minify: production,
    sourcemap: !production,
    logLevel: "warning",
  });
}
