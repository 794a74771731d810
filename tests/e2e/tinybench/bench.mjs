// Two tinybench benchmarks through CodSpeed's plugin: `steady` does the
// same work on both sides, `target` does SLOWDOWN times as much (1.2: 20%
// slower). The plugin writes summary statistics (no round arrays).
import { Bench } from "tinybench";
import { withCodSpeed } from "@codspeed/tinybench-plugin";

const factor = Number(process.env.SLOWDOWN || "1");
function work(n) {
  let x = 0;
  for (let i = 0; i < n; i++) x = (x * 31 + i) % 1000003;
  return x;
}
const bench = withCodSpeed(new Bench({ time: 1000 }));
bench
  .add("steady", () => {
    work(20000);
  })
  .add("target", () => {
    work(Math.round(20000 * factor));
  });
await bench.run();
