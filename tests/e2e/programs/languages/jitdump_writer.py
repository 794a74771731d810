"""Writes ./jit-<pid>.dump and maps it executable, as JIT runtimes do, then
spins for a moment (tests/e2e/languages_test.cpp).

  jitdump_writer.py truncated   one whole CODE_LOAD of "jitted_function"
                                at 0x7e0000001000, then half a record
  jitdump_writer.py garbage     no jitdump at all behind the name
"""
import mmap
import os
import struct
import sys
import time


def code_load(name, addr, size, index):
    body = struct.pack("<IIQQQQ", os.getpid(), os.getpid(), addr, addr, size,
                       index) + name.encode() + b"\0" + b"\xc3" * size
    return struct.pack("<IIQ", 0, 16 + len(body), time.monotonic_ns()) + body


def main():
    if sys.argv[1] == "truncated":
        data = struct.pack("<IIIIIIQQ", 0x4A695444, 1, 40, 62, 0, os.getpid(),
                           0, 0)
        data += code_load("jitted_function", 0x7E0000001000, 64, 1)
        data += code_load("cut_short", 0x7E0000002000, 64, 2)[:40]
    else:
        data = b"JiTD is not what this is" * 100
    path = "jit-%d.dump" % os.getpid()
    with open(path, "wb") as f:
        f.write(data)
    fd = os.open(path, os.O_RDONLY)
    marker = mmap.mmap(fd, len(data), mmap.MAP_PRIVATE,
                       mmap.PROT_READ | mmap.PROT_EXEC)
    deadline = time.monotonic() + 0.3
    while time.monotonic() < deadline:
        pass
    marker.close()


if __name__ == "__main__":
    main()
