/**
 * Python that the harness runs first under the `unshare` floor, where no bubblewrap builds the sandbox's
 * view. It is root of its own user and mount namespaces, so it can do what bwrap would: make every mount
 * read-only (keeping the flags the kernel locks), give the solution a fresh tmpfs /tmp as its directory,
 * then drop every capability, so neither it nor the solution can mount anything back.
 */
export const FLOOR_CONFINEMENT_SOURCE = String.raw`
import ctypes, os
def confine_floor(tmp_bytes):
    libc = ctypes.CDLL(None, use_errno=True)
    def mount(source, target, fstype, flags, data):
        if libc.mount(source, target.encode(), fstype, ctypes.c_ulong(flags), data) != 0:
            raise OSError(ctypes.get_errno(), "mount %s" % target)
    MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC, MS_REMOUNT, MS_BIND, MS_REC, MS_PRIVATE = 1, 2, 4, 8, 32, 4096, 16384, 1 << 18
    LOCKED = {"nosuid": MS_NOSUID, "nodev": MS_NODEV, "noexec": MS_NOEXEC, "noatime": 1024, "nodiratime": 2048, "relatime": 1 << 21}
    mount(None, "/", None, MS_REC | MS_PRIVATE, None)
    for line in open("/proc/self/mountinfo").read().splitlines():
        fields = line.split()
        point = fields[4].encode().decode("unicode_escape")
        flags = MS_REMOUNT | MS_BIND | MS_RDONLY
        for option in fields[5].split(","):
            flags |= LOCKED.get(option, 0)
        try:
            mount(None, point, None, flags, None)
        except OSError:
            if point in ("/", "/usr", "/tmp", "/home", "/root", "/work", "/var", "/etc"):
                raise
    mount(b"tmpfs", "/tmp", b"tmpfs", MS_NOSUID | MS_NODEV, ("size=%d,mode=0700" % tmp_bytes).encode())
    os.chdir("/tmp")
    # No capability left, in any set: nothing can be remounted writable.
    for cap in range(64):
        libc.prctl(24, cap, 0, 0, 0)  # PR_CAPBSET_DROP
    libc.prctl(38, 1, 0, 0, 0)  # PR_SET_NO_NEW_PRIVS
    header = (ctypes.c_uint32 * 2)(0x20080522, 0)
    data = (ctypes.c_uint32 * 6)()
    if libc.syscall(126, header, data) != 0:  # capset on x86_64
        raise OSError(ctypes.get_errno(), "capset")
`;
