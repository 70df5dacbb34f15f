/* cardarena-launch: the sandbox around one bot, made directly with the kernel's namespaces and
 * mounts. It takes the subset of bubblewrap's options that the referee writes (bubblewrap.py),
 * with their meaning, and does the same work without bubblewrap's costs: bubblewrap parses
 * /proc/self/mountinfo at every bind and runs a privileged helper, 0.17 ms a mount, which made a
 * bot's start 13 ms of which the bot's own exec was 0.8 (see SANDBOX.md, "The launcher").
 *
 *   cardarena-launch --args FD -- COMMAND...
 *
 * Options (NUL-separated in FD): --unshare-pid --unshare-net --unshare-ipc --unshare-uts
 * --unshare-cgroup-try --unshare-user --disable-userns --die-with-parent --new-session
 * --seccomp FD --ro-bind SRC DEST --symlink TARGET DEST --proc DEST --dev DEST --tmpfs DEST
 * --dir DEST --bind-data FD DEST --perms OCTAL --size BYTES --chdir DIR --clearenv
 * --setenv NAME VALUE, and four of its own, which replace the programs the launch chain ran around
 * bubblewrap: --join-cgroup TASKS (move this process into the cgroup whose tasks file that is,
 * first of all, so that everything it starts is born there; the chain's sh did it), --rlimit NAME
 * VALUE (nofile, fsize, core, as or nproc, soft and hard; sh's ulimit or prlimit did it), and
 * --uid UID --gid GID (an organiser running as root: the bot runs as that uid and gid, with no
 * supplementary groups and no capabilities; setpriv and env did it after bubblewrap).
 *
 * Processes: this one waits outside (the referee's child); its child is pid 1 of the new PID
 * namespace, builds the new root, starts the bot, its only child, and reaps every process of the
 * namespace until none is left. As bubblewrap's, this process ends as soon as the bot does, with
 * the bot's status (a signal N as 128+N), which pid 1 sends it through a pipe; with
 * --die-with-parent, pid 1 and with it everything left in the namespace are then killed.
 * A failure before the bot's exec says why on stderr, in one line, and exits 1. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <linux/capability.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <net/if.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef SYS_mount_setattr
#define SYS_mount_setattr 442
#endif
#ifndef SYS_close_range
#define SYS_close_range 436
#endif
#ifndef AT_RECURSIVE
#define AT_RECURSIVE 0x8000
#endif
#define ATTR_RDONLY 0x1
#define ATTR_NOSUID 0x2
#define ATTR_NODEV 0x4
#define ATTR_NOEXEC 0x8

struct attr { unsigned long long set, clr, propagation, userns_fd; };

extern char **environ;

static void die(const char *format, ...) {
    va_list args;
    int saved = errno;
    va_start(args, format);
    fputs("cardarena-launch: ", stderr);
    vfprintf(stderr, format, args);
    va_end(args);
    if (saved)
        fprintf(stderr, ": %s", strerror(saved));
    fputc('\n', stderr);
    _exit(1);
}

/* `path` as the options name it: without the staging folder the new root or the machine's is under. */
static const char *shown(const char *path) {
    static const char *staging[] = {"/newroot", "/oldroot"};
    for (size_t i = 0; i < 2; i++) {
        size_t length = strlen(staging[i]);
        if (!strncmp(path, staging[i], length) && (path[length] == '/' || path[length] == 0))
            return path[length] ? path + length : "/";
    }
    return path;
}

/* A refusal of what the options ask, which no failed system call explains. */
#define refuse(...) (errno = 0, die(__VA_ARGS__))

static char *joined(const char *a, const char *b) {
    char *path;
    if (asprintf(&path, "%s%s", a, b) < 0)
        die("out of memory");
    return path;
}

