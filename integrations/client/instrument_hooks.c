/* instrument-hooks client: speaks the runner FIFO protocol (u32 LE length +
 * bincode payload frames) over two named pipes. One request, then exactly one
 * reply. Every client of a run shares both FIFOs, so each request/reply pair
 * is serialised twice:
 *  - a process-wide mutex, for the threads of one process (they may share one
 *    handle, i.e. one open file description, which flock does not separate);
 *  - an exclusive flock on the ctl FIFO itself, for processes. The lock lives
 *    on the FIFO inode the runner created, so it needs no extra file in a
 *    shared directory (nothing to create, squat or clean up), every process
 *    that can talk to the runner can take it, and a new run's FIFO starts
 *    with a fresh lock. The kernel releases it when a holder dies. Nothing
 *    goes on the wire, so the bytes stay CodSpeed-compatible; clients that
 *    do not lock (CodSpeed's) simply are not serialised against us.
 * Each frame is written with one write(): frames up to PIPE_BUF then reach
 * the FIFO atomically, so the runner never sees them cut or interleaved.
 * A handle used in a forked child reopens the FIFOs first: the child's
 * inherited descriptors share the parent's open file descriptions, which
 * flock does not tell apart. */
#include "instrument_hooks.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define DEFAULT_CTL_PATH "/tmp/runner.ctl.fifo"
#define DEFAULT_ACK_PATH "/tmp/runner.ack.fifo"
#define PROTOCOL_VERSION 2
#define ACK_TIMEOUT_MS 1000
/* How long to wait for another process's request/reply to finish. A holder
 * keeps the lock for one exchange (at most ACK_TIMEOUT_MS), so this only
 * expires when a process holds it without talking (stopped, or hostile);
 * this process then stops locking rather than wait on every request. */
#define LOCK_TIMEOUT_MS 5000
/* Replies are at most 8 payload bytes; anything bigger is not our runner. */
#define MAX_REPLY_SIZE 64
/* Acks the handshake skips before its IntegrationModeResponse: what a full
 * ack FIFO holds (64 KiB of 8-byte Acks), and our SetVersion's. */
#define MAX_STALE_REPLIES (65536 / 8 + 1)

enum {
  TAG_CURRENT_BENCHMARK = 0,
  TAG_START_BENCHMARK = 1,
  TAG_STOP_BENCHMARK = 2,
  TAG_ACK = 3,
  TAG_SET_INTEGRATION = 5,
  TAG_ERR = 6,
  TAG_ADD_MARKER = 7,
  TAG_SET_VERSION = 8,
  TAG_GET_INTEGRATION_MODE = 9,
  TAG_INTEGRATION_MODE_RESPONSE = 10
};

enum { MODE_WALLTIME = 0 };

enum Outcome { OUTCOME_OK = 0, OUTCOME_ERROR = 1, OUTCOME_TIMEOUT = 2 };

struct InstrumentHooks {
  int ctl_fd;
  int ack_fd;
  pid_t owner; /* the process that opened ctl_fd and ack_fd */
  char* ctl_path;
  char* ack_path;
  bool instrumented;
  /* A previous reply did not arrive in time (or was garbage): a late reply
   * may still be in the ack FIFO, drop it before the next request. */
  bool desynced;
};

static pthread_mutex_t request_mutex = PTHREAD_MUTEX_INITIALIZER;
/* Set (under request_mutex) once the lock could not be taken in time. */
static bool lock_given_up = false;
static pthread_once_t atfork_once = PTHREAD_ONCE_INIT;

/* No fork in the middle of an exchange, and a child starts with the mutex
 * free (it may have been held by a thread that does not exist there). */
static void before_fork(void) { pthread_mutex_lock(&request_mutex); }
static void after_fork(void) { pthread_mutex_unlock(&request_mutex); }
static void register_atfork(void) {
  pthread_atfork(before_fork, after_fork, after_fork);
}

/* ---- byte buffer ---------------------------------------------------------*/

typedef struct {
  uint8_t* data;
  size_t size;
  size_t capacity;
  bool failed;
} Buffer;

