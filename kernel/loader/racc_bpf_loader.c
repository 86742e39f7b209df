// SPDX-License-Identifier: GPL-2.0
/* racc's BPF loader (docs/KERNEL-BPF.md): loads one object, writes its configuration, attaches
 * its programs through BPF links, then holds them until its standard input closes (or its
 * parent dies). Every attachment is a link whose only fd this process holds, so however it ends
 * the kernel detaches everything: TCX links on interfaces, cgroup links for sockops and
 * cgroup_skb, and a struct_ops link for the controller (registered with BPF_F_LINK, so that its
 * name disappears with the process).
 *
 *   racc-bpf-loader router OBJ NETNS IFNAME CONFIG [COUNTERS]
 *   racc-bpf-loader hosts OBJ CONFIG [COUNTERS]
 *   racc-bpf-loader sockops OBJ CGROUP PROG       (any one sockops program; the tests' forger)
 *   racc-bpf-loader bench OBJ CONFIG FRAME REPEAT ROUNDS
 *                                  (the router's tc program on one Ethernet frame, given in hex,
 *                                   through BPF_PROG_TEST_RUN: ROUNDS runs of REPEAT each; prints
 *                                   each round's mean ns per packet, then the counters; exits)
 *
 * CONFIG is the configuration struct as comma-separated unsigned 64-bit integers. Programs and
 * maps are found by kind, so that every protocol's objects load alike: the router is the
 * object's tc program and its configuration map is `lf_config` or `router_config`; the hosts'
 * controller is the object's struct_ops map, its configuration `law_config`, and the cgroup
 * gets its sockops program and its cgroup_skb program if it has one. The counters' names come
 * from RACC_COUNTERS (comma-separated) where set, else VCP's. The loader
 * prints "ready" (or "error: ..." on stderr and exits 1), then answers one line per command:
 *   counters               one JSON object
 *   cgroup ID PATH         (hosts) sockops and the receivers' ingress on a cgroup v2 path: "ok"
 *   iface ID NETNS:IFNAME  (hosts) the senders' egress on an interface: "ok"
 *   detach ID              (hosts) drop what ID attached: "ok"
 * A failed command answers "error: ..." and changes nothing else. */
#define _GNU_SOURCE
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/bpf.h>
#include <net/if.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef BPF_F_LINK
#define BPF_F_LINK (1U << 13)
#endif
/* The kernel's enum values (linux/bpf.h); this Debian's headers predate TCX. */
#define ATTACH_STRUCT_OPS 44
#define ATTACH_TCX_EGRESS 47
#define MAX_ATTACH 256

static const char *router_counters[] = { "packets", "bytes", "marked", "codes_low", "codes_high",
					  "codes_overload", "not_ect" };
static const char *host_counters[] = { "acks", "mi", "ai", "md_events", "md_held", "bleached",
					"echo_absent", "echo_malformed", "echo_written", "data_coded",
					"sent_ect1", "loss_halvings" };

/* What each command ID attached: a libbpf link or a raw link fd. */
static struct {
	long id;
	struct bpf_link *link;
	int fd;
} attached[MAX_ATTACH];
static int n_attached;

static char err[512];

static void die(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "error: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\n");
	exit(1);
}

static int fail(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, sizeof(err), fmt, ap);
	va_end(ap);
	return -1;
}

static int remember(long id, struct bpf_link *link, int fd)
{
	if (n_attached == MAX_ATTACH) {
		if (link)
			bpf_link__destroy(link);
		if (fd >= 0)
			close(fd);
		return fail("too many attachments");
	}
	attached[n_attached].id = id;
	attached[n_attached].link = link;
	attached[n_attached].fd = fd;
	n_attached++;
	return 0;
}

static void forget(long id)
{
	int i, j = 0;

	for (i = 0; i < n_attached; i++) {
		if (attached[i].id == id) {
			if (attached[i].link)
				bpf_link__destroy(attached[i].link);
			if (attached[i].fd >= 0)
				close(attached[i].fd);
		} else {
			attached[j++] = attached[i];
		}
	}
	n_attached = j;
}

/* BPF_LINK_CREATE by hand: this libbpf (1.1) knows neither TCX nor struct_ops links; the
 * kernel's attr layout is prog_fd|map_fd, target_fd|target_ifindex, attach_type, flags. */
static int link_create(int fd, int target, unsigned attach_type)
{
	union bpf_attr attr;

	memset(&attr, 0, sizeof(attr));
	attr.link_create.prog_fd = fd;
	attr.link_create.target_fd = target;
	attr.link_create.attach_type = attach_type;
	return syscall(__NR_bpf, BPF_LINK_CREATE, &attr, sizeof(attr));
}