static char *read_fd(int fd, size_t *length) {
    size_t size = 0, room = 4096;
    char *data = malloc(room + 1);
    for (;;) {
        if (!data)
            die("out of memory");
        ssize_t got = read(fd, data + size, room - size);
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0)
            die("reading descriptor %d", fd);
        if (got == 0)
            break;
        size += (size_t)got;
        if (size == room)
            data = realloc(data, (room *= 2) + 1);
    }
    data[size] = 0;
    close(fd);
    *length = size;
    return data;
}

static int fd_argument(const char *text) {
    char *end;
    long fd = strtol(text, &end, 10);
    if (*text == 0 || *end != 0 || fd < 0 || fd > 1 << 20)
        refuse("not a file descriptor: %s", text);
    return (int)fd;
}

/* One mount or file operation on the new root, in the order given. */
enum kind { RO_BIND, SYMLINK, PROC, DEV, TMPFS, DIR_, BIND_DATA };
struct op { enum kind kind; const char *source, *dest; char *data; size_t length; mode_t perms; long size; };

static struct op ops[1024];
static int op_count;
static int unshare_flags = CLONE_NEWNS, cgroup_try, disable_userns, die_with_parent, new_session;
static char *seccomp_program;
static size_t seccomp_length;
static const char *workdir = "/";
static char **bot_env;
static int env_count, clear_env;
static long bot_uid = -1, bot_gid = -1;
static const char *cgroup_tasks[8];
static int cgroup_count;
static struct { int resource; long value; } rlimits[8];
static int rlimit_count;
static mode_t organiser_umask;

static void set_env(const char *name, const char *value) {
    bot_env = realloc(bot_env, sizeof *bot_env * (size_t)(env_count + 2));
    if (!bot_env)
        die("out of memory");
    bot_env[env_count++] = joined(joined(name, "="), value);
    bot_env[env_count] = NULL;
}

static long number(const char *text, int base, const char *what) {
    char *end;
    errno = 0;
    long value = strtol(text, &end, base);
    if (*text == 0 || *end != 0 || errno || value < 0)
        refuse("not a %s: %s", what, text);
    return value;
}

static int resource_named(const char *name) {
    static const struct { const char *name; int resource; } known[] = {
        {"nofile", RLIMIT_NOFILE}, {"fsize", RLIMIT_FSIZE}, {"core", RLIMIT_CORE}, {"as", RLIMIT_AS},
        {"nproc", RLIMIT_NPROC}};
    for (size_t i = 0; i < sizeof known / sizeof *known; i++)
        if (!strcmp(name, known[i].name))
            return known[i].resource;
    refuse("not a limit this launcher sets: %s", name);
    return -1;
}