static void buf_put(Buffer* b, const void* bytes, size_t n) {
  if (b->failed) return;
  if (b->size + n > b->capacity) {
    size_t cap = b->capacity ? b->capacity : 64;
    while (cap < b->size + n) cap *= 2;
    uint8_t* grown = realloc(b->data, cap);
    if (!grown) {
      b->failed = true;
      return;
    }
    b->data = grown;
    b->capacity = cap;
  }
  memcpy(b->data + b->size, bytes, n);
  b->size += n;
}

/* Explicit little-endian, whatever the host byte order. */
static void buf_le(Buffer* b, uint64_t v, int bytes) {
  uint8_t out[8];
  for (int i = 0; i < bytes; ++i) out[i] = (uint8_t)(v >> (8 * i));
  buf_put(b, out, (size_t)bytes);
}

static void buf_u32(Buffer* b, uint32_t v) { buf_le(b, v, 4); }
static void buf_u64(Buffer* b, uint64_t v) { buf_le(b, v, 8); }
static void buf_i32(Buffer* b, int32_t v) { buf_le(b, (uint32_t)v, 4); }
static void buf_str(Buffer* b, const char* s) {
  size_t n = strlen(s);
  buf_u64(b, n);
  buf_put(b, s, n);
}

/* Starts a frame: room for the length prefix, filled by frame_finish. */
static void frame_begin(Buffer* b, uint32_t tag) {
  buf_u32(b, 0);
  buf_u32(b, tag);
}

static void frame_finish(Buffer* b) {
  if (b->failed) return;
  uint32_t len = (uint32_t)(b->size - 4);
  for (int i = 0; i < 4; ++i) b->data[i] = (uint8_t)(len >> (8 * i));
}

/* ---- FIFO I/O ------------------------------------------------------------*/

static uint64_t monotonic_ms(void) {
  return instrument_hooks_current_timestamp() / 1000000u;
}

/* Waits for `events` on fd until `deadline_ms`; 0 when ready. */
static int wait_fd(int fd, short events, uint64_t deadline_ms) {
  for (;;) {
    uint64_t now = monotonic_ms();
    if (now >= deadline_ms) return -1;
    struct pollfd p = {.fd = fd, .events = events, .revents = 0};
    int r = poll(&p, 1, (int)(deadline_ms - now));
    if (r > 0) return 0;
    if (r < 0 && errno != EINTR) return -1;
  }
}

/* Writes (POLLOUT) or reads (POLLIN) all `n` bytes of `data` on the
 * non-blocking fd, waiting while the FIFO is full or empty, until
 * `deadline_ms`. A read never sees EOF while we hold the FIFO O_RDWR. */
static enum Outcome transfer_all(int fd, short direction, uint8_t* data,
                                 size_t n, uint64_t deadline_ms) {
  while (n > 0) {
    ssize_t done =
        direction == POLLOUT ? write(fd, data, n) : read(fd, data, n);
    if (done > 0) {
      data += done;
      n -= (size_t)done;
      continue;
    }
    if (done < 0 && errno == EINTR) continue;
    if (done < 0 && errno != EAGAIN) return OUTCOME_ERROR;
    if (wait_fd(fd, direction, deadline_ms) != 0) return OUTCOME_TIMEOUT;
  }
  return OUTCOME_OK;
}

static void drain_fd(int fd) {
  uint8_t sink[256];
  for (;;) {
    ssize_t r = read(fd, sink, sizeof(sink));
    if (r > 0) continue;
    if (r < 0 && errno == EINTR) continue;
    break;
  }
}

static void sleep_us(long us) {
  struct timespec ts = {.tv_sec = us / 1000000,
                        .tv_nsec = (us % 1000000) * 1000};
  while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
  }
}

/* Takes the cross-process lock on the ctl FIFO (request_mutex held). Returns
 * whether it is held; false also when locking is not possible, and then the
 * exchange goes ahead unlocked. */