static void write_config(struct bpf_object *obj, const char *map_name, const char *csv)
{
	struct bpf_map *map = bpf_object__find_map_by_name(obj, map_name);
	unsigned long long vals[64];
	size_t n = 0, size;
	char *copy = strdup(csv), *tok, *save = NULL;
	unsigned zero = 0;

	if (!map)
		die("object has no map %s", map_name);
	for (tok = strtok_r(copy, ",", &save); tok && n < 64; tok = strtok_r(NULL, ",", &save))
		vals[n++] = strtoull(tok, NULL, 10);
	free(copy);
	size = bpf_map__value_size(map);
	if (size != n * 8)
		die("configuration has %zu values, map %s wants %zu", n, map_name, size / 8);
	if (bpf_map_update_elem(bpf_map__fd(map), &zero, vals, 0))
		die("writing %s: %s", map_name, strerror(errno));
}

/* A TCX egress link for `prog` on IFNAME inside network namespace NETNS (/run/netns/NETNS). */
static int tcx_attach(struct bpf_program *prog, const char *netns, const char *ifname)
{
	char path[256];
	int home, ns, ifindex, fd, e;

	snprintf(path, sizeof(path), "/run/netns/%s", netns);
	home = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
	ns = open(path, O_RDONLY | O_CLOEXEC);
	if (home < 0 || ns < 0 || setns(ns, CLONE_NEWNET)) {
		e = errno;
		if (home >= 0)
			close(home);
		if (ns >= 0)
			close(ns);
		return fail("netns %s: %s", netns, strerror(e));
	}
	close(ns);
	ifindex = if_nametoindex(ifname);
	fd = ifindex ? link_create(bpf_program__fd(prog), ifindex, ATTACH_TCX_EGRESS) : -1;
	e = errno;
	if (setns(home, CLONE_NEWNET))
		die("back to the loader's netns: %s", strerror(errno));
	close(home);
	if (!ifindex)
		return fail("interface %s in netns %s: %s", ifname, netns, strerror(e));
	if (fd < 0)
		return fail("attaching %s to %s egress in %s: %s", bpf_program__name(prog), ifname, netns, strerror(e));
	return fd;
}

/* The object's first program of `type` (NULL if none). */
static struct bpf_program *prog_of_type(struct bpf_object *obj, enum bpf_prog_type type)
{
	struct bpf_program *p;

	bpf_object__for_each_program(p, obj)
		if (bpf_program__type(p) == type)
			return p;
	return NULL;
}

/* Counter names from RACC_COUNTERS (the protocol's, set by the caller), else `fallback`. */
static const char **counter_names(const char **fallback, int *n)
{
	static const char *names[64];
	static char buf[2048];
	const char *env = getenv("RACC_COUNTERS");
	char *tok, *save = NULL;

	if (!env || !*env)
		return fallback;
	snprintf(buf, sizeof(buf), "%s", env);
	*n = 0;
	for (tok = strtok_r(buf, ",", &save); tok && *n < 64; tok = strtok_r(NULL, ",", &save))
		names[(*n)++] = tok;
	return names;
}

static int cgroup_attach(long id, struct bpf_object *obj, const char *path, const char **progs, int n)
{
	int cg = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC), i;

	if (cg < 0)
		return fail("cgroup %s: %s", path, strerror(errno));
	for (i = 0; i < n; i++) {
		struct bpf_program *p = bpf_object__find_program_by_name(obj, progs[i]);
		struct bpf_link *l = p ? bpf_program__attach_cgroup(p, cg) : NULL;

		if (!l || libbpf_get_error(l)) {
			int e = errno;

			close(cg);
			forget(id);
			return fail("attaching %s to %s: %s", progs[i], path, strerror(e));
		}
		if (remember(id, l, -1)) {
			close(cg);
			forget(id);
			return -1;
		}
	}
	close(cg);
	return 0;
}

static void print_counters(struct bpf_object *obj, const char **names, int n)
{
	struct bpf_map *map = bpf_object__find_map_by_name(obj, "counters");
	int ncpu = libbpf_num_possible_cpus(), i, c;
	unsigned long long *vals = calloc(ncpu, sizeof(*vals));

	printf("{");
	for (i = 0; i < n; i++) {
		unsigned long long sum = 0;
		unsigned key = i;

		if (map && bpf_map_lookup_elem(bpf_map__fd(map), &key, vals) == 0)
			for (c = 0; c < ncpu; c++)
				sum += vals[c];
		printf("%s\"%s\": %llu", i ? ", " : "", names[i], sum);
	}
	printf("}\n");
	free(vals);
}

