/**
 * Syscalls a solution never gets, with their numbers on x86_64 and aarch64, and why. Each class is an escape
 * the sandbox's namespaces alone do not close:
 * - reaching another process's memory or descriptors (ptrace, process_vm_*, pidfd_getfd, kcmp), which is how
 *   an answer would forge a verdict or undo its clean-up;
 * - memory no rlimit counts (memfd, SysV shared memory and message queues, POSIX message queues, userfaultfd),
 *   and sockets: a socket's buffers are kernel memory no rlimit and no /proc figure of the sandbox counts (a 128 MB
 *   answer held 1 GiB in socketpairs), and a unix socket carries descriptors in flight past RLIMIT_NOFILE. The sandbox has no network,
 *   so only local sockets were possible; what needs one (asyncio's event loop, multiprocessing's managers) fails;
 * - state shared between answers, or between the tests of one answer, which share a sandbox, through the kernel
 *   (keyrings, POSIX message queues, which live in the sandbox's IPC namespace);
 * - kernel surfaces that bypass or outlive the filter (io_uring, bpf, perf) and new mounts or namespaces.
 */
const DENIED: ReadonlyArray<readonly [name: string, x64: number, arm64: number]> = [
  ['ptrace', 101, 117],
  ['process_vm_readv', 310, 270],
  ['process_vm_writev', 311, 271],
  ['pidfd_getfd', 438, 438],
  ['kcmp', 312, 272],
  ['memfd_create', 319, 279],
  ['memfd_secret', 447, 447],
  ['userfaultfd', 323, 282],
  ['shmget', 29, 194],
  ['shmat', 30, 196],
  ['shmctl', 31, 195],
  ['shmdt', 67, 197],
  ['msgget', 68, 186],
  ['msgsnd', 69, 189],
  ['msgrcv', 70, 188],
  ['msgctl', 71, 187],
  ['mq_open', 240, 180],
  ['semget', 64, 190],
  ['semop', 65, 193],
  ['semctl', 66, 191],
  ['semtimedop', 220, 192],
  ['keyctl', 250, 219],
  ['add_key', 248, 217],
  ['request_key', 249, 218],
  ['io_uring_setup', 425, 425],
  ['io_uring_enter', 426, 426],
  ['io_uring_register', 427, 427],
  ['bpf', 321, 280],
  ['perf_event_open', 298, 241],
  ['mount', 165, 40],
  ['umount2', 166, 39],
  ['pivot_root', 155, 41],
  ['unshare', 272, 97],
  ['setns', 308, 268],
  ['open_tree', 428, 428],
  ['move_mount', 429, 429],
  ['fsopen', 430, 430],
  ['fsconfig', 431, 431],
  ['fsmount', 432, 432],
  ['fspick', 433, 433],
  ['mount_setattr', 442, 442],
  ['open_by_handle_at', 304, 265],
  ['socket', 41, 198],
  ['socketpair', 53, 199],
];

const ARCHES = {
  x64: { audit: 0xc000003e, column: 1, clone: 56, clone3: 435, prctl: 157 },
  arm64: { audit: 0xc00000b7, column: 2, clone: 220, clone3: 435, prctl: 167 },
} as const;

// Classic BPF opcodes and seccomp return values (linux/filter.h, linux/seccomp.h).
const LD_ABS_W = 0x20;
const JEQ = 0x15;
const JGE = 0x35;
const JSET = 0x45;
const RET = 0x06;
const RET_KILL_PROCESS = 0x80000000;
const RET_ALLOW = 0x7fff0000;
const retErrno = (errno: number): number => 0x00050000 | errno;
const EPERM = 1;
const ENOSYS = 38;
// seccomp_data: nr at 0, arch at 4, args[0] (its low half on these little-endian machines) at 16.
const NR = 0;
const ARCH = 4;
const ARG0 = 16;
const X32_BIT = 0x40000000;
const PR_SET_PDEATHSIG = 1;
// CLONE_NEWNS, NEWCGROUP, NEWUTS, NEWIPC, NEWUSER, NEWPID, NEWNET and NEWTIME: no namespace of its own.
const CLONE_NEW_ANY = 0x00020000 | 0x02000000 | 0x04000000 | 0x08000000 | 0x10000000 | 0x20000000 | 0x40000000 | 0x80;

/**
 * The names of the syscalls the filter refuses with EPERM; also clone with a namespace flag and
 * prctl(PR_SET_PDEATHSIG) (no process of the answer chooses how it ends: the launcher, its namespace's init,
 * ends them all with itself). clone3 gets ENOSYS.
 */
export const DENIED_SYSCALLS: readonly string[] = DENIED.map(([name]) => name);

/**
 * The solution's seccomp filter as the kernel's `sock_filter` array (8 bytes per instruction, host order), for
 * `prctl(PR_SET_SECCOMP)`. Another architecture's syscalls (x32, or 32-bit entry on x86_64) kill the process;
 * clone3 answers ENOSYS, so that libc falls back to clone, whose flags a classic filter can read.
 */
export function seccompFilter(arch: string = process.arch): Buffer {
  const target = ARCHES[arch as keyof typeof ARCHES];
  if (!target) throw new RangeError(`no seccomp filter for architecture ${arch}; the code sandbox runs on x64 and arm64`);
  const program: Array<[code: number, jt: number, jf: number, k: number]> = [
    [LD_ABS_W, 0, 0, ARCH],
    [JEQ, 1, 0, target.audit],
    [RET, 0, 0, RET_KILL_PROCESS],
    [LD_ABS_W, 0, 0, NR],
    [JGE, 0, 1, X32_BIT],
    [RET, 0, 0, retErrno(EPERM)],
  ];
  for (const row of DENIED) program.push([JEQ, 0, 1, row[target.column]], [RET, 0, 0, retErrno(EPERM)]);
  program.push(
    [JEQ, 0, 1, target.clone3],
    [RET, 0, 0, retErrno(ENOSYS)],
    [JEQ, 0, 4, target.prctl],
    [LD_ABS_W, 0, 0, ARG0],
    [JEQ, 0, 1, PR_SET_PDEATHSIG],
    [RET, 0, 0, retErrno(EPERM)],
    [RET, 0, 0, RET_ALLOW],
    [JEQ, 0, 3, target.clone],
    [LD_ABS_W, 0, 0, ARG0],
    [JSET, 0, 1, CLONE_NEW_ANY],
    [RET, 0, 0, retErrno(EPERM)],
    [RET, 0, 0, RET_ALLOW],
  );
  const bytes = Buffer.alloc(program.length * 8);
  program.forEach(([code, jt, jf, k], i) => {
    bytes.writeUInt16LE(code, i * 8);
    bytes.writeUInt8(jt, i * 8 + 2);
    bytes.writeUInt8(jf, i * 8 + 3);
    bytes.writeUInt32LE(k >>> 0, i * 8 + 4);
  });
  return bytes;
}
