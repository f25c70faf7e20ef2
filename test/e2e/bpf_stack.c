/*
 * bpf_stack.c - every program of the collector's BPF object fits the kernel's 512-byte BPF stack
 * without a private stack. Since 6.13 a kernel may give a tracing program's main function a
 * stack of its own, and then only the frames below it count towards MAX_BPF_STACK; a kernel
 * without that (before 6.13, or one that does not grant it to a program) adds every frame of
 * the deepest call chain and refuses the whole object when one program's chain is over 512
 * bytes ("combined stack size of 5 calls is 560. Too large"). Which of the two a kernel does is
 * not this test's to choose, so it computes the second itself, on any kernel: each program is
 * loaded alone with the verifier's statistics (its "stack depth a+b+c" line: one frame per
 * subprogram, in the order of their first instruction), the program as the kernel keeps it
 * gives the subprograms' starts and the call graph (calls and callback references; after the
 * verifier's own rewrites, as its log's frames are), and the deepest chain, each frame rounded up
 * to 16 bytes as the verifier does for JIT-compiled programs, must be at most 512. The frames of
 * bpf_loop calls the verifier inlined include its 24 bytes of loop state, which its own check
 * does not count: the figure errs on the safe side. A program whose hook this kernel lacks is
 * named and not counted (the collector leaves it unloaded too).
 *
 * usage: mw_bpf_stack OBJECT.bpf.o   (root; exit 0 all fit, 1 one does not or a load failed,
 *                                     77 not root)
 */
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_STACK    512       /* the kernel's MAX_BPF_STACK */
#define MAX_SUBPROGS 256       /* the kernel's BPF_MAX_SUBPROGS */
#define LOG_BYTES    (1 << 16) /* the statistics log is a few lines; room for a failure's tail */

struct graph {
	int n;			   /* subprograms */
	int start[MAX_SUBPROGS];   /* first instruction of each, increasing */
	int depth[MAX_SUBPROGS];   /* its frame, rounded */
	int deepest[MAX_SUBPROGS]; /* memo: its frame plus its deepest callee chain; -1 unknown */
	const struct bpf_insn *insns;
	size_t cnt;
};

/* The target of a subprogram call or callback reference at insn i of the kernel's translated
 * program, or -1 when it is neither (the kernel dumps a call with its offset in off, a callback
 * reference with its offset in imm). */
static long call_target(const struct bpf_insn *insns, size_t i)
{
	const struct bpf_insn *in = &insns[i];

	if (in->code == (BPF_JMP | BPF_CALL) && in->src_reg == BPF_PSEUDO_CALL)
		return (long)i + in->off + 1;
	if (in->code == (BPF_LD | BPF_IMM | BPF_DW) && in->src_reg == BPF_PSEUDO_FUNC)
		return (long)i + in->imm + 1;
	return -1;
}

/* Subprogram starts, from the loaded program's function records: the program as the verifier
 * left it (subprograms it found dead are gone, and with them their frames in its log). The
 * translated instructions come with them. 0, or -1 with a message. */
static int find_subprogs(struct graph *g, int fd, const char *name)
{
	static struct bpf_insn xlated[1000000];
	static struct bpf_func_info funcs[MAX_SUBPROGS];
	struct bpf_prog_info info = {};
	__u32 len = sizeof(info);

	if (bpf_obj_get_info_by_fd(fd, &info, &len)) {
		fprintf(stderr, "%s: no program info: %s\n", name, strerror(errno));
		return -1;
	}
	if (info.nr_func_info == 0 || info.nr_func_info > MAX_SUBPROGS ||
	    info.xlated_prog_len > sizeof(xlated)) {
		fprintf(stderr, "%s: %u function records, %u bytes of instructions\n", name,
			info.nr_func_info, info.xlated_prog_len);
		return -1;
	}
	g->n = (int)info.nr_func_info;
	g->cnt = info.xlated_prog_len / sizeof(struct bpf_insn);
	memset(&info, 0, sizeof(info));
	info.nr_func_info = (__u32)g->n;
	info.func_info_rec_size = sizeof(funcs[0]);
	info.func_info = (__u64)(unsigned long)funcs;
	info.xlated_prog_len = (__u32)(g->cnt * sizeof(struct bpf_insn));
	info.xlated_prog_insns = (__u64)(unsigned long)xlated;
	len = sizeof(info);
	if (bpf_obj_get_info_by_fd(fd, &info, &len)) {
		fprintf(stderr, "%s: no program info: %s\n", name, strerror(errno));
		return -1;
	}
	for (int k = 0; k < g->n; k++) {
		g->start[k] = (int)funcs[k].insn_off;
		if ((k && g->start[k] <= g->start[k - 1]) || (size_t)g->start[k] >= g->cnt) {
			fprintf(stderr, "%s: function record %d starts at %d\n", name, k,
				g->start[k]);
			return -1;
		}
	}
	g->insns = xlated;
	return 0;
}