static void parse(char **args, int count) {
    mode_t perms = (mode_t)-1;
    long size = 0;
    for (int i = 0; i < count; i++) {
        const char *option = args[i];
        int rest = count - i - 1;
#define NEED(n) if (rest < (n)) refuse("%s needs %d argument(s)", option, (n))
#define OP(k, src, dst) do { if (op_count == 1024) refuse("too many mounts"); \
            ops[op_count++] = (struct op){k, src, dst, NULL, 0, perms, size}; perms = (mode_t)-1; size = 0; } while (0)
        if (!strcmp(option, "--unshare-pid")) unshare_flags |= CLONE_NEWPID;
        else if (!strcmp(option, "--unshare-net")) unshare_flags |= CLONE_NEWNET;
        else if (!strcmp(option, "--unshare-ipc")) unshare_flags |= CLONE_NEWIPC;
        else if (!strcmp(option, "--unshare-uts")) unshare_flags |= CLONE_NEWUTS;
        else if (!strcmp(option, "--unshare-user")) unshare_flags |= CLONE_NEWUSER;
        else if (!strcmp(option, "--unshare-cgroup-try")) cgroup_try = 1;
        else if (!strcmp(option, "--disable-userns")) disable_userns = 1;
        else if (!strcmp(option, "--die-with-parent")) die_with_parent = 1;
        else if (!strcmp(option, "--new-session")) new_session = 1;
        else if (!strcmp(option, "--clearenv")) clear_env = 1;
        else if (!strcmp(option, "--seccomp")) { NEED(1); seccomp_program = read_fd(fd_argument(args[++i]), &seccomp_length); }
        else if (!strcmp(option, "--perms")) { NEED(1); perms = (mode_t)number(args[++i], 8, "mode"); }
        else if (!strcmp(option, "--size")) { NEED(1); size = number(args[++i], 10, "size"); }
        else if (!strcmp(option, "--uid")) { NEED(1); bot_uid = number(args[++i], 10, "uid"); }
        else if (!strcmp(option, "--gid")) { NEED(1); bot_gid = number(args[++i], 10, "gid"); }
        else if (!strcmp(option, "--chdir")) { NEED(1); workdir = args[++i]; }
        else if (!strcmp(option, "--join-cgroup")) {
            NEED(1);
            if (cgroup_count == 8) refuse("too many cgroups");
            cgroup_tasks[cgroup_count++] = args[++i];
        } else if (!strcmp(option, "--rlimit")) {
            NEED(2);
            if (rlimit_count == 8) refuse("too many rlimits");
            rlimits[rlimit_count].resource = resource_named(args[i + 1]);
            rlimits[rlimit_count++].value = number(args[i + 2], 10, "limit");
            i += 2;
        }
        else if (!strcmp(option, "--setenv")) { NEED(2); set_env(args[i + 1], args[i + 2]); i += 2; }
        else if (!strcmp(option, "--ro-bind")) { NEED(2); OP(RO_BIND, args[i + 1], args[i + 2]); i += 2; }
        else if (!strcmp(option, "--symlink")) { NEED(2); OP(SYMLINK, args[i + 1], args[i + 2]); i += 2; }
        else if (!strcmp(option, "--proc")) { NEED(1); OP(PROC, NULL, args[++i]); }
        else if (!strcmp(option, "--dev")) { NEED(1); OP(DEV, NULL, args[++i]); }
        else if (!strcmp(option, "--tmpfs")) { NEED(1); OP(TMPFS, NULL, args[++i]); }
        else if (!strcmp(option, "--dir")) { NEED(1); OP(DIR_, NULL, args[++i]); }
        else if (!strcmp(option, "--bind-data")) {
            NEED(2);
            int fd = fd_argument(args[i + 1]);
            OP(BIND_DATA, NULL, args[i + 2]);
            ops[op_count - 1].data = read_fd(fd, &ops[op_count - 1].length);
            i += 2;
        } else refuse("unknown option %s", option);
#undef NEED
#undef OP
    }
    if (!(unshare_flags & CLONE_NEWPID))
        refuse("--unshare-pid is required");
    int has_proc = 0;
    for (int i = 0; i < op_count; i++)
        has_proc |= ops[i].kind == PROC;
    if (disable_userns && !(has_proc && unshare_flags & CLONE_NEWUSER))
        refuse("--disable-userns needs --unshare-user and --proc");
    if (bot_uid >= 0 && (bot_gid < 0 || geteuid() != 0))
        refuse("--uid needs --gid and an organiser running as root");
}

/* The options in FD, NUL-separated, as bubblewrap's --args reads them. */
static void parse_fd(int fd) {
    size_t length;
    char *data = read_fd(fd, &length);
    int count = 0;
    for (size_t at = 0; at < length; at++)
        count += data[at] == 0;
    char **args = calloc((size_t)count + 1, sizeof *args);
    if (!args)
        die("out of memory");
    for (size_t at = 0, i = 0; at < length; at += strlen(data + at) + 1)
        args[i++] = data + at;
    parse(args, count);
}

static void write_file(const char *path, const char *text) {
    int fd = open(path, O_WRONLY | O_CLOEXEC);
    if (fd < 0 || write(fd, text, strlen(text)) != (ssize_t)strlen(text))
        die("writing %s", path);
    close(fd);
}

