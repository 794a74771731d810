// An -O2 program whose code has the call-frame information shapes the CFI
// oracles check (tests/unit/report/cfi_oracle_test.cpp reads its FDEs,
// tests/e2e/unwind_oracle_test.cpp profiles it): functions that save many
// callee-saved registers, a stack realigned for an over-aligned local and
// an alloca (CFA on rbp), a catch clause (personality and LSDA
// augmentations), a variadic function and recursion. Each function returns
// through an epilogue that restores registers, so samples land in
// epilogues too. And a signal frame: a SIGILL handler that spins, entered
// from the first instruction of a function whose preceding byte no FDE
// covers, so an unwinder that looks up the interrupted pc minus one (as
// for a return address) finds no CFI there. And a leaf that spins in its
// epilogue, called from a frame addressed through rbp. cfi_o2_program [MS]
// runs for MS ms (default 50).
#include <signal.h>
#include <ucontext.h>

#include <cstdarg>
#include <cstdint>
#include <cstdlib>
#include <ctime>
#include <stdexcept>

// cfi_o2_trap: `ud2` as its first instruction, preceded by a byte outside
// every FDE. The SIGILL handler steps over the ud2; then it returns.
extern "C" void cfi_o2_trap();
asm(R"(
  .text
  .p2align 4
  nop
  .type cfi_o2_trap, @function
cfi_o2_trap:
  .cfi_startproc
  ud2
  ret
  .cfi_endproc
  .size cfi_o2_trap, .-cfi_o2_trap
)");

// cfi_o2_epilogue: saves rbp, then restores it and spins before returning:
// the spin runs in the epilogue, where the CFI still says "rbp saved at
// CFA-16", a slot now below the stack pointer. Its caller addresses its
// frame through rbp, so an unwinder that cannot recover rbp stops there.
extern "C" void cfi_o2_epilogue();
asm(R"(
  .text
  .p2align 4
  .type cfi_o2_epilogue, @function
cfi_o2_epilogue:
  .cfi_startproc
  push %rbp
  .cfi_def_cfa_offset 16
  .cfi_offset %rbp, -16
  mov %rsp, %rbp
  pop %rbp
  .cfi_def_cfa_offset 8
  mov $300, %ecx
1:
  dec %ecx
  jnz 1b
  ret
  .cfi_endproc
  .size cfi_o2_epilogue, .-cfi_o2_epilogue
)");

namespace cfi_o2 {
namespace {

volatile uint64_t g_sink = 0;

uint64_t now_ns() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull +
         static_cast<uint64_t>(ts.tv_nsec);
}

// Many live values across calls: rbx, rbp, r12-r15 are all saved.
__attribute__((noinline)) uint64_t many_registers(uint64_t x, int depth) {
  uint64_t a = x * 3, b = x ^ 0x55, c = x + 7, d = x * x, e = x >> 3, f = x | 1;
  for (int i = 0; i < 50; ++i) {
    a = a * 6364136223846793005ull + b;
    b ^= a >> 13;
    c += b * d;
    d = d * 31 + e;
    e ^= c << 5;
    f += e;
  }
  if (depth > 0) a += many_registers(a ^ f, depth - 1);
  g_sink = g_sink + a;
  return a + b + c + d + e + f;
}

// An over-aligned local: the stack is realigned, the CFA is on rbp.
__attribute__((noinline)) uint64_t realigned(uint64_t x) {
  alignas(64) volatile uint64_t buf[16];
  for (int i = 0; i < 16; ++i) buf[i] = x + static_cast<uint64_t>(i);
  uint64_t sum = 0;
  for (int round = 0; round < 20; ++round)
    for (int i = 0; i < 16; ++i) sum = sum * 33 + buf[i];
  return sum + many_registers(sum, 1);
}

// A dynamic allocation on the stack: the frame is addressed through rbp.
__attribute__((noinline)) uint64_t vla(uint64_t x, int n) {
  auto* buf = static_cast<volatile uint64_t*>(
      __builtin_alloca(static_cast<size_t>(n) * sizeof(uint64_t)));
  for (int i = 0; i < n; ++i) buf[i] = x * static_cast<uint64_t>(i + 1);
  uint64_t sum = 0;
  for (int round = 0; round < 20; ++round)
    for (int i = 0; i < n; ++i) sum ^= buf[i] + sum * 7;
  cfi_o2_epilogue();
  return sum + realigned(sum);
}

__attribute__((noinline)) uint64_t variadic(int count, ...) {
  va_list args;
  va_start(args, count);
  uint64_t sum = 0;
  for (int i = 0; i < count; ++i) sum = sum * 17 + va_arg(args, uint64_t);
  va_end(args);
  return sum + vla(sum, 8 + static_cast<int>(sum & 7));
}

__attribute__((noinline)) uint64_t may_throw(uint64_t x) {
  if ((x & 0xff) == 0x42) throw std::runtime_error("rare");
  return variadic(3, x, x + 1, x * 2);
}

__attribute__((noinline)) uint64_t catches(uint64_t x) {
  try {
    return may_throw(x);
  } catch (const std::exception&) {
    return 1;
  }
}

__attribute__((noinline)) uint64_t recurse(uint64_t x, int depth) {
  if (depth == 0) return catches(x);
  uint64_t r = recurse(x * 5 + 1, depth - 1);
  g_sink = g_sink ^ r;
  return r + x;
}

// Spins for a millisecond inside the signal frame, then resumes the
// interrupted function past its ud2.
void on_sigill(int, siginfo_t*, void* context) {
  const uint64_t end = now_ns() + 1000000ull;
  uint64_t x = 1;
  while (now_ns() < end) x = many_registers(x, 1);
  g_sink = x;
  auto* uc = static_cast<ucontext_t*>(context);
  uc->uc_mcontext.gregs[REG_RIP] += 2;
}

}  // namespace
}  // namespace cfi_o2

int main(int argc, char** argv) {
  const int ms = argc > 1 ? std::atoi(argv[1]) : 50;
  struct sigaction sa {};
  sa.sa_sigaction = cfi_o2::on_sigill;
  sa.sa_flags = SA_SIGINFO;
  sigaction(SIGILL, &sa, nullptr);
  const uint64_t end =
      cfi_o2::now_ns() + static_cast<uint64_t>(ms) * 1000000ull;
  uint64_t x = 1, next_trap = 0;
  do {
    for (int i = 0; i < 50; ++i) x = cfi_o2::recurse(x, 1 + (i % 4));
    // About one sample in six is taken inside the signal handler.
    if (cfi_o2::now_ns() >= next_trap) {
      cfi_o2_trap();
      next_trap = cfi_o2::now_ns() + 5000000ull;
    }
  } while (cfi_o2::now_ns() < end);
  cfi_o2::g_sink = x;
  return 0;
}
