// SPDX-License-Identifier: MIT
/*
 * Files another local user cannot redirect, and writes that are checked
 * (issue 24, docs/security.md "Shared directories").  As root, the other
 * user (nobody, through runuser) plants symbolic links and FIFOs at every
 * predictable path of a job in a world-writable sticky directory: nothing
 * leaks into an output, no file of ours is overwritten, nothing hangs.  A
 * full file system fails --metrics, --trace and --save runs with rc 1 and
 * a message naming the file, the other outputs still written.  A flood of
 * another uid's connections to a job's shm sockets leaves a bounded log.
 */
#include <criterion/criterion.h>
#include <dirent.h>
#include <poll.h>
#include <pwd.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/un.h>

#include "flexrr/file.h"
#include "test_runtime_util.h"

#define SECRET "TOPSECRET-do-not-copy"
#define VICTIM "victim: unchanged\n"

struct plot {
	char dir[96];	  /* world-writable, sticky: the shared directory */
	char priv[128];	  /* ours only: the secret and the victim */
	char secret[160]; /* 0600, read by nobody but us */
	char victim[160]; /* a file of ours nobody may overwrite */
};

/* runuser's path (rt_spawn execs without a PATH search) */
static char *runuser_bin(void)
{
	static char *const where[] = { "/usr/sbin/runuser", "/sbin/runuser",
				       "/usr/bin/runuser", "/bin/runuser" };

	for (size_t i = 0; i < sizeof(where) / sizeof(where[0]); i++)
		if (!access(where[i], X_OK))
			return where[i];
	return NULL;
}

static void need_other_user(void)
{
	if (geteuid() != 0)
		cr_skip_test("needs root to act as the other user (CI runs as "
			     "root); not run as uid %d",
			     (int)geteuid());
	if (!getpwnam("nobody") || !runuser_bin())
		cr_skip_test("needs runuser and the user nobody");
}

static void put(const char *path, const char *s, mode_t mode)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, mode);

	cr_assert_geq(fd, 0, "%s: %s", path, strerror(errno));
	cr_assert_eq(write(fd, s, strlen(s)), (ssize_t)strlen(s));
	close(fd);
}

/* a copy of the test's plot, removed by plot_fini even after a failed
 * assertion (the test's own frame is gone by then) */
static struct plot plot_now;

static void plot_fini(void)
{
	char cmd[512];

	if (!plot_now.dir[0])
		return;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s' '%s'", plot_now.dir,
		 plot_now.priv);
	if (system(cmd))
		fprintf(stderr, "could not remove %s\n", plot_now.dir);
	plot_now.dir[0] = 0;
}

TestSuite(runtime_files, .timeout = 240, .fini = plot_fini);

static void plot_make(struct plot *p, const char *tag)
{
	need_other_user();
	snprintf(p->dir, sizeof(p->dir), "/tmp/frr-files-%d-%s", getpid(), tag);
	snprintf(p->priv, sizeof(p->priv), "%s-priv", p->dir);
	snprintf(p->secret, sizeof(p->secret), "%s/secret", p->priv);
	snprintf(p->victim, sizeof(p->victim), "%s/victim", p->priv);
	cr_assert_eq(mkdir(p->dir, 0700), 0, "%s", strerror(errno));
	plot_now = *p;
	cr_assert_eq(chmod(p->dir, 01777), 0);
	cr_assert_eq(mkdir(p->priv, 0755), 0);
	put(p->secret, SECRET "\n", 0600);
	put(p->victim, VICTIM, 0644);
}

static void plot_remove(struct plot *p)
{
	(void)p;
	plot_fini();
}

