/*
 * Preloaded into a test desktop's processes (LD_PRELOAD) to force what
 * gnome-shell 43 now and then does by itself: the child its main thread
 * forks to start ibus-daemon hangs before its exec, and the shell, reading
 * that child's exec report, hangs with it. Only in gnome-shell, only a fork
 * of its main thread, only once per marker file (AXSNAP_TEST_HANG_FORK, made
 * here with O_EXCL): the hung child writes "<its pid> <the shell's pid>"
 * there and waits for a signal that never comes.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

static int forked_by_main_thread;

/* Decimal digits of `value` at `out`; their count. No stdio: this runs between fork and exec. */
static size_t put_number(char* out, unsigned value) {
  char digits[12];
  size_t n = 0;
  do {
    digits[n++] = (char)('0' + value % 10);
    value /= 10;
  } while (value != 0);
  for (size_t i = 0; i < n; i++) out[i] = digits[n - 1 - i];
  return n;
}

static void before_fork(void) { forked_by_main_thread = syscall(SYS_gettid) == getpid(); }

static void in_child(void) {
  const char* marker = getenv("AXSNAP_TEST_HANG_FORK");
  if (!forked_by_main_thread || marker == NULL || strcmp(program_invocation_short_name, "gnome-shell") != 0) return;
  int fd = open(marker, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0600);
  if (fd < 0) return;
  char line[32];
  size_t n = put_number(line, (unsigned)getpid());
  line[n++] = ' ';
  n += put_number(line + n, (unsigned)getppid());
  line[n++] = '\n';
  if (write(fd, line, n) < 0) {
    /* The marker exists; the test reads what it can. */
  }
  close(fd);
  for (;;) pause();
}

__attribute__((constructor)) static void install(void) { pthread_atfork(before_fork, NULL, in_child); }
