/*
 * A process whose main thread has exited while another of its threads still
 * runs: /proc shows the process as a zombie ("Z"), yet its files (here a
 * listening unix socket at argv[1]) stay open until that thread ends too. A
 * process is not gone until then. Used by test/linux/process-exit.test.ts.
 */
#include <pthread.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

static void* hold(void* arg) {
  (void)arg;
  for (;;) pause();
  return NULL;
}

int main(int argc, char** argv) {
  if (argc != 2) return 2;
  int fd = socket(AF_UNIX, SOCK_STREAM, 0);
  struct sockaddr_un addr;
  memset(&addr, 0, sizeof addr);
  addr.sun_family = AF_UNIX;
  strncpy(addr.sun_path, argv[1], sizeof addr.sun_path - 1);
  if (fd < 0 || bind(fd, (struct sockaddr*)&addr, sizeof addr) != 0 || listen(fd, 1) != 0) return 1;
  pthread_t thread;
  if (pthread_create(&thread, NULL, hold, NULL) != 0) return 1;
  pthread_exit(NULL);
}