/* As nobody: "ln -s TARGET PATH" (kind 's') or "mkfifo PATH" ('f'). */
static void plant(char kind, const char *target, const char *path)
{
	char *ln[] = { "runuser", "-u",		  "nobody",	"--", "ln",
		       "-s",	  (char *)target, (char *)path, NULL };
	char *ff[] = { "runuser", "-u",		"nobody", "--",
		       "mkfifo",  (char *)path, NULL };
	pid_t pid;
	int st;

	fflush(NULL);
	pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0) {
		execv(runuser_bin(), kind == 's' ? ln : ff);
		_exit(127);
	}
	cr_assert_eq(waitpid(pid, &st, 0), pid);
	cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0,
		  "runuser could not plant %s", path);
}

static int holds(const char *path, const char *s)
{
	static char buf[RT_OUT_MAX];

	rt_slurp(path, buf);
	return strstr(buf, s) != NULL;
}

/* The secret and the victim are as they were. */
static void assert_untouched(const struct plot *p)
{
	cr_assert(holds(p->secret, SECRET), "the secret was overwritten");
	cr_assert(holds(p->victim, VICTIM), "the victim was overwritten");
}

static mode_t mode_of(const char *path)
{
	struct stat st;

	cr_assert_eq(lstat(path, &st), 0, "%s: %s", path, strerror(errno));
	cr_assert(S_ISREG(st.st_mode), "%s is not a regular file", path);
	return st.st_mode & 07777;
}

#define RUN(r, ...) RT_RUN(r, 60, __VA_ARGS__)

/* The library calls themselves, on every kind of plant. */
Test(runtime_files, helpers_refuse_plants)
{
	struct plot p;
	char path[256];
	FILE *f = NULL;

	plot_make(&p, "unit");
	snprintf(path, sizeof(path), "%s/link", p.dir);
	plant('s', p.secret, path);
	cr_assert_eq(frr_file_open_own(path, "test", &f), -ELOOP);
	cr_assert_eq(frr_file_create(path, "test", &f), -ELOOP);
	snprintf(path, sizeof(path), "%s/fifo", p.dir);
	plant('f', NULL, path);
	cr_assert_eq(frr_file_open_own(path, "test", &f), -EINVAL);
	cr_assert_neq(frr_file_create(path, "test", &f), 0);
	/* a regular file nobody made, and a second name of one of ours */
	snprintf(path, sizeof(path), "%s/theirs", p.dir);
	put(path, "x", 0666);
	cr_assert_eq(chown(path, 65534, 65534), 0);
	cr_assert_eq(frr_file_open_own(path, "test", &f), -EPERM);
	cr_assert_eq(frr_file_create(path, "test", &f), -EPERM);
	snprintf(path, sizeof(path), "%s/hardlink", p.priv);
	cr_assert_eq(link(p.victim, path), 0);
	cr_assert_eq(frr_file_open_own(path, "test", &f), -EMLINK);
	cr_assert_eq(frr_file_create(path, "test", &f), -EMLINK);
	assert_untouched(&p);
	/* ours: accepted */
	cr_assert_eq(unlink(path), 0);
	cr_assert_eq(frr_file_open_own(p.secret, "test", &f), 0);
	fclose(f);
	plot_remove(&p);
}

/* Trace parts (t.json.rankN) and the temporary names of old (PATH.tmp). */
Test(runtime_files, trace_plants)
{
	struct rt_run *r = calloc(1, sizeof(*r));
	struct plot p;
	char t[256], part[300], tmp[300], ptmp[320];
	mode_t um = umask(077);

	plot_make(&p, "trace");
	snprintf(t, sizeof(t), "%s/t.json", p.dir);
	snprintf(part, sizeof(part), "%s.rank1", t);
	snprintf(tmp, sizeof(tmp), "%s.tmp", t);
	snprintf(ptmp, sizeof(ptmp), "%s.tmp", part);
	for (int k = 0; k < 2; k++) {
		unlink(part);
		plant(k ? 'f' : 's', p.secret, part);
		if (!k) {
			plant('s', p.victim, tmp);
			plant('s', p.victim, ptmp);
		}
		RUN(r, "run", "-n", "2", "-t", "1", "--clocks", "5",
		    "--timeout", "20", "-q", "--trace", t, "toy");
		cr_assert_neq(r->code, -1, "the job hung on a planted %s",
			      k ? "FIFO" : "symlink");
		cr_assert_eq(r->code, 0, "%s", r->err);
		cr_assert_not(holds(t, SECRET), "the secret leaked");
		cr_assert(holds(t, "\"rank 1\""), "rank 1 missing");
		/* no more readable than the umask allows */
		cr_assert_eq(mode_of(t), 0600);
		assert_untouched(&p);
	}
	umask(um);
	plot_remove(&p);
	free(r);
}

