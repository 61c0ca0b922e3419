/*
 * agentd's command spawner, compiled at start by Bun's TinyCC (bun:ffi cc). Every command agentd
 * runs for someone else starts here: one clone(CLONE_VM|CLONE_VFORK) like posix_spawn, and in the
 * child only raw system calls until execve — no Bun helper process, no shell around it.
 * The child joins its cgroups, takes its limits, drops to the command user, sets no_new_privs and
 * only then enters its working directory, so every check after that is made as the command user.
 * It never returns to JavaScript: a failure is written to the spec and the child exits.
 * One file past ~300 lines on purpose: TinyCC compiles one source, and the two children share its helpers.
 *
 * With a sandbox (agentd started as a user, so there is no other uid to run commands as), the child
 * joins the user namespace agentd made for its sandboxes (the same uid inside: nativeSpawn.ts) and
 * makes itself a mount and a pid namespace there, as bubblewrap does unprivileged: agentd's own
 * paths hidden under empty tmpfs (or /dev/null), its binary read-only, a /proc of the new pid
 * namespace only. The command must be pid 1 of that namespace, so the vfork child starts it as a
 * grandchild (CLONE_PARENT: agentd's child all the same, waited for as before) and exits; the
 * grandchild also shares memory and is vforked, so it reports failures in the spec too.
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
#define NR_STATFS 137
#define NR_MOUNT 165
#define NR_GETEUID 107
#define NR_UNSHARE 272
#define NR_SETNS 308
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
#define NR_STATFS 43
#define NR_MOUNT 40
#define NR_GETEUID 175
#define NR_UNSHARE 97
#define NR_SETNS 268
#else
#error "agentd spawns commands on x86_64 and aarch64 only"
#endif
#define NR_CLOSE_RANGE 436

#define CLONE_VM 0x100
#define CLONE_VFORK 0x4000
#define CLONE_PARENT 0x8000
#define CLONE_NEWNS 0x20000
#define CLONE_NEWUSER 0x10000000
#define CLONE_NEWPID 0x20000000
#define MS_RDONLY 1
#define MS_NOSUID 2
#define MS_NODEV 4
#define MS_NOEXEC 8
#define MS_REMOUNT 32
#define MS_BIND 4096
#define MS_REC 16384
#define MS_PRIVATE (1 << 18)
#define ENOTDIR 20
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
  long sandbox;     /* 0: none; 1: the namespaces below; 2: a new user namespace, unmapped, and nothing else */
  long userns_fd;   /* sandbox 1: the user namespace to join (/proc/<pid>/ns/user of agentd's helper) */
  long nhide;
  long hide;        /* const char *const *: covered by an empty read-only tmpfs (a directory) or /dev/null (a file) */
  long nread_only;
  long read_only;   /* const char *const *: bound read-only onto themselves */
  long private_terminals; /* 1: a devpts of its own on /dev/pts */
  long npin;
  long pin;         /* const char *const *: directories bound onto themselves, so they cannot be renamed */
  long err_index;   /* out: which pin, hide or read_only path failed */
  long pid;         /* out, sandbox only: the command's pid (agentd's namespace), the vfork child's grandchild */
};

enum { STAGE_NONE, STAGE_SIGNALS, STAGE_SESSION, STAGE_TERMINAL, STAGE_STDIO, STAGE_CGROUP, STAGE_OOM,
       STAGE_RLIMIT, STAGE_GROUPS, STAGE_GID, STAGE_UID, STAGE_NO_NEW_PRIVS, STAGE_CWD, STAGE_EXEC,
       STAGE_NAMESPACES, STAGE_ID_MAP, STAGE_PID_NAMESPACE, STAGE_MOUNTS, STAGE_PIN, STAGE_HIDE, STAGE_READ_ONLY, STAGE_TERMINALS, STAGE_PROC };

/* What the vfork child hands the grandchild: both share this frame's memory with agentd. */
struct call {
  struct spawn_spec *spec;
  char *stack;      /* the grandchild's own stack, allocated by agentd_spawn (no malloc in a child) */
};

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

/*
 * The grandchild's mounts, in the namespaces the vfork child made. Mounts copied from agentd's
 * namespace are locked here, and the ones made here are locked in any namespace the command makes
 * below (unshare -Urm): it cannot unmount or remount them to look under them.
 */