/* The command loop; `hosts` enables the cgroup/iface/detach commands. */
static void serve(struct bpf_object *obj, const char **names, int n, int hosts)
{
	const char *host_progs[2];
	int n_progs = 0;
	struct bpf_program *sp = prog_of_type(obj, BPF_PROG_TYPE_SOCK_OPS);
	struct bpf_program *ip = prog_of_type(obj, BPF_PROG_TYPE_CGROUP_SKB);
	char line[1024], arg[1000];
	long id;
	int rc;

	if (sp)
		host_progs[n_progs++] = bpf_program__name(sp);
	if (ip)
		host_progs[n_progs++] = bpf_program__name(ip);
	printf("ready\n");
	fflush(stdout);
	while (fgets(line, sizeof(line), stdin)) {
		line[strcspn(line, "\n")] = 0;
		rc = 1; /* unknown */
		if (!strcmp(line, "counters")) {
			print_counters(obj, names, n);
			fflush(stdout);
			continue;
		} else if (!strcmp(line, "close")) {
			break;
		} else if (hosts && sscanf(line, "cgroup %ld %999[^\n]", &id, arg) == 2) {
			rc = cgroup_attach(id, obj, arg, host_progs, n_progs);
		} else if (hosts && sscanf(line, "iface %ld %999[^\n]", &id, arg) == 2) {
			char *colon = strchr(arg, ':');
			int fd;

			if (!colon) {
				rc = fail("host interface %s: want NETNS:IFNAME", arg);
			} else {
				struct bpf_program *eg = prog_of_type(obj, BPF_PROG_TYPE_SCHED_CLS);

				*colon = 0;
				fd = eg ? tcx_attach(eg, arg, colon + 1) : fail("the object has no tc program for %s", arg);
				rc = fd < 0 ? -1 : remember(id, NULL, fd);
			}
		} else if (hosts && sscanf(line, "detach %ld", &id) == 1) {
			forget(id);
			rc = 0;
		}
		if (rc == 0)
			printf("ok\n");
		else if (rc < 0)
			printf("error: %s\n", err);
		else
			printf("error: unknown command\n");
		fflush(stdout);
	}
}

static int libbpf_quiet(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	/* The verifier's log on a failed load is what a user needs; the rest is noise. */
	return level == LIBBPF_WARN ? vfprintf(stderr, fmt, ap) : 0;
}

static struct bpf_object *open_obj(const char *path)
{
	struct bpf_object *obj = bpf_object__open_file(path, NULL);

	if (!obj || libbpf_get_error(obj))
		die("opening %s: %s", path, strerror(errno));
	return obj;
}

/* A router object loaded, its configuration written: its tc program. */
static struct bpf_program *load_router(struct bpf_object *obj, const char *path, const char *config)
{
	struct bpf_program *prog;

	if (bpf_object__load(obj))
		die("loading %s: the verifier refused it (log above)", path);
	write_config(obj, bpf_object__find_map_by_name(obj, "lf_config") ? "lf_config" : "router_config", config);
	prog = prog_of_type(obj, BPF_PROG_TYPE_SCHED_CLS);
	if (!prog)
		die("object has no tc program");
	return prog;
}

static int run_router(char **argv)
{
	struct bpf_object *obj = open_obj(argv[0]);
	struct bpf_program *prog;
	int fd, n = sizeof(router_counters) / sizeof(*router_counters);
	const char **names = counter_names(router_counters, &n);

	prog = load_router(obj, argv[0], argv[3]);
	fd = tcx_attach(prog, argv[1], argv[2]);
	if (fd < 0)
		die("%s", err);
	serve(obj, names, n, 0);
	return 0;
}