/* The same, run by a user who is not root (daemon): in the sticky directory
 * rank 1 cannot rename its part over nobody's plant (as root it may), so
 * the run fails naming it, and rank 0, told at the ranks' last collective
 * that the part is not there, writes its own events without waiting for it
 * or opening the plant. */
Test(runtime_files, trace_part_plant_refused)
{
	struct rt_run *r = calloc(1, sizeof(*r));
	struct plot p;
	char t[256], part[300];
	char *argv[] = { "runuser",  "-u", "daemon",	"--", (char *)rt_bin(),
			 "run",	     "-n", "2",		"-t", "1",
			 "--clocks", "5",  "--timeout", "20", "-q",
			 "--trace",  t,	   "toy",	NULL };

	plot_make(&p, "part");
	if (!getpwnam("daemon"))
		cr_skip_test("needs the user daemon to run the job");
	argv[0] = runuser_bin();
	cr_assert_eq(chown(p.secret, 1, 1), 0); /* daemon's secret */
	snprintf(t, sizeof(t), "%s/t.json", p.dir);
	snprintf(part, sizeof(part), "%s.rank1", t);
	for (int k = 0; k < 2; k++) {
		unlink(part);
		plant(k ? 'f' : 's', p.secret, part);
		rt_exec(r, argv, NULL, 60);
		cr_assert_neq(r->code, -1, "the job hung on a planted %s",
			      k ? "FIFO" : "symlink");
		cr_assert_not(holds(t, SECRET), "the secret leaked");
		cr_assert(holds(t, "\"rank 0\""), "no trace from rank 0");
		/* rank 1 cannot rename its part over the plant (a sticky
		 * directory) and says so; rank 0, told, never opens it */
		cr_assert(strstr(r->err, "another user's file has that name"),
			  "%s", r->err);
		cr_assert(strstr(r->err, "the trace lacks"), "%s", r->err);
		cr_assert(strstr(r->err, "rank 1 could not write it"), "%s",
			  r->err);
		assert_untouched(&p);
	}
	plot_remove(&p);
	free(r);
}

/* The metrics file: a path the user named, so a plant there is refused. */
Test(runtime_files, metrics_plants)
{
	struct rt_run *r = calloc(1, sizeof(*r));
	struct plot p;
	char m[256];

	plot_make(&p, "metrics");
	snprintf(m, sizeof(m), "%s/m.csv", p.dir);
	for (int k = 0; k < 2; k++) {
		unlink(m);
		plant(k ? 'f' : 's', p.victim, m);
		RUN(r, "run", "-n", "2", "-t", "1", "--clocks", "5",
		    "--timeout", "20", "-q", "--metrics", m, "toy");
		cr_assert_neq(r->code, -1, "the job hung on a planted %s",
			      k ? "FIFO" : "symlink");
		cr_assert_eq(r->code, 1);
		cr_assert(strstr(r->err, m), "%s", r->err);
		cr_assert(strstr(r->err, k ? "FIFO" : "symbolic link"), "%s",
			  r->err);
		assert_untouched(&p);
	}
	plot_remove(&p);
	free(r);
}

