/*
 * bpf_stack.c - every program of the collector's BPF object fits the kernel's 512-byte BPF stack
 * without a private stack. Since 6.13 a kernel may give a tracing program's main function a
 * stack of its own, and then only the frames below it count towards MAX_BPF_STACK; a kernel
 * without that (before 6.13, or one that does not grant it to a program) adds every frame of
 * the deepest call chain and refuses the whole object when one program's chain is over 512
 * bytes ("combined stack size of 5 calls is 560. Too large"). Which of the two a kernel does is
 * not this test's to choose, so it computes the second itself, on any kernel:
 *
 * - each program is loaded alone with the verifier's statistics: its "stack depth a+b+c" line
 *   gives one frame per subprogram, in the order of their first instruction;
 * - the program as the kernel keeps it gives the subprograms' starts (its function records)
 *   and the call graph (calls and callback references in the translated instructions), both
 *   after the verifier's own rewrites, as its log's frames are;
 * - a bpf_loop call the verifier inlined (the callback is then both referenced and called
 *   from the same subprogram) added 24 bytes and up to 7 of alignment to that subprogram's
 *   frame after its stack check ran: the 24 are taken off, the alignment is not;
 * - each frame is rounded up to 32 bytes, as kernels before 6.9 round every frame (since
 *   then, 16 for JIT-compiled programs), and the deepest chain must be at most 512 bytes and
 *   8 frames (MAX_CALL_FRAMES). A tail call from a subprogram other than the main one, whose
 *   kernel rule (the frames above it under 256 bytes) this test does not model, fails it.
 *
 * Programs the collector leaves unloaded on this kernel (no such tracepoint, or one whose
 * arguments have another shape: collector/hookshape.c) are named and not counted; a run that
 * measures no program fails.
 *
 * usage: mw_bpf_stack OBJECT.bpf.o   (root; exit 0 all fit, 1 one does not or a load failed,
 *                                     77 not root)
 */
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hookshape.h"

#define MAX_STACK     512	/* the kernel's MAX_BPF_STACK */
#define MAX_FRAMES    8		/* the kernel's MAX_CALL_FRAMES */
#define MAX_SUBPROGS  256	/* the kernel's BPF_MAX_SUBPROGS */
#define MAX_INSNS     1000000	/* the kernel's BPF_COMPLEXITY_LIMIT_INSNS */
#define INLINED_LOOP  (3 * 8)	/* what the verifier adds for an inlined bpf_loop */
#define FRAME_ROUND   32	/* the coarser of the kernels' two roundings */
#define LOG_BYTES     (1 << 16) /* the statistics log is a few lines; room for a failure */
#define BPF_FUNC_TAIL 12	/* BPF_FUNC_tail_call, as a dump shows a tail call */

struct graph {
	int n;			   /* subprograms */
	int start[MAX_SUBPROGS];   /* first instruction of each, increasing */
	int frame[MAX_SUBPROGS];   /* its frame as counted (see the top) */
	int deepest[MAX_SUBPROGS]; /* memo: its frame plus its deepest callee chain; -1 unknown */
	int frames[MAX_SUBPROGS];  /* memo: the number of frames of that chain */
	bool called[MAX_SUBPROGS]; /* some edge reaches it */
	const struct bpf_insn *insns;
	size_t cnt;
};

/* The target of a subprogram call (call) or callback reference at insn i of the kernel's
 * translated program, or -1 when it is neither (the kernel dumps a call with its offset in
 * off, a callback reference with its offset in imm). */
static long call_target(const struct bpf_insn *insns, size_t i, bool *call)
{
	const struct bpf_insn *in = &insns[i];

	*call = in->code == (BPF_JMP | BPF_CALL) && in->src_reg == BPF_PSEUDO_CALL;
	if (*call)
		return (long)i + in->off + 1;
	if (in->code == (BPF_LD | BPF_IMM | BPF_DW) && in->src_reg == BPF_PSEUDO_FUNC)
		return (long)i + in->imm + 1;
	return -1;
}

static bool is_tail_call(const struct bpf_insn *in)
{
	return in->code == (BPF_JMP | BPF_CALL) && in->src_reg == 0 && in->imm == BPF_FUNC_TAIL;
}

static int subprog_of(const struct graph *g, long insn)
{
	int k = g->n - 1;

	while (k > 0 && g->start[k] > insn)
		k--;
	return k;
}

static size_t subprog_end(const struct graph *g, int k)
{
	return k + 1 < g->n ? (size_t)g->start[k + 1] : g->cnt;
}

/* Subprogram starts and translated instructions of the loaded program fd. 0, or -1 with a
 * message (also when the kernel withheld them: a blinded program without raw dumps allowed). */