/* Into the bot's cgroups and under its rlimits, before anything is started: all it starts inherits both. */
static void confine_this_process(void) {
    for (int i = 0; i < cgroup_count; i++)
        write_file(cgroup_tasks[i], "0"); /* "0": the writing thread, this process's only one */
    for (int i = 0; i < rlimit_count; i++) {
        struct rlimit limit = {(rlim_t)rlimits[i].value, (rlim_t)rlimits[i].value};
        if (setrlimit(rlimits[i].resource, &limit) != 0)
            die("setting rlimit %d to %ld", rlimits[i].resource, rlimits[i].value);
    }
}

static void set_attributes(const char *path, unsigned long long set, unsigned int flags) {
    struct attr attr = {set, 0, 0, 0};
    if (syscall(SYS_mount_setattr, AT_FDCWD, path, flags, &attr, sizeof attr) != 0)
        die("setting the mount flags of %s", shown(path));
}

/* Missing folders of `path` (absolute, under the new root) made, mode 0755. */
static void make_parents(const char *path) {
    char *copy = strdup(path);
    for (char *slash = strchr(copy + 1, '/'); slash; slash = strchr(slash + 1, '/')) {
        *slash = 0;
        if (mkdir(copy, 0755) != 0 && errno != EEXIST)
            die("making %s", shown(copy));
        *slash = '/';
    }
    free(copy);
}

/* `dest` made as the kind of thing `source` is (folder or file), unless it exists. */
static void make_mount_point(const char *dest, int folder) {
    struct stat seen;
    if (lstat(dest, &seen) == 0)
        return;
    make_parents(dest);
    if (folder ? mkdir(dest, 0755) != 0 : mknod(dest, S_IFREG | 0444, 0) != 0)
        die("making %s", shown(dest));
}

static void bind_over(const char *source, const char *dest, unsigned long long attributes) {
    struct stat seen;
    if (stat(source, &seen) != 0)
        die("%s", shown(source));
    make_mount_point(dest, S_ISDIR(seen.st_mode));
    if (mount(source, dest, NULL, MS_BIND | MS_REC, NULL) != 0)
        die("binding %s", shown(dest));
    set_attributes(dest, attributes, AT_RECURSIVE);
}

static void mount_tmpfs(const char *dest, mode_t perms, long size) {
    char options[64];
    make_mount_point(dest, 1);
    if (size > 0)
        snprintf(options, sizeof options, "mode=%o,size=%ld", perms, size);
    else
        snprintf(options, sizeof options, "mode=%o", perms);
    if (mount("tmpfs", dest, "tmpfs", MS_NOSUID | MS_NODEV, options) != 0)
        die("mounting a tmpfs on %s", shown(dest));
}

static void make_symlink(const char *target, const char *dest) {
    make_parents(dest);
    if (symlink(target, dest) != 0)
        die("linking %s", shown(dest));
}