/* --save: plants at PATH.tmp and PATH itself; the model follows the umask */
Test(runtime_files, save_plants)
{
	struct rt_run *r = calloc(1, sizeof(*r));
	struct plot p;
	char m[256], tmp[300];
	mode_t um = umask(022);

	plot_make(&p, "save");
	snprintf(m, sizeof(m), "%s/model", p.dir);
	snprintf(tmp, sizeof(tmp), "%s.tmp", m);
	for (int k = 0; k < 2; k++) {
		unlink(tmp);
		plant(k ? 'f' : 's', p.victim, tmp);
		if (!k)
			plant('s', p.secret, m);
		RUN(r, "run", "-n", "2", "-t", "1", "--clocks", "5",
		    "--timeout", "20", "-q", "--save", m, "toy");
		cr_assert_neq(r->code, -1, "the job hung on a planted %s",
			      k ? "FIFO" : "symlink");
		cr_assert_eq(r->code, 0, "%s", r->err);
		cr_assert_eq(mode_of(m), 0644);
		assert_untouched(&p);
	}
	umask(um);
	plot_remove(&p);
	free(r);
}

/* ---- a full file system ------------------------------------------------ */

static char full_dir[128];

/* Unmounted whatever the test did: a mount namespace of the test's own
 * process (its jobs inherit it) takes the tmpfs away when it ends, and
 * .fini unmounts it as well. */
static void full_mount(void)
{
	char fill[200];
	FILE *f;

	if (geteuid() != 0)
		cr_skip_test("needs root to mount a tmpfs");
	snprintf(full_dir, sizeof(full_dir), "/tmp/frr-files-%d-full",
		 getpid());
	cr_assert_eq(mkdir(full_dir, 0700), 0);
	if (!unshare(CLONE_NEWNS))
		(void)mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL);
	if (mount("tmpfs", full_dir, "tmpfs", 0, "size=64k")) {
		rmdir(full_dir);
		cr_skip_test("cannot mount a tmpfs: %s", strerror(errno));
	}
	snprintf(fill, sizeof(fill), "%s/fill", full_dir);
	f = fopen(fill, "w");
	cr_assert(f);
	for (int i = 0; i < 64 * 1024 && fputc('x', f) != EOF; i++)
		;
	fclose(f); /* ENOSPC, as it should */
}

static void full_umount(void)
{
	if (!full_dir[0])
		return;
	umount2(full_dir, MNT_DETACH);
	rmdir(full_dir);
}

static int count_lines(const char *path)
{
	char buf[512];
	FILE *f = fopen(path, "r");
	int n = 0;

	if (!f)
		return -1;
	while (fgets(buf, sizeof(buf), f))
		n++;
	fclose(f);
	return n;
}

Test(runtime_files, full_disk_fails_the_run, .init = full_mount,
     .fini = full_umount)
{
	struct rt_run *r = calloc(1, sizeof(*r));
	char full[256], ok[256], okm[256];

	snprintf(ok, sizeof(ok), "/tmp/frr-files-%d-ok.model", getpid());
	snprintf(okm, sizeof(okm), "/tmp/frr-files-%d-ok.csv", getpid());
	/* metrics fail; the model is still saved */
	snprintf(full, sizeof(full), "%s/m.csv", full_dir);
	RUN(r, "run", "-n", "2", "-t", "2", "--clocks", "5", "--timeout", "20",
	    "-q", "--metrics", full, "--save", ok, "toy");
	cr_assert_eq(r->code, 1);
	cr_assert(strstr(r->err, full) &&
		      strstr(r->err, "No space left on device"),
		  "%s", r->err);
	cr_assert_eq(count_lines(ok), 16, "the model was not saved");
	/* the model fails; the metrics are still written */
	snprintf(full, sizeof(full), "%s/model", full_dir);
	RUN(r, "run", "-n", "2", "-t", "2", "--clocks", "5", "--timeout", "20",
	    "-q", "--metrics", okm, "--save", full, "toy");
	cr_assert_eq(r->code, 1);
	cr_assert(strstr(r->err, full) &&
		      strstr(r->err, "No space left on device"),
		  "%s", r->err);
	cr_assert_eq(count_lines(okm), 1 + 5 * 4, "metrics incomplete");
	/* the trace, with a part from rank 1 */
	snprintf(full, sizeof(full), "%s/t.json", full_dir);
	RUN(r, "run", "-n", "2", "-t", "1", "--clocks", "5", "--timeout", "20",
	    "-q", "--trace", full, "toy");
	cr_assert_eq(r->code, 1);
	cr_assert(strstr(r->err, full) &&
		      strstr(r->err, "No space left on device"),
		  "%s", r->err);
	unlink(ok);
	unlink(okm);
	free(r);
}

