/*
 * agentd's command spawner, compiled at start by Bun's TinyCC (bun:ffi cc). Every command agentd
 * runs for someone else starts here: one clone(CLONE_VM|CLONE_VFORK) like posix_spawn, and in the
 * child only raw system calls until execve — no Bun helper process, no shell around it.
 * The child joins its cgroups, takes its limits, drops to the command user, sets no_new_privs and
 * only then enters its working directory, so every check after that is made as the command user.
 * It never returns to JavaScript: a failure is written to the spec and the child exits.
 * No header: TinyCC in Bun has none, so the few declarations are written out.
 */
extern long syscall(long number, ...);
extern int clone(int (*fn)(void *), void *stack, int flags, void *arg, ...);
extern void *malloc(unsigned long size);
extern void free(void *p);
extern int *__errno_location(void);

#if defined(__x86_64__)
#define NR_WRITE 1
#define NR_CLOSE 3
#define NR_RT_SIGACTION 13
#define NR_RT_SIGPROCMASK 14
#define NR_IOCTL 16
#define NR_EXECVE 59
#define NR_WAIT4 61
#define NR_FCNTL 72
#define NR_CHDIR 80
#define NR_UMASK 95
#define NR_SETSID 112
#define NR_SETGROUPS 116
#define NR_SETRESUID 117
#define NR_SETRESGID 119
#define NR_PRCTL 157
#define NR_EXIT_GROUP 231
#define NR_OPENAT 257
#define NR_DUP3 292
#define NR_PRLIMIT64 302
#elif defined(__aarch64__)
#define NR_WRITE 64
#define NR_CLOSE 57
#define NR_RT_SIGACTION 134
#define NR_RT_SIGPROCMASK 135
#define NR_IOCTL 29
#define NR_EXECVE 221
#define NR_WAIT4 260
#define NR_FCNTL 25
#define NR_CHDIR 49
#define NR_UMASK 166
#define NR_SETSID 157
#define NR_SETGROUPS 159
#define NR_SETRESUID 147
#define NR_SETRESGID 149
#define NR_PRCTL 167
#define NR_EXIT_GROUP 94
#define NR_OPENAT 56
#define NR_DUP3 24
#define NR_PRLIMIT64 261
#else
#error "agentd spawns commands on x86_64 and aarch64 only"
#endif
#define NR_CLOSE_RANGE 436

#define CLONE_VM 0x100
#define CLONE_VFORK 0x4000
#define SIGCHLD 17
#define TIOCSCTTY 0x540E
#define F_SETFD 2
#define PR_SET_NO_NEW_PRIVS 38
#define PR_SET_PDEATHSIG 1
#define AT_FDCWD -100
#define O_WRONLY 1
#define O_CLOEXEC 0x80000
#define STACK_BYTES (256 * 1024)

/* Every field a long, so JavaScript lays the struct out without alignment rules. */
struct spawn_spec {
  long path;        /* const char *: absolute program path */
  long argv;        /* char *const * */
  long envp;        /* char *const * */
  long cwd;         /* const char * or 0 */
  long tty_fd;      /* >= 0: the terminal's slave side, which becomes the controlling terminal and fds 0-2 */
  long stdio[3];    /* with tty_fd < 0: fds for 0, 1, 2 */
  long uid;         /* -1: keep */
  long gid;         /* -1: keep */
  long ngroups;     /* -1: keep */
  long groups;      /* const unsigned int * */
  long ncgroups;
  long cgroup_fds;  /* const int *: open cgroup.procs files the child joins */
  long no_new_privs;
  long oom_score_adj; /* -1001: keep */
  long nrlimits;
  long rlimits;     /* const long *: (resource, soft, hard) triples */
  long umask;       /* -1: keep */
  long err_stage;   /* out: where the child failed (0: it exec'd) */
  long err_errno;   /* out */
};

enum { STAGE_NONE, STAGE_SIGNALS, STAGE_SESSION, STAGE_TERMINAL, STAGE_STDIO, STAGE_CGROUP, STAGE_OOM,
       STAGE_RLIMIT, STAGE_GROUPS, STAGE_GID, STAGE_UID, STAGE_NO_NEW_PRIVS, STAGE_CWD, STAGE_EXEC };

/* glibc's syscall() answers -1 and leaves the reason in errno (the parent thread's, shared until exec). */
static int fail(struct spawn_spec *spec, long stage) {
  spec->err_stage = stage;
  spec->err_errno = *__errno_location();
  syscall(NR_EXIT_GROUP, 127);
  return 127;
}

static int decimal(long value, char *out) {
  char digits[24];
  int n = 0, len = 0;
  unsigned long v = value < 0 ? -value : value;
  do { digits[n++] = '0' + v % 10; v /= 10; } while (v);
  if (value < 0) out[len++] = '-';
  while (n) out[len++] = digits[--n];
  return len;
}