static int find_subprogs(struct graph *g, int fd, const char *name)
{
	static struct bpf_insn xlated[MAX_INSNS];
	static struct bpf_func_info funcs[MAX_SUBPROGS];
	struct bpf_prog_info info = {};
	__u32 len = sizeof(info), n, bytes;

	if (bpf_obj_get_info_by_fd(fd, &info, &len)) {
		fprintf(stderr, "%s: no program info: %s\n", name, strerror(errno));
		return -1;
	}
	n = info.nr_func_info;
	bytes = info.xlated_prog_len;
	if (n == 0 || n > MAX_SUBPROGS || bytes == 0 || bytes > sizeof(xlated) ||
	    bytes % sizeof(struct bpf_insn)) {
		fprintf(stderr, "%s: %u function records, %u bytes of instructions\n", name, n,
			bytes);
		return -1;
	}
	memset(funcs, 0, n * sizeof(funcs[0]));
	memset(xlated, 0, bytes);
	memset(&info, 0, sizeof(info));
	info.nr_func_info = n;
	info.func_info_rec_size = sizeof(funcs[0]);
	info.func_info = (__u64)(unsigned long)funcs;
	info.xlated_prog_len = bytes;
	info.xlated_prog_insns = (__u64)(unsigned long)xlated;
	len = sizeof(info);
	if (bpf_obj_get_info_by_fd(fd, &info, &len)) {
		fprintf(stderr, "%s: no program info: %s\n", name, strerror(errno));
		return -1;
	}
	if (!info.xlated_prog_insns || info.xlated_prog_len != bytes || info.nr_func_info != n ||
	    !info.func_info) {
		fprintf(stderr, "%s: the kernel withheld the program's instructions or functions\n",
			name);
		return -1;
	}
	g->n = (int)n;
	g->cnt = bytes / sizeof(struct bpf_insn);
	g->insns = xlated;
	for (int k = 0; k < g->n; k++) {
		g->start[k] = (int)funcs[k].insn_off;
		g->called[k] = false;
		if ((k && g->start[k] <= g->start[k - 1]) || (size_t)g->start[k] >= g->cnt) {
			fprintf(stderr, "%s: function record %d starts at %d\n", name, k,
				g->start[k]);
			return -1;
		}
	}
	return 0;
}

/* Whether subprogram k calls target t directly and also references it as a callback: a
 * bpf_loop the verifier inlined (it leaves the reference and calls the callback itself). */
static bool inlined_loop(const struct graph *g, int k, long t)
{
	for (size_t i = (size_t)g->start[k]; i < subprog_end(g, k); i++) {
		bool call;

		if (call_target(g->insns, i, &call) == t && !call)
			return true;
	}
	return false;
}

/* The frames from the log's "stack depth a+b+c" line, one per subprogram, as counted (see the
 * top); the edges' targets checked and marked called. 0, or -1 with a message. */
static int read_frames(struct graph *g, const char *log, const char *name)
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

		if (end == p || d < 0 || d > 4096 || k == g->n) {
			fprintf(stderr, "%s: the stack depth line does not name %d frames\n", name,
				g->n);
			return -1;
		}
		g->frame[k] = (int)d;
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
	for (k = 0; k < g->n; k++) {
		bool inlined = false;

		for (size_t i = (size_t)g->start[k]; i < subprog_end(g, k); i++) {
			bool call;
			long t = call_target(g->insns, i, &call);

			if (k && is_tail_call(&g->insns[i])) {
				fprintf(stderr,
					"%s: a tail call in subprogram %d, whose rule this "
					"test does not model\n",
					name, k);
				return -1;
			}
			if (t < 0)
				continue;
			if (t >= (long)g->cnt || subprog_of(g, t) == k ||
			    g->start[subprog_of(g, t)] != t) {
				fprintf(stderr,
					"%s: insn %zu reaches %ld, no other function's start\n",
					name, i, t);
				return -1;
			}
			g->called[subprog_of(g, t)] = true;
			if (call && inlined_loop(g, k, t))
				inlined = true;
		}
		if (inlined && g->frame[k] >= INLINED_LOOP)
			g->frame[k] -= INLINED_LOOP;
		g->frame[k] = (g->frame[k] > 0 ? g->frame[k] + FRAME_ROUND - 1 : FRAME_ROUND) /
			      FRAME_ROUND * FRAME_ROUND;
	}
	for (k = 1; k < g->n; k++)
		if (!g->called[k]) {
			fprintf(stderr, "%s: no call reaches subprogram %d\n", name, k);
			return -1;
		}
	return 0;
}

/* The deepest chain from subprogram k: its frame and that of its deepest callee chain. */
static int deepest_from(struct graph *g, int k, int level)
{
	int below = 0, below_frames = 0;

	if (g->deepest[k] >= 0)
		return g->deepest[k];
	if (level > MAX_SUBPROGS)
		return MAX_STACK * 2; /* a cycle: the verifier refuses recursion, and so do we */
	for (size_t i = (size_t)g->start[k]; i < subprog_end(g, k); i++) {
		bool call;
		long t = call_target(g->insns, i, &call);
		int d, c;

		if (t < 0)
			continue;
		c = subprog_of(g, t);
		d = deepest_from(g, c, level + 1);
		if (d > below || (d == below && g->frames[c] > below_frames)) {
			below = d;
			below_frames = g->frames[c];
		}
	}
	g->deepest[k] = g->frame[k] + below;
	g->frames[k] = 1 + below_frames;
	return g->deepest[k];
}