/* ---- a flood of another uid's connections ------------------------------ */

/* The shm socket names of job's ranks: processes whose parent is the
 * launcher (or the launcher itself); other jobs on the machine are left
 * alone.  Returns how many were found. */
static int job_sockets(pid_t launcher, char names[][108], int max)
{
	char line[512], stat[64], buf[512];
	FILE *pn = fopen("/proc/net/unix", "r");
	int n = 0;

	if (!pn)
		return 0;
	while (n < max && fgets(line, sizeof(line), pn)) {
		char *at = strstr(line, "@flexrr-shm-p");
		int pid, ppid = -1;
		FILE *ps;

		if (!at || sscanf(at, "@flexrr-shm-p%d-", &pid) != 1)
			continue;
		snprintf(stat, sizeof(stat), "/proc/%d/stat", pid);
		ps = fopen(stat, "r");
		if (ps && fgets(buf, sizeof(buf), ps))
			sscanf(strrchr(buf, ')') + 1, " %*c %d", &ppid);
		if (ps)
			fclose(ps);
		if (pid != launcher && ppid != launcher)
			continue;
		at[strcspn(at, " \n")] = 0;
		for (int i = 0; i < n && at; i++) /* accepted ones repeat it */
			if (!strcmp(names[i], at))
				at = NULL;
		if (at)
			snprintf(names[n++], 108, "%s", at);
	}
	fclose(pn);
	return n;
}

/* One connection to an abstract name: 1 refused (answered), 0 not. */
static int knock(const char *name)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	socklen_t len =
	    (socklen_t)(offsetof(struct sockaddr_un, sun_path) + strlen(name));
	int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0), got = 0;
	struct pollfd pf = { .fd = fd, .events = POLLIN };
	char buf[1024];

	memcpy(sa.sun_path + 1, name + 1, strlen(name) - 1);
	if (fd >= 0 && !connect(fd, (struct sockaddr *)&sa, len) &&
	    poll(&pf, 1, 1000) == 1 && recv(fd, buf, sizeof(buf), 0) > 0)
		got = 1;
	if (fd >= 0)
		close(fd);
	return got;
}