static bool lock_fifo(InstrumentHooks* h) {
  if (lock_given_up) return false;
  uint64_t deadline = monotonic_ms() + LOCK_TIMEOUT_MS;
  long backoff_us = 50;
  for (;;) {
    if (flock(h->ctl_fd, LOCK_EX | LOCK_NB) == 0) return true;
    if (errno == EINTR) continue;
    if (errno != EWOULDBLOCK) return false; /* e.g. no flock here */
    if (monotonic_ms() >= deadline) {
      lock_given_up = true;
      fprintf(stderr,
              "instrument-hooks: another process has held the runner FIFO "
              "lock for %d ms; continuing without it\n",
              LOCK_TIMEOUT_MS);
      return false;
    }
    sleep_us(backoff_us);
    if (backoff_us < 2000) backoff_us *= 2;
  }
}

static void unlock_fifo(InstrumentHooks* h, bool locked) {
  if (locked) flock(h->ctl_fd, LOCK_UN);
}

static int open_fifo(const char* path);

/* In a forked child, replaces the inherited descriptors by its own
 * (request_mutex held). */
static bool own_fifos(InstrumentHooks* h) {
  if (h->owner == getpid()) return true;
  int ctl = open_fifo(h->ctl_path);
  int ack = ctl >= 0 ? open_fifo(h->ack_path) : -1;
  if (ctl < 0 || ack < 0) {
    if (ctl >= 0) close(ctl);
    return false;
  }
  /* Closing the inherited copies leaves the parent's lock alone. */
  close(h->ctl_fd);
  close(h->ack_fd);
  h->ctl_fd = ctl;
  h->ack_fd = ack;
  h->owner = getpid();
  h->desynced = false;
  return true;
}

static enum Outcome read_reply(InstrumentHooks* h, uint32_t* reply_tag,
                               uint32_t* reply_arg, uint64_t deadline);

/* Sends one frame and reads one reply (tag and optional u32 argument).
 * Must be called with request_mutex and the FIFO lock held. */
static enum Outcome exchange(InstrumentHooks* h, const Buffer* frame,
                             uint32_t* reply_tag, uint32_t* reply_arg) {
  if (frame->failed) return OUTCOME_ERROR;
  if (h->desynced) {
    drain_fd(h->ack_fd);
    h->desynced = false;
  }
  uint64_t deadline = monotonic_ms() + ACK_TIMEOUT_MS;
  enum Outcome out =
      transfer_all(h->ctl_fd, POLLOUT, frame->data, frame->size, deadline);
  if (out != OUTCOME_OK) return out;
  return read_reply(h, reply_tag, reply_arg, deadline);
}

/* Reads one reply frame (tag and optional u32 argument) until `deadline`. */
static enum Outcome read_reply(InstrumentHooks* h, uint32_t* reply_tag,
                               uint32_t* reply_arg, uint64_t deadline) {
  uint8_t header[4];
  enum Outcome out =
      transfer_all(h->ack_fd, POLLIN, header, sizeof(header), deadline);
  if (out != OUTCOME_OK) {
    h->desynced = true;
    return out;
  }
  uint32_t len = (uint32_t)header[0] | (uint32_t)header[1] << 8 |
                 (uint32_t)header[2] << 16 | (uint32_t)header[3] << 24;
  if (len < 4 || len > MAX_REPLY_SIZE) {
    h->desynced = true;
    return OUTCOME_ERROR;
  }
  uint8_t payload[MAX_REPLY_SIZE];
  out = transfer_all(h->ack_fd, POLLIN, payload, len, deadline);
  if (out != OUTCOME_OK) {
    h->desynced = true;
    return out;
  }
  *reply_tag = (uint32_t)payload[0] | (uint32_t)payload[1] << 8 |
               (uint32_t)payload[2] << 16 | (uint32_t)payload[3] << 24;
  *reply_arg = 0;
  if (len >= 8)
    *reply_arg = (uint32_t)payload[4] | (uint32_t)payload[5] << 8 |
                 (uint32_t)payload[6] << 16 | (uint32_t)payload[7] << 24;
  return OUTCOME_OK;
}