/* Whether the collector loads a program of section sec here: a tp_btf program only where the
 * tracepoint exists with the arguments it reads (collector/loader.c, hookshape.c). */
static bool collector_loads(const char *sec, const struct btf *vmlinux, const char *name)
{
	if (strncmp(sec, "tp_btf/", 7))
		return true;
	if (hook_typedef(sec + 7, vmlinux) <= 0) {
		printf("%s: this kernel has no hook %s: not loaded by the collector, not counted\n",
		       name, sec);
		return false;
	}
	if (!hook_has_shape(sec + 7, vmlinux)) {
		printf("%s: this kernel's hook %s has other arguments: not loaded by the "
		       "collector, "
		       "not counted\n",
		       name, sec);
		return false;
	}
	return true;
}

enum outcome { MEASURED, NOT_HERE, FAILED };

/* Loads program `which` (by index) of the object alone: its deepest chain (*bytes, *frames). */
static enum outcome program_stack(const char *path, int which, const struct btf *vmlinux,
				  char *name, size_t name_size, int *bytes, int *frames)
{
	static char log[LOG_BYTES];
	static struct graph g;
	struct bpf_object *obj = bpf_object__open_file(path, NULL);
	struct bpf_program *p, *prog = NULL;
	enum outcome out = FAILED;
	int i = 0, err;

	if (!obj) {
		fprintf(stderr, "%s: cannot open: %s\n", path, strerror(errno));
		return FAILED;
	}
	bpf_object__for_each_program(p, obj) {
		if (i++ == which) {
			prog = p;
			bpf_program__set_autoload(p, true);
			bpf_program__set_log_buf(p, log, sizeof(log));
			bpf_program__set_log_level(p, 4); /* statistics only */
		} else {
			bpf_program__set_autoload(p, false);
		}
	}
	if (!prog)
		goto done;
	snprintf(name, name_size, "%s", bpf_program__name(prog));
	if (!collector_loads(bpf_program__section_name(prog), vmlinux, name)) {
		out = NOT_HERE;
		goto done;
	}
	log[0] = '\0';
	err = bpf_object__load(obj);
	if (err) {
		const char *tail = strlen(log) > 300 ? log + strlen(log) - 300 : log;

		fprintf(stderr, "%s: does not load: %s\n%s\n", name, strerror(-err), tail);
		goto done;
	}
	if (find_subprogs(&g, bpf_program__fd(prog), name) || read_frames(&g, log, name))
		goto done;
	*bytes = deepest_from(&g, 0, 0);
	*frames = g.frames[0];
	out = MEASURED;
done:
	bpf_object__close(obj);
	return out;
}

int main(int argc, char **argv)
{
	struct bpf_object *obj;
	struct bpf_program *p;
	struct btf *vmlinux;
	int n = 0, bad = 0, measured = 0, worst = 0;
	char worst_name[128] = "";

	if (argc != 2) {
		fprintf(stderr, "usage: mw_bpf_stack OBJECT.bpf.o\n");
		return 2;
	}
	if (geteuid() != 0) {
		printf("SKIP: loading BPF programs needs root\n");
		return 77;
	}
	vmlinux = btf__load_vmlinux_btf();
	obj = bpf_object__open_file(argv[1], NULL);
	if (!vmlinux || !obj) {
		fprintf(stderr, "%s: cannot open it or the kernel's BTF: %s\n", argv[1],
			strerror(errno));
		return 1;
	}
	bpf_object__for_each_program(p, obj)
		n++;
	bpf_object__close(obj);
	libbpf_set_print(NULL);
	for (int i = 0; i < n; i++) {
		char name[128] = "?";
		int bytes = 0, frames = 0;

		switch (program_stack(argv[1], i, vmlinux, name, sizeof(name), &bytes, &frames)) {
		case NOT_HERE:
			continue;
		case FAILED:
			bad++;
			continue;
		case MEASURED:
			break;
		}
		measured++;
		if (bytes > MAX_STACK || frames > MAX_FRAMES) {
			fprintf(stderr,
				"%s: its deepest call chain, %d frames, needs %d bytes of stack by "
				"this test's count: over the %d bytes and %d frames a kernel "
				"without "
				"a private stack allows\n",
				name, frames, bytes, MAX_STACK, MAX_FRAMES);
			bad++;
		}
		if (bytes > worst) {
			worst = bytes;
			snprintf(worst_name, sizeof(worst_name), "%s", name);
		}
	}
	btf__free(vmlinux);
	printf("%d programs, %d measured; deepest call chain %d bytes (%s), limit %d; %d over it "
	       "or not loaded\n",
	       n, measured, worst, worst_name, MAX_STACK, bad);
	if (!measured) {
		fprintf(stderr, "%s: no program measured\n", argv[1]);
		return 1;
	}
	return bad ? 1 : 0;
}