Test(runtime_files, connection_flood_bounded_log)
{
	struct rt_run *r = calloc(1, sizeof(*r));
	char names[8][108], *argv[] = { (char *)rt_bin(),
					"run",
					"-n",
					"2",
					"-t",
					"1",
					"--backend",
					"shm",
					"--clocks",
					"150",
					"--timeout",
					"30",
					"-q",
					"toy",
					"--sleep-us",
					"100",
					NULL };
	int n = 0, st, refused;
	double t0;
	pid_t job, fl;

	if (geteuid() != 0)
		cr_skip_test("needs root to connect as uid 65534");
	t0 = rt_now();
	job = rt_spawn(argv, NULL, "flood");
	/* each rank listens on its main ctx and its thread's lane: knock on
	 * all four, the log budget is the rank's, not each listener's */
	for (int i = 0; i < 2000 && n < 4; i++) {
		n = job_sockets(job, names, 8);
		usleep(5000);
	}
	cr_assert_geq(n, 4, "only %d shm sockets of the job appeared", n);
	fflush(NULL);
	fl = fork();
	cr_assert_geq(fl, 0);
	if (fl == 0) { /* another user, knocking until the job is gone */
		int got = 0, miss = 0;

		if (setgid(65534) || setuid(65534))
			_exit(255);
		for (int i = 0; i < 100000 && miss < 50; i++) {
			int k = knock(names[i % n]);

			got += k;
			miss = k ? 0 : miss + 1;
		}
		_exit(got > 250 ? 250 : got);
	}
	cr_assert_eq(waitpid(fl, &st, 0), fl);
	r->code = rt_wait(job, 60);
	r->secs = rt_now() - t0;
	rt_collect("flood", r);
	cr_assert(WIFEXITED(st) && WEXITSTATUS(st) != 255, "setuid failed");
	refused = WEXITSTATUS(st);
	cr_assert_eq(r->code, 0, "%s", r->err);
	cr_assert_geq(refused, 20, "too few refusals to test (%d)", refused);
	/* a few lines per rank and 5 s window: 3 in full, 1 count; the
	 * windows start at the first refusal, so the job's time spans at
	 * most 1 + secs / 5 of them */
	{
		int full = rt_count(r->err, "refused a connection");
		int more = rt_count(r->err, "more connections in the last");
		int windows = 1 + (int)(r->secs / 5);

		cr_assert_leq(full, 2 * 3 * windows, "%d lines:\n%.2000s", full,
			      r->err);
		cr_assert_leq(more, 2 * windows);
		cr_assert_geq(more, 1,
			      "the refusals past the first were not "
			      "counted:\n%.2000s",
			      r->err);
	}
	free(r);
}

/* --checkpoint DIR in a shared directory: another user's symlinks at
 * every checkpoint directory name (to a directory of ours it could read
 * through) and a FIFO at DIR/latest neither redirect the checkpoint nor
 * hang the job: it refuses each planted name and writes nothing through
 * it. */
Test(runtime_files, checkpoint_plants)
{
	struct rt_run *r = calloc(1, sizeof(*r));
	struct plot p;
	char ck[256], path[320];
	DIR *d;
	int n = 0;

	plot_make(&p, "ckpt");
	snprintf(ck, sizeof(ck), "%s/ck", p.dir);
	cr_assert_eq(mkdir(ck, 01777), 0, "%s", strerror(errno));
	cr_assert_eq(chmod(ck, 01777), 0);
	for (int c = 0; c <= 6; c++) {
		snprintf(path, sizeof(path), "%s/ckpt-%d", ck, c);
		plant('s', p.priv, path);
	}
	/* a FIFO at latest: taken for another job's checkpoints, refused */
	snprintf(path, sizeof(path), "%s/latest", ck);
	plant('f', NULL, path);
	RUN(r, "run", "-n", "2", "-t", "1", "--clocks", "6", "--timeout", "20",
	    "-q", "--checkpoint", ck, "--checkpoint-every", "2", "toy");
	cr_assert_neq(r->code, -1, "the job hung on a FIFO at latest");
	cr_assert_eq(r->code, 1, "%s", r->err);
	cr_assert(strstr(r->err, "latest"), "%s", r->err);
	cr_assert_eq(unlink(path), 0); /* root may, in the sticky dir */
	/* the links at ckpt-N: refused when the first cut is written */
	RUN(r, "run", "-n", "2", "-t", "1", "--clocks", "6", "--timeout", "20",
	    "-q", "--checkpoint", ck, "--checkpoint-every", "2", "toy");
	cr_assert_neq(r->code, -1, "the job hung on the plants");
	cr_assert_eq(r->code, 1, "%s", r->err);
	cr_assert(strstr(r->err, "ckpt-"), "%s", r->err);
	cr_assert(strstr(r->err, "not a directory of this user"), "%s", r->err);
	assert_untouched(&p);
	d = opendir(p.priv);
	cr_assert_not_null(d);
	for (struct dirent *e; (e = readdir(d));)
		n += e->d_name[0] != '.';
	closedir(d);
	cr_assert_eq(n, 2, "files were written through a planted link into %s",
		     p.priv);
	plot_remove(&p);
	free(r);
}
