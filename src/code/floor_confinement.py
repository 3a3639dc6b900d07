# Python that the launcher runs first under the `unshare` floor, where no bubblewrap builds the sandbox's view
# (src/code/floor-confinement-source.ts reads this file; src/code/sandbox-command.ts puts it before launcher.py).
# It is root of its own user, mount and PID namespaces, so it builds what bwrap would: a new root holding only a
# read-only `/usr` (and the interpreter's own tree, such as the code answers' virtualenv), a fresh `/proc` with
# `/proc/sys` read-only, four device nodes, and capped tmpfs `/tmp`, `/sandbox` and `/dev/shm`; it pivots into it,
# detaches the host's tree (no dataset, no worker file stays reachable), makes the root read-only and drops every
# capability, so neither it nor the solution can mount anything back.
# Annotations in quotes or built-in types only: nothing is imported or evaluated for them.
def confine_floor(floor_json: str, max_file_bytes: int) -> None:
    import ctypes
    import json
    import os
    floor = json.loads(floor_json)
    # A session of its own, as bwrap's --new-session: unshare's process group spans the PID namespaces, and
    # a kill(0) from the solution would reach unshare itself, outside the sandbox.
    os.setsid()
    libc = ctypes.CDLL(None, use_errno=True)
    def check(result: int, what: str) -> None:
        if result != 0:
            raise OSError(ctypes.get_errno(), what)
    def mount(source: "bytes | None", target: str, fstype: "bytes | None", flags: int, data: "bytes | None" = None) -> None:
        check(libc.mount(source, target.encode(), fstype, ctypes.c_ulong(flags), data), "mount %s" % target)
    MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC, MS_REMOUNT, MS_BIND, MS_REC, MS_PRIVATE = 1, 2, 4, 8, 32, 4096, 16384, 1 << 18
    # statvfs flags -> mount flags the kernel locks on a bind made in a user namespace.
    LOCKED = ((1, MS_RDONLY), (2, MS_NOSUID), (4, MS_NODEV), (8, MS_NOEXEC), (1024, 1024), (2048, 2048), (4096, 1 << 21))
    def bind_read_only(source: str, target: str) -> None:
        os.makedirs(target, exist_ok=True)
        mount(source.encode(), target, None, MS_BIND | MS_REC)
        flags = MS_REMOUNT | MS_BIND | MS_RDONLY
        held = os.statvfs(source).f_flag
        for stat_flag, mount_flag in LOCKED:
            if held & stat_flag:
                flags |= mount_flag
        mount(None, target, None, flags)
    def tmpfs(target: str, size: int, mode: str) -> None:
        os.makedirs(target, exist_ok=True)
        mount(b"tmpfs", target, b"tmpfs", MS_NOSUID | MS_NODEV, ("size=%d,mode=%s" % (size, mode)).encode())
    mount(None, "/", None, MS_REC | MS_PRIVATE)
    root = "/tmp"
    # The interpreter's tree (a virtualenv), held open before the new root covers the host's /tmp it may live in.
    trees = [(tree, os.open(tree, os.O_PATH | os.O_DIRECTORY)) for tree in floor["extraTrees"]]
    tmpfs(root, 1 << 20, "0755")
    bind_read_only("/usr", root + "/usr")
    for link in ("bin", "lib", "lib64", "sbin"):
        os.symlink("usr/" + link, root + "/" + link)
    os.makedirs(root + "/proc")
    mount(b"proc", root + "/proc", b"proc", MS_NOSUID | MS_NODEV | MS_NOEXEC)
    bind_read_only(root + "/proc/sys", root + "/proc/sys")
    os.makedirs(root + "/dev")
    for device in ("null", "zero", "random", "urandom"):
        open(root + "/dev/" + device, "w").close()
        mount(("/dev/" + device).encode(), root + "/dev/" + device, None, MS_BIND)
    for name, target in (("fd", "/proc/self/fd"), ("stdin", "/proc/self/fd/0"), ("stdout", "/proc/self/fd/1"), ("stderr", "/proc/self/fd/2")):
        os.symlink(target, root + "/dev/" + name)
    size = max_file_bytes
    for place in ("/tmp", "/sandbox", "/dev/shm"):
        tmpfs(root + place, size, "1777" if place != "/sandbox" else "0700")
    # After the tmpfs mounts, as under bwrap: a tree under /tmp stays visible, read-only, at its own path.
    for tree, held in trees:
        bind_read_only("/proc/self/fd/%d" % held, root + tree)
        os.close(held)
    os.chdir(root)
    check(libc.syscall(floor["pivotRootSyscall"], b".", b"."), "pivot_root")
    check(libc.umount2(b".", 2), "detach the host's root")  # MNT_DETACH
    os.chdir("/")
    mount(None, "/", None, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV)
    os.chdir("/sandbox")
    # No capability left, in any set: nothing can be remounted writable.
    for cap in range(64):
        libc.prctl(24, cap, 0, 0, 0)  # PR_CAPBSET_DROP
    header = (ctypes.c_uint32 * 2)(0x20080522, 0)
    data = (ctypes.c_uint32 * 6)()
    check(libc.syscall(floor["capsetSyscall"], header, data), "capset")