/* Sends a finished frame and expects Ack. */
static enum Outcome request_ack(InstrumentHooks* h, Buffer* frame) {
  frame_finish(frame);
  uint32_t tag = 0, arg = 0;
  pthread_mutex_lock(&request_mutex);
  enum Outcome out = OUTCOME_ERROR;
  if (own_fifos(h)) {
    bool locked = lock_fifo(h);
    out = exchange(h, frame, &tag, &arg);
    unlock_fifo(h, locked);
  }
  pthread_mutex_unlock(&request_mutex);
  free(frame->data);
  if (out != OUTCOME_OK) return out;
  return tag == TAG_ACK ? OUTCOME_OK : OUTCOME_ERROR;
}

static uint8_t to_code(enum Outcome out) { return out == OUTCOME_OK ? 0 : 1; }

static const char* fifo_path(const char* env_name, const char* fallback) {
  const char* value = getenv(env_name);
  return (value != NULL && value[0] != '\0') ? value : fallback;
}

/* A live runner holds the ctl FIFO open for reading (O_RDWR). Opening it
 * O_WRONLY|O_NONBLOCK fails with ENXIO when no process does, so stale FIFOs
 * left behind by a dead runner are rejected at once instead of waiting for
 * ack timeouts. */
static bool runner_listening(const char* ctl_path) {
  int fd = open(ctl_path, O_WRONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return false;
  struct stat st;
  bool ok = fstat(fd, &st) == 0 && S_ISFIFO(st.st_mode);
  close(fd);
  return ok;
}

static int open_fifo(const char* path) {
  if (access(path, R_OK | W_OK) != 0) return -1;
  return open(path, O_RDWR | O_NONBLOCK | O_CLOEXEC);
}

/* Must be called with request_mutex held. */
static void close_fifos(InstrumentHooks* h) {
  if (h->ack_fd >= 0) {
    /* Leave no late reply of ours behind for the next connection; only
     * under the FIFO lock, or the reply of another process's exchange in
     * progress would be taken. */
    if (h->ctl_fd >= 0 && h->owner == getpid() && lock_fifo(h)) {
      drain_fd(h->ack_fd);
      unlock_fifo(h, true);
    }
    close(h->ack_fd);
  }
  if (h->ctl_fd >= 0) close(h->ctl_fd);
  h->ctl_fd = h->ack_fd = -1;
  h->instrumented = false;
}

/* SetVersion(2) -> Ack, then GetIntegrationMode -> IntegrationModeResponse
 * (Walltime). Returns true when a walltime runner answered both. Before it,
 * replies left in the ack FIFO by a client that died before reading them
 * are drained, so they are not taken for ours. */
static bool handshake(InstrumentHooks* h) {
  Buffer version = {0};
  frame_begin(&version, TAG_SET_VERSION);
  buf_u64(&version, PROTOCOL_VERSION);
  frame_finish(&version);
  Buffer mode = {0};
  frame_begin(&mode, TAG_GET_INTEGRATION_MODE);
  frame_finish(&mode);

  bool ok = false;
  uint32_t tag = 0, arg = 0;
  pthread_mutex_lock(&request_mutex);
  bool locked = lock_fifo(h);
  drain_fd(h->ack_fd);
  enum Outcome out = exchange(h, &version, &tag, &arg);
  if (out == OUTCOME_OK && tag == TAG_ERR) {
    fprintf(stderr,
            "instrument-hooks: the runner rejected protocol version %d; "
            "continuing without instrumentation\n",
            PROTOCOL_VERSION);
  } else if (out == OUTCOME_OK && tag == TAG_ACK) {
    out = exchange(h, &mode, &tag, &arg);
    /* Acks before the IntegrationModeResponse are replies the runner wrote
     * after our drain to commands of a client that died without reading
     * them (the runner was still working through them), one of which we
     * took for our SetVersion's: ours comes after them, in order. */
    uint64_t deadline = monotonic_ms() + ACK_TIMEOUT_MS;
    for (int stale = 0;
         out == OUTCOME_OK && tag == TAG_ACK && stale < MAX_STALE_REPLIES;
         ++stale)
      out = read_reply(h, &tag, &arg, deadline);
    ok = out == OUTCOME_OK && tag == TAG_INTEGRATION_MODE_RESPONSE &&
         arg == MODE_WALLTIME;
  }
  unlock_fifo(h, locked);
  pthread_mutex_unlock(&request_mutex);
  free(version.data);
  free(mode.data);
  return ok;
}

/* ---- public API ----------------------------------------------------------*/

InstrumentHooks* instrument_hooks_init(void) {
  InstrumentHooks* h = calloc(1, sizeof(*h));
  if (h == NULL) return NULL;
  h->ctl_fd = h->ack_fd = -1;
  h->owner = getpid();
  pthread_once(&atfork_once, register_atfork);
  const char* ctl_path = fifo_path("RUNNER_CTL_FIFO", DEFAULT_CTL_PATH);
  const char* ack_path = fifo_path("RUNNER_ACK_FIFO", DEFAULT_ACK_PATH);
  if (!runner_listening(ctl_path)) return h;
  h->ctl_path = strdup(ctl_path);
  h->ack_path = strdup(ack_path);
  if (h->ctl_path == NULL || h->ack_path == NULL) return h;
  h->ctl_fd = open_fifo(ctl_path);
  if (h->ctl_fd >= 0) h->ack_fd = open_fifo(ack_path);
  if (h->ctl_fd >= 0 && h->ack_fd >= 0) h->instrumented = handshake(h);
  if (!h->instrumented) {
    pthread_mutex_lock(&request_mutex);
    close_fifos(h);
    pthread_mutex_unlock(&request_mutex);
  }
  return h;
}

void instrument_hooks_deinit(InstrumentHooks* hooks) {
  if (hooks == NULL) return;
  pthread_mutex_lock(&request_mutex);
  close_fifos(hooks);
  pthread_mutex_unlock(&request_mutex);
  free(hooks->ctl_path);
  free(hooks->ack_path);
  free(hooks);
}

bool instrument_hooks_is_instrumented(InstrumentHooks* hooks) {
  return hooks != NULL && hooks->instrumented;
}

static uint8_t send_unit(InstrumentHooks* hooks, uint32_t tag) {
  if (!instrument_hooks_is_instrumented(hooks)) return 0;
  Buffer b = {0};
  frame_begin(&b, tag);
  return to_code(request_ack(hooks, &b));
}

uint8_t instrument_hooks_start_benchmark(InstrumentHooks* hooks) {
  return send_unit(hooks, TAG_START_BENCHMARK);
}

uint8_t instrument_hooks_stop_benchmark(InstrumentHooks* hooks) {
  return send_unit(hooks, TAG_STOP_BENCHMARK);
}

uint8_t instrument_hooks_set_executed_benchmark(InstrumentHooks* hooks,
                                                int32_t pid, const char* uri) {
  if (!instrument_hooks_is_instrumented(hooks)) return 0;
  if (uri == NULL) return 1;
  Buffer b = {0};
  frame_begin(&b, TAG_CURRENT_BENCHMARK);
  buf_i32(&b, pid);
  buf_str(&b, uri);
  return to_code(request_ack(hooks, &b));
}

uint8_t instrument_hooks_executed_benchmark(InstrumentHooks* hooks, int32_t pid,
                                            const char* uri) {
  return instrument_hooks_set_executed_benchmark(hooks, pid, uri);
}

uint8_t instrument_hooks_set_integration(InstrumentHooks* hooks,
                                         const char* name,
                                         const char* version) {
  if (!instrument_hooks_is_instrumented(hooks)) return 0;
  if (name == NULL || version == NULL) return 1;
  Buffer b = {0};
  frame_begin(&b, TAG_SET_INTEGRATION);
  buf_str(&b, name);
  buf_str(&b, version);
  return to_code(request_ack(hooks, &b));
}

uint8_t instrument_hooks_add_marker(InstrumentHooks* hooks, int32_t pid,
                                    uint8_t marker_type, uint64_t timestamp) {
  if (marker_type > MARKER_TYPE_BENCHMARK_END) return 2;
  if (!instrument_hooks_is_instrumented(hooks)) return 0;
  Buffer b = {0};
  frame_begin(&b, TAG_ADD_MARKER);
  buf_i32(&b, pid);
  buf_u32(&b, marker_type);
  buf_u64(&b, timestamp);
  return to_code(request_ack(hooks, &b));
}

uint64_t instrument_hooks_current_timestamp(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}