static int run_hosts(char **argv)
{
	struct bpf_object *obj = open_obj(argv[0]);
	struct bpf_map *ops = NULL, *m;
	struct bpf_link *l;
	int n = sizeof(host_counters) / sizeof(*host_counters);
	const char **names = counter_names(host_counters, &n);

	bpf_object__for_each_map(m, obj)
		if (bpf_map__type(m) == BPF_MAP_TYPE_STRUCT_OPS && !ops)
			ops = m;
	if (!ops)
		die("object has no struct_ops map");
	bpf_map__set_map_flags(ops, BPF_F_LINK);
	if (bpf_object__load(obj))
		die("loading %s: the verifier refused it (log above)", argv[0]);
	write_config(obj, "law_config", argv[1]);
	/* libbpf 1.1 fills the struct_ops value in bpf_map__attach_struct_ops (an update that, on a
	 * BPF_F_LINK map, only stores it); the link then registers it. */
	l = bpf_map__attach_struct_ops(ops);
	if (!l || libbpf_get_error(l))
		die("preparing struct_ops %s: %s", bpf_map__name(ops), strerror(errno));
	if (link_create(bpf_map__fd(ops), 0, ATTACH_STRUCT_OPS) < 0)
		die("registering tcp_congestion_ops %s: %s%s", bpf_map__name(ops), strerror(errno),
		    errno == EEXIST ? " (another racc run holds the name)" : "");
	serve(obj, names, n, 1);
	return 0;
}

static int run_sockops(char **argv)
{
	static const char *progs[1];
	struct bpf_object *obj = open_obj(argv[0]);

	if (bpf_object__load(obj))
		die("loading %s: the verifier refused it (log above)", argv[0]);
	progs[0] = argv[2];
	if (cgroup_attach(0, obj, argv[1], progs, 1))
		die("%s", err);
	serve(obj, NULL, 0, 0);
	return 0;
}

static int hex_nibble(char c)
{
	return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

/* The router's cost per packet, measured in the kernel (racc kernel bench, docs/KERNEL-BPF.md):
 * the packet as one run leaves it is the next run's input, and the port's state carries over. */
static int run_bench(char **argv)
{
	struct bpf_object *obj = open_obj(argv[0]);
	struct bpf_program *prog;
	unsigned char frame[9000];
	size_t len = strlen(argv[2]) / 2, i;
	long repeat = atol(argv[3]), rounds = atol(argv[4]), r;
	int n = sizeof(router_counters) / sizeof(*router_counters);
	const char **names = counter_names(router_counters, &n);

	if (strlen(argv[2]) % 2 || len < 14 || len > sizeof(frame))
		die("frame: want 14 to %zu bytes in hex", sizeof(frame));
	for (i = 0; i < len; i++) {
		int hi = hex_nibble(argv[2][2 * i]), lo = hex_nibble(argv[2][2 * i + 1]);

		if (hi < 0 || lo < 0)
			die("frame: not hex at byte %zu", i);
		frame[i] = (unsigned char)(hi << 4 | lo);
	}
	if (repeat < 1 || rounds < 1)
		die("repeat and rounds: want positive integers");
	prog = load_router(obj, argv[0], argv[1]);
	printf("{\"frame\": %zu, \"repeat\": %ld, \"ns\": [", len, repeat);
	for (r = 0; r < rounds; r++) {
		unsigned char out[sizeof(frame)];
		LIBBPF_OPTS(bpf_test_run_opts, opts, .data_in = frame, .data_size_in = len, .data_out = out,
			    .data_size_out = sizeof(out), .repeat = repeat);

		if (bpf_prog_test_run_opts(bpf_program__fd(prog), &opts))
			die("BPF_PROG_TEST_RUN: %s", strerror(errno));
		printf("%s%u", r ? ", " : "", opts.duration);
		if (r == rounds - 1)
			printf("], \"retval\": %d}\n", (int)opts.retval);
	}
	print_counters(obj, names, n);
	return 0;
}

int main(int argc, char **argv)
{
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() == 1)
		return 1; /* the parent is already gone */
	libbpf_set_print(libbpf_quiet);
	/* A trailing COUNTERS argument names the counter slots as RACC_COUNTERS does. */
	if ((argc == 7 && !strcmp(argv[1], "router")) || (argc == 5 && !strcmp(argv[1], "hosts")))
		setenv("RACC_COUNTERS", argv[argc - 1], 1);
	if ((argc == 6 || argc == 7) && !strcmp(argv[1], "router"))
		return run_router(argv + 2);
	if ((argc == 4 || argc == 5) && !strcmp(argv[1], "hosts"))
		return run_hosts(argv + 2);
	if (argc == 5 && !strcmp(argv[1], "sockops"))
		return run_sockops(argv + 2);
	if (argc == 7 && !strcmp(argv[1], "bench"))
		return run_bench(argv + 2);
	fprintf(stderr, "usage: racc-bpf-loader router OBJ NETNS IFNAME CONFIG [COUNTERS] | hosts OBJ CONFIG [COUNTERS] | "
			"sockops OBJ CGROUP PROG | bench OBJ CONFIG FRAME REPEAT ROUNDS\n");
	return 2;
}
