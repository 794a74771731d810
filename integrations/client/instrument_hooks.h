/* instrument-hooks C API: what a benchmark links to talk to the runner.
 *
 * Same functions, numbers and handshake as CodSpeed's instrument-hooks
 * (SetVersion(2), GetIntegrationMode, SetIntegration), so a benchmark written
 * against it behaves the same under `runner run` and under CodSpeed's runner.
 * Without a runner (no FIFOs, stale FIFOs, no reply within the timeout) every
 * call is a silent no-op that returns 0 and is_instrumented() is false.
 *
 * FIFO paths: /tmp/runner.ctl.fifo and /tmp/runner.ack.fifo, overridable with
 * the environment variables RUNNER_CTL_FIFO / RUNNER_ACK_FIFO (the runner sets
 * them when it was started with non-default paths, e.g. in tests).
 */
#ifndef RUNNER_INSTRUMENT_HOOKS_H
#define RUNNER_INSTRUMENT_HOOKS_H

#include <stdbool.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define MARKER_TYPE_SAMPLE_START 0
#define MARKER_TYPE_SAMPLE_END 1
#define MARKER_TYPE_BENCHMARK_START 2
#define MARKER_TYPE_BENCHMARK_END 3

typedef struct InstrumentHooks InstrumentHooks;

/* Returns a handle (NULL only when allocation fails). */
InstrumentHooks* instrument_hooks_init(void);
void instrument_hooks_deinit(InstrumentHooks* hooks);
bool instrument_hooks_is_instrumented(InstrumentHooks* hooks);
/* All of these return 0 on success (or when not instrumented), 1 on error. */
uint8_t instrument_hooks_start_benchmark(InstrumentHooks* hooks);
uint8_t instrument_hooks_stop_benchmark(InstrumentHooks* hooks);
uint8_t instrument_hooks_set_executed_benchmark(InstrumentHooks* hooks,
                                                int32_t pid, const char* uri);
/* Deprecated alias of instrument_hooks_set_executed_benchmark. */
uint8_t instrument_hooks_executed_benchmark(InstrumentHooks* hooks, int32_t pid,
                                            const char* uri);
uint8_t instrument_hooks_set_integration(InstrumentHooks* hooks,
                                         const char* name, const char* version);
/* Returns 2 for an unknown marker type. */
uint8_t instrument_hooks_add_marker(InstrumentHooks* hooks, int32_t pid,
                                    uint8_t marker_type, uint64_t timestamp);
/* CLOCK_MONOTONIC in nanoseconds (the clock the runner samples on). */
uint64_t instrument_hooks_current_timestamp(void);

#ifdef __cplusplus
}
#endif

#endif /* RUNNER_INSTRUMENT_HOOKS_H */
