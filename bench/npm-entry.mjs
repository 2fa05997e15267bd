// Prints the file npx would run for an installed npm package: its bin, the
// one named like the package when it has several, else its main (the
// crawl's rule, crawl/npmcache.go entryPoint).
//
// usage: node npm-entry.mjs PREFIX NAME
import fs from "node:fs";
import path from "node:path";

const [prefix, name] = process.argv.slice(2);
const dir = path.join(prefix, "node_modules", name);
const pj = JSON.parse(fs.readFileSync(path.join(dir, "package.json"), "utf8"));
let rel = pj.main || "index.js";
if (typeof pj.bin === "string") rel = pj.bin;
else if (pj.bin && Object.keys(pj.bin).length) {
  const base = name.slice(name.lastIndexOf("/") + 1);
  rel = pj.bin[base] ?? pj.bin[Object.keys(pj.bin).sort()[0]];
}
console.log(path.join(dir, rel));