static int mounts(struct spawn_spec *spec) {
  long rc, i;
  long info[16];
  const char **hide = (const char **)spec->hide;
  const char **read_only = (const char **)spec->read_only;
  const char **pin = (const char **)spec->pin;
  /* Nothing mounted here reaches agentd's namespace, nor the other way. */
  if ((rc = syscall(NR_MOUNT, 0, "/", 0, MS_REC | MS_PRIVATE, 0)) < 0) return fail(spec, STAGE_MOUNTS);
  /*
   * The directories above what is hidden or read-only that the command's uid could rename: a mount
   * point cannot be renamed or removed (EBUSY), so it cannot move ~/.config aside and put its own
   * config where agentd will read it next. Still writable inside.
   */
  for (i = 0; i < spec->npin; i++) {
    spec->err_index = i;
    if ((rc = syscall(NR_MOUNT, pin[i], pin[i], 0, MS_BIND | MS_REC, 0)) < 0) return fail(spec, STAGE_PIN);
  }
  for (i = 0; i < spec->nhide; i++) {
    spec->err_index = i;
    /* Mode 0 and read-only: not even its owner (the command's uid) may list it, chmod it or fill it. */
    rc = syscall(NR_MOUNT, "tmpfs", hide[i], "tmpfs", MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC, "mode=0,size=4k,nr_inodes=2");
    if (rc < 0 && *__errno_location() == ENOTDIR) rc = syscall(NR_MOUNT, "/dev/null", hide[i], 0, MS_BIND, 0);
    if (rc < 0) return fail(spec, STAGE_HIDE);
  }
  for (i = 0; i < spec->nread_only; i++) {
    spec->err_index = i;
    if ((rc = syscall(NR_MOUNT, read_only[i], read_only[i], 0, MS_BIND | MS_REC, 0)) < 0) return fail(spec, STAGE_READ_ONLY);
    /* A remount must keep the flags locked on the mount it was bound from (nosuid, nodev, noexec). */
    if ((rc = syscall(NR_STATFS, read_only[i], info)) < 0) return fail(spec, STAGE_READ_ONLY);
    rc = syscall(NR_MOUNT, 0, read_only[i], 0, MS_BIND | MS_REMOUNT | MS_RDONLY | (info[10] & (MS_NOSUID | MS_NODEV | MS_NOEXEC)), 0);
    if (rc < 0) return fail(spec, STAGE_READ_ONLY);
  }
  spec->err_index = 0;
  /*
   * Terminals of its own: /dev/pts/N of agentd's other sessions (a terminal a person types in) are
   * the same uid's, so else it could read their input. /dev/ptmx then opens in this instance. Its
   * own terminal, an fd from agentd's instance, still works, but has no name here (ttyname fails).
   */
  if (spec->private_terminals && (rc = syscall(NR_MOUNT, "devpts", "/dev/pts", "devpts", MS_NOSUID | MS_NOEXEC, "newinstance,ptmxmode=0666,mode=0620")) < 0)
    return fail(spec, STAGE_TERMINALS);
  /* The pid namespace's own /proc over agentd's: the command cannot see or name a process outside it. */
  if ((rc = syscall(NR_MOUNT, "proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, 0)) < 0) return fail(spec, STAGE_PROC);
  return 0;
}

/* Everything from the session on, then exec: the child itself, or the sandbox's grandchild (pid 1). */
static int command(void *arg) {
  struct spawn_spec *spec = arg;
  long rc;
  int i;
  if (spec->sandbox == 1) mounts(spec);
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
  /*
   * A preference, not a guard: started as a user, agentd is not dumpable, so until exec this child's
   * /proc/self files are root's and the write is refused. The command then keeps agentd's score.
   */
  if (spec->oom_score_adj != -1001) {
    char text[24];
    int len = decimal(spec->oom_score_adj, text);
    long fd = syscall(NR_OPENAT, AT_FDCWD, "/proc/self/oom_score_adj", O_WRONLY | O_CLOEXEC, 0);
    if (fd >= 0) {
      syscall(NR_WRITE, fd, text, len);
      syscall(NR_CLOSE, fd);
    }
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

/* The vfork child: agentd is suspended until it execs or exits. */
static int child(void *arg) {
  struct call *call = arg;
  struct spawn_spec *spec = call->spec;
  long rc;
  int i, pid;
  /* A zeroed struct sigaction is SIG_DFL without flags: Bun ignores SIGPIPE, which would survive exec. */
  long no_action[4] = {0, 0, 0, 0};
  for (i = 1; i <= 64; i++)
    if (i != 9 && i != 19) syscall(NR_RT_SIGACTION, i, no_action, 0, 8);
  if (!spec->sandbox) return command(spec);
  /* Root inside would keep every capability of the new namespace after exec, and could unmount what hides. */
  if (syscall(NR_GETEUID) == 0 || spec->uid >= 0 || spec->ngroups >= 0) { *__errno_location() = 1; return fail(spec, STAGE_NAMESPACES); }
  /* The helper that holds agentd's sandbox namespace: exec'd, so agentd (not dumpable) can write its maps. */
  if (spec->sandbox == 2) {
    if ((rc = syscall(NR_UNSHARE, CLONE_NEWUSER)) < 0) return fail(spec, STAGE_NAMESPACES);
    return command(spec);
  }
  /*
   * Joined, not made: a new one's uid_map would have to be written from here, and /proc/self of a
   * child sharing agentd's undumpable memory is root's. Its owner's process has every capability
   * in it until exec, and the mount and pid namespaces made next belong to it.
   */
  if ((rc = syscall(NR_SETNS, spec->userns_fd, CLONE_NEWUSER)) < 0) return fail(spec, STAGE_NAMESPACES);
  if ((rc = syscall(NR_UNSHARE, CLONE_NEWNS | CLONE_NEWPID)) < 0) return fail(spec, STAGE_NAMESPACES);
  /*
   * Pid 1 of the new namespace. CLONE_PARENT: agentd's child, so it is waited for, signalled and
   * pidfd-opened as any command. CLONE_VM|CLONE_VFORK: like this child, it shares agentd's memory
   * (no copy of agentd's pages, failures written to the spec) and this child waits for its exec.
   */
  pid = clone(command, call->stack + STACK_BYTES, CLONE_VM | CLONE_VFORK | CLONE_PARENT | SIGCHLD, spec);
  if (pid < 0) return fail(spec, STAGE_PID_NAMESPACE);
  spec->pid = pid;
  syscall(NR_EXIT_GROUP, 0);
  return 0;
}

/*
 * Returns the command's pid, or -1 with spec->err_stage and spec->err_errno set (the children are
 * reaped). With a sandbox the vfork child has exited by the time clone returns: it is reaped here,
 * and the pid returned is its grandchild's, agentd's child by CLONE_PARENT.
 */
int agentd_spawn(struct spawn_spec *spec) {
  long all[16], saved[16];
  int i, pid, status;
  struct call call;
  char *stacks = malloc(2 * STACK_BYTES);
  if (!stacks) { spec->err_stage = STAGE_EXEC; spec->err_errno = 12; return -1; }
  for (i = 0; i < 16; i++) all[i] = -1;
  spec->err_stage = 0;
  spec->err_errno = 0;
  spec->err_index = 0;
  spec->pid = 0;
  call.spec = spec;
  call.stack = stacks + STACK_BYTES;
  /* No handler of Bun's may run in the children, which share its memory until exec. */
  syscall(NR_RT_SIGPROCMASK, 2, all, saved, 8);
  pid = clone(child, stacks + STACK_BYTES, CLONE_VM | CLONE_VFORK | SIGCHLD, &call);
  /* Still masked, so no handler interrupts the wait: the vfork child has already exited. */
  if (pid > 0 && spec->sandbox == 1) syscall(NR_WAIT4, pid, &status, 0, 0);
  syscall(NR_RT_SIGPROCMASK, 2, saved, 0, 8);
  free(stacks);
  if (pid < 0) { spec->err_stage = STAGE_EXEC; spec->err_errno = 11; return -1; }
  if (spec->sandbox == 1) pid = spec->pid;
  /* A vfork child that neither failed nor started the command was killed (the OOM killer, say). */
  if (pid <= 0 && !spec->err_stage) { spec->err_stage = STAGE_PID_NAMESPACE; spec->err_errno = 10; }
  if (spec->err_stage) {
    if (pid > 0) syscall(NR_WAIT4, pid, &status, 0, 0);
    return -1;
  }
  return pid;
}

/* Waits for a child of agentd's (blocking, through EINTR); its wait status, or -1. */
int agentd_wait(int pid) {
  int status = 0;
  long rc;
  do rc = syscall(NR_WAIT4, pid, &status, 0, 0);
  while (rc < 0 && *__errno_location() == 4);
  return rc < 0 ? -1 : status;
}
