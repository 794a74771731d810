// Makes V8 put new functions' code where freed ones were: each generation
// compiles 40 functions of its own name (work_<generation>_<i>), runs them
// until they are optimized, drops them and collects the garbage, so the
// next generation's code lands at the addresses the last one freed.
// argv: [seconds] [path]: with a path, the process's jitdump
// (./jit-<pid>.dump, V8 --perf-prof) gets a second name there first, so
// that it outlives the runner's clean-up of the working directory (the
// test's oracle reads it). Needs --expose-gc.
"use strict";
const fs = require("fs");

const seconds = Number(process.argv[2] || "2");
const keep = process.argv[3];
if (keep) fs.linkSync(`jit-${process.pid}.dump`, keep);

function generation(gen) {
  const fns = [];
  for (let i = 0; i < 40; i++)
    fns.push(
      eval(
        `(function work_${gen}_${i}(n) {` +
          `let s = ${gen + i};` +
          `for (let k = 0; k < n; k++) s = (s * 31 + k) % 1000003;` +
          `return s; })`,
      ),
    );
  let sum = 0;
  for (let round = 0; round < 300; round++)
    for (const f of fns) sum += f(400);
  return sum;
}

const end = Date.now() + seconds * 1000;
let total = 0;
for (let gen = 0; Date.now() < end; gen++) {
  total += generation(gen);
  globalThis.gc();
}
console.log(total > 0 ? "done" : "none");