/* /proc of the new PID namespace, its folders that write to the kernel read-only (as bubblewrap's). */
static void mount_proc(const char *dest) {
    static const char *covered[] = {"sys", "sysrq-trigger", "irq", "bus"};
    make_mount_point(dest, 1);
    if (mount("proc", dest, "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) != 0)
        die("mounting /proc");
    if (disable_userns) /* a limit of the sandbox's user namespace: no bot may make one below it */
        write_file(joined(dest, "/sys/user/max_user_namespaces"), "0");
    for (size_t i = 0; i < sizeof covered / sizeof *covered; i++) {
        char *path = joined(joined(dest, "/"), covered[i]);
        if (access(path, F_OK) == 0) {
            if (mount(path, path, NULL, MS_BIND | MS_REC, NULL) != 0)
                die("binding %s", shown(path));
            set_attributes(path, ATTR_RDONLY | ATTR_NOSUID | ATTR_NODEV | ATTR_NOEXEC, AT_RECURSIVE);
        }
    }
}

/* A minimal /dev, as bubblewrap's --dev makes it: the harmless devices, a pts instance of its own. */
static void mount_dev(const char *dest) {
    static const char *devices[] = {"null", "zero", "full", "random", "urandom", "tty"};
    static const char *links[][2] = {{"/proc/self/fd", "fd"}, {"/proc/self/fd/0", "stdin"},
                                     {"/proc/self/fd/1", "stdout"}, {"/proc/self/fd/2", "stderr"},
                                     {"/proc/kcore", "core"}, {"pts/ptmx", "ptmx"}};
    mount_tmpfs(dest, 0755, 0);
    for (size_t i = 0; i < sizeof devices / sizeof *devices; i++) {
        char *path = joined(joined(dest, "/"), devices[i]);
        char *host = joined("/oldroot/dev/", devices[i]);
        if (mknod(path, S_IFREG | 0666, 0) != 0 || mount(host, path, NULL, MS_BIND, NULL) != 0)
            die("binding %s", shown(path));
        set_attributes(path, ATTR_NOSUID | ATTR_NOEXEC, 0);
    }
    for (size_t i = 0; i < sizeof links / sizeof *links; i++)
        make_symlink(links[i][0], joined(joined(dest, "/"), links[i][1]));
    char *shm = joined(dest, "/shm"), *pts = joined(dest, "/pts");
    if (mkdir(shm, 0755) != 0 || mkdir(pts, 0755) != 0)
        die("making %s/shm and pts", shown(dest));
    if (mount("devpts", pts, "devpts", MS_NOSUID | MS_NOEXEC, "newinstance,ptmxmode=0666,mode=620") != 0)
        die("mounting %s", shown(pts));
}

static void run_op(struct op *op, int index) {
    char *dest = joined("/newroot", op->dest);
    mode_t perms = op->perms == (mode_t)-1 ? 0755 : op->perms;
    switch (op->kind) {
    case RO_BIND:
        bind_over(joined("/oldroot", op->source), dest, ATTR_RDONLY | ATTR_NOSUID | ATTR_NODEV);
        break;
    case SYMLINK:
        make_symlink(op->source, dest);
        break;
    case PROC:
        mount_proc(dest);
        break;
    case DEV:
        mount_dev(dest);
        break;
    case TMPFS:
        mount_tmpfs(dest, perms, op->size);
        break;
    case DIR_:
        make_parents(dest);
        if (mkdir(dest, perms) != 0 && errno != EEXIST)
            die("making %s", op->dest);
        break;
    case BIND_DATA: { /* its file, written by write_data, is on a read-only tmpfs: so is its bind */
        char name[32];
        snprintf(name, sizeof name, "/data/%d", index);
        make_mount_point(dest, 0);
        if (mount(name, dest, NULL, MS_BIND, NULL) != 0)
            die("binding %s", op->dest);
        break;
    }
    }
}

/* Each --bind-data's file on the staging /data tmpfs, which is then made read-only, nosuid, nodev
 * and noexec at once: a bind copies its source mount's flags, so none needs a remount of its own. */
static void write_data(void) {
    for (int i = 0; i < op_count; i++) {
        if (ops[i].kind != BIND_DATA)
            continue;
        char name[32];
        snprintf(name, sizeof name, "/data/%d", i);
        int fd = open(name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, ops[i].perms == (mode_t)-1 ? 0600 : ops[i].perms);
        if (fd < 0 || write(fd, ops[i].data, ops[i].length) != (ssize_t)ops[i].length)
            die("writing the data for %s", ops[i].dest);
        close(fd);
    }
    set_attributes("/data", ATTR_RDONLY | ATTR_NOSUID | ATTR_NODEV | ATTR_NOEXEC, 0);
}

/* The new root: a tmpfs, built while the machine's root is at /oldroot, then made the root. */
static void build_root(void) {
    if (mount(NULL, "/", NULL, MS_SLAVE | MS_REC, NULL) != 0)
        die("making the mounts private");
    if (mount("tmpfs", "/tmp", "tmpfs", MS_NOSUID | MS_NODEV, "mode=0700") != 0)
        die("mounting the staging tmpfs");
    if (chdir("/tmp") != 0 || mkdir("newroot", 0755) != 0 || mkdir("oldroot", 0755) != 0 || mkdir("data", 0755) != 0)
        die("making the staging folders");
    if (mount("tmpfs", "newroot", "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755") != 0
        || mount("tmpfs", "data", "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC, "mode=0755") != 0)
        die("mounting the new root");
    if (syscall(SYS_pivot_root, ".", "oldroot") != 0 || chdir("/") != 0)
        die("moving the machine's root aside");
    write_data();
    for (int i = 0; i < op_count; i++)
        run_op(&ops[i], i);
    if (umount2("/oldroot", MNT_DETACH) != 0)
        die("detaching the machine's root");
    if (chdir("/newroot") != 0 || syscall(SYS_pivot_root, ".", ".") != 0 || umount2(".", MNT_DETACH) != 0)
        die("entering the new root");
    if (chdir("/") != 0)
        die("entering /");
    set_attributes("/", ATTR_RDONLY | ATTR_NOSUID | ATTR_NODEV, 0);
    if (chdir(workdir) != 0)
        die("changing to %s", workdir);
}

static void loopback_up(void) {
    struct ifreq request = {0};
    int sock = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    strcpy(request.ifr_name, "lo");
    if (sock < 0 || ioctl(sock, SIOCGIFFLAGS, &request) != 0)
        die("reading the loopback interface");
    request.ifr_flags |= IFF_UP | IFF_RUNNING;
    if (ioctl(sock, SIOCSIFFLAGS, &request) != 0)
        die("bringing the loopback interface up");
    close(sock);
}

/* The organiser's uid and gid, and nothing else, mapped into a new user namespace. */
static void enter_user_namespace(void) {
    char map[64];
    uid_t uid = getuid();
    gid_t gid = getgid();
    if (unshare(CLONE_NEWUSER) != 0)
        die("making a user namespace");
    write_file("/proc/self/setgroups", "deny");
    snprintf(map, sizeof map, "%u %u 1", uid, uid);
    write_file("/proc/self/uid_map", map);
    snprintf(map, sizeof map, "%u %u 1", gid, gid);
    write_file("/proc/self/gid_map", map);
}

/* No capability left, none to be had again, and (as root) the bot's own uid and gid. */
static void drop_privileges(void) {
    struct __user_cap_header_struct header = {_LINUX_CAPABILITY_VERSION_3, 0};
    struct __user_cap_data_struct none[2] = {{0}};
    for (int cap = 0; prctl(PR_CAPBSET_READ, cap) >= 0; cap++)
        if (prctl(PR_CAPBSET_DROP, cap) != 0)
            die("dropping capability %d", cap);
    if (bot_uid >= 0) {
        if (setgroups(0, NULL) != 0 || setresgid((gid_t)bot_gid, (gid_t)bot_gid, (gid_t)bot_gid) != 0
            || setresuid((uid_t)bot_uid, (uid_t)bot_uid, (uid_t)bot_uid) != 0)
            die("changing to uid %ld", bot_uid);
    }
    if (syscall(SYS_capset, &header, none) != 0 || prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) != 0)
        die("dropping capabilities");
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
        die("setting no_new_privs");
}

static int passed_up(int status) {
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

static void run_bot(char **command) {
    if (die_with_parent && prctl(PR_SET_PDEATHSIG, SIGKILL) != 0)
        die("setting the death signal");
    if (new_session && setsid() < 0)
        die("starting a session");
    drop_privileges();
    umask(organiser_umask);
    if (clear_env)
        environ = bot_env ? bot_env : (char *[]){NULL};
    else
        for (int i = 0; i < env_count; i++)
            putenv(bot_env[i]);
    if (syscall(SYS_close_range, 3, ~0U, 0) != 0)
        die("closing descriptors");
    if (seccomp_program) {
        struct sock_fprog program = {(unsigned short)(seccomp_length / sizeof(struct sock_filter)),
                                     (struct sock_filter *)seccomp_program};
        if (seccomp_length % sizeof(struct sock_filter) || prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &program) != 0)
            die("loading the seccomp filter");
    }
    execvp(command[0], command);
    die("running %s", command[0]);
}

/* Pid 1 of the namespace: build the root, start the bot, reap orphans until none is left. */
static void namespace_init(char **command, int report) {
    if (die_with_parent && prctl(PR_SET_PDEATHSIG, SIGKILL) != 0)
        die("setting the death signal");
    if (unshare_flags & CLONE_NEWNET)
        loopback_up();
    build_root();
    pid_t bot = fork();
    if (bot < 0)
        die("starting the bot");
    if (bot == 0)
        run_bot(command);
    prctl(PR_SET_DUMPABLE, 0);
    syscall(SYS_close_range, 0, (unsigned)report - 1, 0);
    syscall(SYS_close_range, (unsigned)report + 1, ~0U, 0);
    int code = 1;
    for (;;) { /* as bubblewrap's init: until the last process of the namespace has ended */
        int status;
        pid_t ended = wait(&status);
        if (ended == bot) {
            code = passed_up(status);
            if (write(report, &code, sizeof code) != sizeof code) /* the launcher ends with the bot */
                _exit(code);
        }
        if (ended < 0 && errno != EINTR)
            _exit(code);
    }
}

int main(int argc, char **argv) {
    int at = 1;
    if (argc > 2 && !strcmp(argv[1], "--args"))
        parse_fd(fd_argument(argv[2])), at = 3;
    if (at >= argc || strcmp(argv[at], "--") || at + 1 >= argc)
        refuse("usage: cardarena-launch --args FD -- COMMAND...");
    char **command = calloc((size_t)(argc - at), sizeof *command);
    if (!command)
        die("out of memory");
    for (int i = at + 1; i < argc; i++)
        command[i - at - 1] = strdup(argv[i]);
    /* what anyone in the sandbox reads as pid 1's command line: not where the organiser keeps this */
    char *end = argv[argc - 1] + strlen(argv[argc - 1]);
    memset(argv[0], 0, (size_t)(end - argv[0]));
    strncpy(argv[0], "cardarena-launch", (size_t)(end - argv[0]));
    prctl(PR_SET_NAME, "cardarena-launch");
    confine_this_process();
    organiser_umask = umask(0);
    if (die_with_parent && prctl(PR_SET_PDEATHSIG, SIGKILL) != 0)
        die("setting the death signal");
    if (unshare_flags & CLONE_NEWUSER)
        enter_user_namespace();
    prctl(PR_SET_DUMPABLE, 0); /* after the maps: a process that is not dumpable cannot write its own */
    if (unshare(unshare_flags & ~CLONE_NEWUSER) != 0)
        die("making namespaces");
    if (cgroup_try && unshare(CLONE_NEWCGROUP) != 0 && errno != EINVAL)
        die("making a cgroup namespace");
    int report[2]; /* pid 1 writes the bot's status here as soon as the bot ends */
    if (pipe2(report, O_CLOEXEC) != 0)
        die("making a pipe");
    pid_t init = fork();
    if (init < 0)
        die("starting the namespace's first process");
    if (init == 0) {
        close(report[0]);
        namespace_init(command, report[1]);
    }
    close(report[1]);
    syscall(SYS_close_range, 0, (unsigned)report[0] - 1, 0);
    int code;
    ssize_t got;
    do
        got = read(report[0], &code, sizeof code);
    while (got < 0 && errno == EINTR);
    if (got == sizeof code) /* as bubblewrap: done when the bot is; pid 1 dies with us (die-with-parent) */
        return code;
    for (;;) { /* pid 1 ended without a bot's status: a failure it has reported on stderr */
        int status;
        if (waitpid(init, &status, 0) == init)
            return passed_up(status);
        if (errno != EINTR)
            return 1;
    }
}
