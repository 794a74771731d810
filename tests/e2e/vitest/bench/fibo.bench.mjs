// Two benchmarks of one recursive function: its optimized code lands at
// addresses V8 used for start-up code before (the names must follow).
import { bench, describe } from "vitest";

function fibo(n) {
  return n < 2 ? n : fibo(n - 1) + fibo(n - 2);
}

describe("fibo", () => {
  bench("fibo 25", () => {
    fibo(25);
  });
  bench("fibo 27", () => {
    fibo(27);
  });
});
