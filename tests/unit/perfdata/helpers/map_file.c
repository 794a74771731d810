/* Maps argv[1] (whole file, PROT_READ|PROT_EXEC, private), closes the fd,
 * prints "ready\n" and waits until stdin is closed. Used to test pinning of
 * mapped files that are deleted or replaced while mapped. */
#include <fcntl.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

int main(int argc, char** argv) {
  if (argc < 2) return 2;
  int fd = open(argv[1], O_RDONLY);
  if (fd < 0) return 3;
  struct stat st;
  if (fstat(fd, &st) != 0 || st.st_size == 0) return 4;
  void* p =
      mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0);
  if (p == MAP_FAILED) return 5;
  close(fd);
  printf("ready %p\n", p);
  fflush(stdout);
  char buf[64];
  while (read(0, buf, sizeof(buf)) > 0) {
  }
  return 0;
}
