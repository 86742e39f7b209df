// SPDX-License-Identifier: GPL-2.0
/* racc's BPF loader (docs/KERNEL-BPF.md): loads one object, writes its configuration, attaches
 * its programs through BPF links, then holds them until its standard input closes (or its
 * parent dies), answering "counters" with one JSON line. Every attachment is a link whose last
 * fd this process holds, so whatever way it ends, the kernel detaches everything: TCX links on
 * interfaces, cgroup links for sockops and cgroup_skb, and a struct_ops link for the controller
 * (registered with BPF_F_LINK, so that the name disappears with the process).
 *
 *   racc-bpf-loader router OBJ NETNS IFNAME CONFIG
 *   racc-bpf-loader hosts OBJ CGROUP CONFIG [NETNS:IFNAME ...]
 *   racc-bpf-loader sockops OBJ CGROUP PROG       (any one sockops program; the tests' forger)
 *
 * CONFIG is the configuration struct as comma-separated unsigned 64-bit integers. Output: one
 * line "ready" (or "error: ..." on stderr and exit 1), then one JSON object per "counters". */
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
#define ATTACH_TCX_INGRESS 46
#define ATTACH_TCX_EGRESS 47

static const char *router_counters[] = { "packets", "bytes", "marked", "codes_low", "codes_high",
					  "codes_overload", "not_ect" };
static const char *host_counters[] = { "acks", "mi", "ai", "md_events", "md_held", "bleached",
					"echo_absent", "echo_malformed", "echo_written", "data_coded",
					"sent_ect1", "loss_halvings" };

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

/* Enter network namespace NAME (/run/netns/NAME), keeping `home` to come back. */
static void enter_netns(const char *name)
{
	char path[256];
	int fd;

	snprintf(path, sizeof(path), "/run/netns/%s", name);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		die("netns %s: %s", name, strerror(errno));
	if (setns(fd, CLONE_NEWNET))
		die("entering netns %s: %s", name, strerror(errno));
	close(fd);
}

static int tcx_attach(struct bpf_program *prog, const char *netns, const char *ifname, unsigned type)
{
	int home = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC), ifindex, fd;

	if (home < 0)
		die("own netns: %s", strerror(errno));
	enter_netns(netns);
	ifindex = if_nametoindex(ifname);
	if (!ifindex)
		die("interface %s in netns %s: %s", ifname, netns, strerror(errno));
	fd = link_create(bpf_program__fd(prog), ifindex, type);
	if (fd < 0)
		die("attaching %s to %s egress in %s: %s", bpf_program__name(prog), ifname, netns, strerror(errno));
	if (setns(home, CLONE_NEWNET))
		die("back to own netns: %s", strerror(errno));
	close(home);
	return fd;
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
	fflush(stdout);
	free(vals);
}

static void serve(struct bpf_object *obj, const char **names, int n)
{
	char line[64];

	printf("ready\n");
	fflush(stdout);
	while (fgets(line, sizeof(line), stdin)) {
		if (!strncmp(line, "counters", 8))
			print_counters(obj, names, n);
		else if (!strncmp(line, "close", 5))
			break;
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

static int run_router(char **argv)
{
	struct bpf_object *obj = open_obj(argv[0]);
	struct bpf_program *prog;

	if (bpf_object__load(obj))
		die("loading %s: the verifier refused it (log above)", argv[0]);
	write_config(obj, "lf_config", argv[3]);
	prog = bpf_object__find_program_by_name(obj, "vcp_router_egress");
	if (!prog)
		die("object has no program vcp_router_egress");
	tcx_attach(prog, argv[1], argv[2], ATTACH_TCX_EGRESS);
	serve(obj, router_counters, sizeof(router_counters) / sizeof(*router_counters));
	return 0;
}

static int run_hosts(int argc, char **argv)
{
	struct bpf_object *obj = open_obj(argv[0]);
	struct bpf_map *ops = bpf_object__find_map_by_name(obj, "racc_vcp");
	struct bpf_program *p;
	struct bpf_link *l;
	int cg, i, zero = 0;

	if (!ops)
		die("object has no struct_ops racc_vcp");
	bpf_map__set_map_flags(ops, BPF_F_LINK);
	if (bpf_object__load(obj))
		die("loading %s: the verifier refused it (log above)", argv[0]);
	write_config(obj, "law_config", argv[2]);
	/* libbpf 1.1 fills the struct_ops value in bpf_map__attach_struct_ops (an update that, on a
	 * BPF_F_LINK map, only stores it); the link then registers it. */
	l = bpf_map__attach_struct_ops(ops);
	if (!l && errno)
		die("preparing struct_ops racc_vcp: %s", strerror(errno));
	if (link_create(bpf_map__fd(ops), 0, ATTACH_STRUCT_OPS) < 0)
		die("registering tcp_congestion_ops racc_vcp: %s%s", strerror(errno),
		    errno == EEXIST ? " (another racc run holds the name)" : "");
	(void)zero;
	cg = open(argv[1], O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (cg < 0)
		die("cgroup %s: %s", argv[1], strerror(errno));
	p = bpf_object__find_program_by_name(obj, "vcp_sockops");
	if (!p || libbpf_get_error(bpf_program__attach_cgroup(p, cg)))
		die("attaching sockops to %s: %s", argv[1], strerror(errno));
	p = bpf_object__find_program_by_name(obj, "vcp_host_ingress");
	if (!p || libbpf_get_error(bpf_program__attach_cgroup(p, cg)))
		die("attaching cgroup_skb ingress to %s: %s", argv[1], strerror(errno));
	p = bpf_object__find_program_by_name(obj, "vcp_host_egress");
	for (i = 3; i < argc; i++) {
		char *colon = strchr(argv[i], ':');

		if (!colon)
			die("host interface %s: want NETNS:IFNAME", argv[i]);
		*colon = 0;
		tcx_attach(p, argv[i], colon + 1, ATTACH_TCX_EGRESS);
	}
	serve(obj, host_counters, sizeof(host_counters) / sizeof(*host_counters));
	return 0;
}

static int run_sockops(char **argv)
{
	struct bpf_object *obj = open_obj(argv[0]);
	struct bpf_program *p;
	int cg;

	if (bpf_object__load(obj))
		die("loading %s: the verifier refused it (log above)", argv[0]);
	cg = open(argv[1], O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (cg < 0)
		die("cgroup %s: %s", argv[1], strerror(errno));
	p = bpf_object__find_program_by_name(obj, argv[2]);
	if (!p || libbpf_get_error(bpf_program__attach_cgroup(p, cg)))
		die("attaching %s to %s: %s", argv[2], argv[1], strerror(errno));
	serve(obj, NULL, 0);
	return 0;
}

int main(int argc, char **argv)
{
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() == 1)
		return 1; /* the parent is already gone */
	libbpf_set_print(libbpf_quiet);
	if (argc == 6 && !strcmp(argv[1], "router"))
		return run_router(argv + 2);
	if (argc >= 5 && !strcmp(argv[1], "hosts"))
		return run_hosts(argc - 2, argv + 2);
	if (argc == 5 && !strcmp(argv[1], "sockops"))
		return run_sockops(argv + 2);
	fprintf(stderr, "usage: racc-bpf-loader router OBJ NETNS IFNAME CONFIG | hosts OBJ CGROUP CONFIG [NETNS:IFNAME ...] | sockops OBJ CGROUP PROG\n");
	return 2;
}