/* The frames from the log's "stack depth a+b+c" line, one per subprogram. 0, or -1. */
static int read_depths(struct graph *g, const char *log, const char *name)
{
	const char *p = strstr(log, "stack depth ");
	int k = 0;

	if (!p) {
		fprintf(stderr, "%s: the verifier's log has no stack depth line\n", name);
		return -1;
	}
	p += strlen("stack depth ");
	for (;;) {
		char *end;
		long d = strtol(p, &end, 10);

		if (end == p || d < 0 || k == g->n) {
			fprintf(stderr, "%s: the stack depth line does not name %d frames\n", name,
				g->n);
			return -1;
		}
		g->depth[k] = (int)((d + 15) / 16 * 16);
		g->deepest[k++] = -1;
		if (*end != '+')
			break;
		p = end + 1;
	}
	if (k != g->n) {
		fprintf(stderr, "%s: %d frames in the log, %d subprograms in the program\n", name,
			k, g->n);
		return -1;
	}
	return 0;
}

static int subprog_of(const struct graph *g, long insn)
{
	int k = g->n - 1;

	while (k > 0 && g->start[k] > insn)
		k--;
	return k;
}

/* The deepest chain from subprogram k: its frame and that of its deepest callee chain. */
static int deepest_from(struct graph *g, int k, int level)
{
	size_t end = k + 1 < g->n ? (size_t)g->start[k + 1] : g->cnt;
	int below = 0;

	if (g->deepest[k] >= 0)
		return g->deepest[k];
	if (level > MAX_SUBPROGS)
		return MAX_STACK * 2; /* a cycle: the verifier refuses recursion, and so do we */
	for (size_t i = (size_t)g->start[k]; i < end; i++) {
		long t = call_target(g->insns, i);
		int d;

		if (t < 0)
			continue;
		d = deepest_from(g, subprog_of(g, t), level + 1);
		if (d > below)
			below = d;
	}
	g->deepest[k] = g->depth[k] + below;
	return g->deepest[k];
}

/* Loads program `which` (by index) of the object alone; its deepest chain, or -1. */
static int program_stack(const char *path, int which, char *name, size_t name_size, int *frames)
{
	static char log[LOG_BYTES];
	static struct graph g;
	struct bpf_object *obj = bpf_object__open_file(path, NULL);
	struct bpf_program *p, *prog = NULL;
	int i = 0, err, deepest = -1;

	if (!obj) {
		fprintf(stderr, "%s: cannot open: %s\n", path, strerror(errno));
		return -1;
	}
	bpf_object__for_each_program(p, obj) {
		if (i++ == which) {
			prog = p;
			bpf_program__set_log_buf(p, log, sizeof(log));
			bpf_program__set_log_level(p, 4); /* statistics only */
		} else {
			bpf_program__set_autoload(p, false);
		}
	}
	if (!prog)
		goto out;
	snprintf(name, name_size, "%s", bpf_program__name(prog));
	log[0] = '\0';
	err = bpf_object__load(obj);
	if (err == -ESRCH) { /* no such hook here: the collector leaves it unloaded too */
		printf("%s: not on this kernel (its hook is missing), not counted\n", name);
		deepest = 0;
		goto out;
	}
	if (err) {
		const char *tail = strlen(log) > 300 ? log + strlen(log) - 300 : log;

		fprintf(stderr, "%s: does not load: %s\n%s\n", name, strerror(-err), tail);
		goto out;
	}
	if (find_subprogs(&g, bpf_program__fd(prog), name) || read_depths(&g, log, name))
		goto out;
	deepest = deepest_from(&g, 0, 0);
	*frames = g.n;
out:
	bpf_object__close(obj);
	return deepest;
}

int main(int argc, char **argv)
{
	struct bpf_object *obj;
	struct bpf_program *p;
	int n = 0, bad = 0, worst = 0;
	char worst_name[128] = "";

	if (argc != 2) {
		fprintf(stderr, "usage: mw_bpf_stack OBJECT.bpf.o\n");
		return 2;
	}
	if (geteuid() != 0) {
		printf("SKIP: loading BPF programs needs root\n");
		return 77;
	}
	obj = bpf_object__open_file(argv[1], NULL);
	if (!obj) {
		fprintf(stderr, "%s: cannot open: %s\n", argv[1], strerror(errno));
		return 1;
	}
	bpf_object__for_each_program(p, obj)
		n++;
	bpf_object__close(obj);
	libbpf_set_print(NULL);
	for (int i = 0; i < n; i++) {
		char name[128] = "?";
		int frames = 0, d = program_stack(argv[1], i, name, sizeof(name), &frames);

		if (d < 0 || d > MAX_STACK) {
			if (d > MAX_STACK)
				fprintf(stderr,
					"%s: its deepest call chain (of %d functions) needs %d "
					"bytes of stack, over the kernel's %d without a private "
					"stack\n",
					name, frames, d, MAX_STACK);
			bad++;
		}
		if (d > worst) {
			worst = d;
			snprintf(worst_name, sizeof(worst_name), "%s", name);
		}
	}
	printf("%d programs; deepest call chain %d bytes (%s), limit %d; %d over it or not "
	       "loaded\n",
	       n, worst, worst_name, MAX_STACK, bad);
	return bad ? 1 : 0;
}