static int child(void *arg) {
  struct spawn_spec *spec = arg;
  long rc;
  int i;
  /* A zeroed struct sigaction is SIG_DFL without flags: Bun ignores SIGPIPE, which would survive exec. */
  long no_action[4] = {0, 0, 0, 0};
  for (i = 1; i <= 64; i++)
    if (i != 9 && i != 19) syscall(NR_RT_SIGACTION, i, no_action, 0, 8);
  if (spec->tty_fd >= 0) {
    if ((rc = syscall(NR_SETSID)) < 0) return fail(spec, STAGE_SESSION);
    if ((rc = syscall(NR_IOCTL, spec->tty_fd, TIOCSCTTY, 0)) < 0) return fail(spec, STAGE_TERMINAL);
    for (i = 0; i < 3; i++)
      if ((rc = syscall(NR_DUP3, spec->tty_fd, i, 0)) < 0) return fail(spec, STAGE_TERMINAL);
  } else {
    if ((rc = syscall(NR_SETSID)) < 0) return fail(spec, STAGE_SESSION);
    for (i = 0; i < 3; i++) {
      long fd = spec->stdio[i];
      rc = fd == i ? syscall(NR_FCNTL, fd, F_SETFD, 0) : syscall(NR_DUP3, fd, i, 0);
      if (rc < 0) return fail(spec, STAGE_STDIO);
    }
  }
  /* Joined before anything else runs: a fork from here on is counted against the session's pids.max. */
  for (i = 0; i < spec->ncgroups; i++)
    if ((rc = syscall(NR_WRITE, ((int *)spec->cgroup_fds)[i], "0", 1)) < 0) return fail(spec, STAGE_CGROUP);
  if (spec->oom_score_adj != -1001) {
    char text[24];
    int len = decimal(spec->oom_score_adj, text);
    long fd = syscall(NR_OPENAT, AT_FDCWD, "/proc/self/oom_score_adj", O_WRONLY | O_CLOEXEC, 0);
    if (fd < 0) return fail(spec, STAGE_OOM);
    rc = syscall(NR_WRITE, fd, text, len);
    syscall(NR_CLOSE, fd);
    if (rc < 0) return fail(spec, STAGE_OOM);
  }
  for (i = 0; i < spec->nrlimits; i++) {
    long *triple = (long *)spec->rlimits + 3 * i;
    if ((rc = syscall(NR_PRLIMIT64, 0, triple[0], triple + 1, 0)) < 0) return fail(spec, STAGE_RLIMIT);
  }
  if (spec->umask >= 0) syscall(NR_UMASK, spec->umask);
  /* Raw calls: glibc's setuid would signal every thread it believes this process has (Bun's). */
  if (spec->ngroups >= 0 && (rc = syscall(NR_SETGROUPS, spec->ngroups, spec->groups)) < 0) return fail(spec, STAGE_GROUPS);
  if (spec->gid >= 0 && (rc = syscall(NR_SETRESGID, spec->gid, spec->gid, spec->gid)) < 0) return fail(spec, STAGE_GID);
  if (spec->uid >= 0 && (rc = syscall(NR_SETRESUID, spec->uid, spec->uid, spec->uid)) < 0) return fail(spec, STAGE_UID);
  if (spec->no_new_privs && (rc = syscall(NR_PRCTL, PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)) < 0) return fail(spec, STAGE_NO_NEW_PRIVS);
  if (spec->cwd && (rc = syscall(NR_CHDIR, spec->cwd)) < 0) return fail(spec, STAGE_CWD);
  /* Nothing of agentd's (its store, its sockets, the cgroup files) reaches the command. */
  syscall(NR_CLOSE_RANGE, 3L, 0xFFFFFFFFL, 0L);
  long empty[16] = {0};
  syscall(NR_RT_SIGPROCMASK, 2, empty, 0, 8);
  rc = syscall(NR_EXECVE, spec->path, spec->argv, spec->envp);
  return fail(spec, STAGE_EXEC);
}

/* Returns the child's pid, or -1 with spec->err_stage and spec->err_errno set (the child is reaped). */
int agentd_spawn(struct spawn_spec *spec) {
  long all[16], saved[16];
  int i, pid;
  char *stack = malloc(STACK_BYTES);
  if (!stack) { spec->err_stage = STAGE_EXEC; spec->err_errno = 12; return -1; }
  for (i = 0; i < 16; i++) all[i] = -1;
  spec->err_stage = 0;
  spec->err_errno = 0;
  /* No handler of Bun's may run in the child, which shares its memory until exec. */
  syscall(NR_RT_SIGPROCMASK, 2, all, saved, 8);
  pid = clone(child, stack + STACK_BYTES, CLONE_VM | CLONE_VFORK | SIGCHLD, spec);
  syscall(NR_RT_SIGPROCMASK, 2, saved, 0, 8);
  free(stack);
  if (pid < 0) { spec->err_stage = STAGE_EXEC; spec->err_errno = 11; return -1; }
  if (spec->err_stage) {
    int status;
    syscall(NR_WAIT4, pid, &status, 0, 0);
    return -1;
  }
  return pid;
}
