/*
 * policy_testlib.c - helpers of the policy suites (see policy_testlib.h).
 */
#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "events.h"
#include "policy_testlib.h"

char t_tmpdir[] = "/tmp/mw-check-policy-XXXXXX";

void in_tmpdir(void)
{
	ck_assert_ptr_nonnull(mkdtemp(t_tmpdir));
	ck_assert_int_eq(chdir(t_tmpdir), 0);
}

void leave_tmpdir(void)
{
	DIR *d = opendir(t_tmpdir);
	struct dirent *de;

	if (d) { /* every file a test wrote, whatever its name */
		while ((de = readdir(d)))
			if (de->d_name[0] != '.')
				unlinkat(dirfd(d), de->d_name, 0);
		closedir(d);
	}
	if (chdir("/") == 0)
		rmdir(t_tmpdir);
	strcpy(t_tmpdir, "/tmp/mw-check-policy-XXXXXX"); /* for runs without fork */
}

void write_file(const char *name, const char *text)
{
	FILE *f = fopen(name, "w");

	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	fclose(f);
}

/* Loads text as p.yaml and compiles it with variables that have no value (policy check). */
int load(const char *text, struct diag *d, struct policy **out)
{
	struct policy *p = policy__new();
	struct vars *vs = vars__new();
	int err;

	write_file("p.yaml", text);
	err = policy__load_file(p, "p.yaml", d);
	if (policy__compile(p, vs, false, d) && !err) /* as policy check: report every error */
		err = -EINVAL;
	vars__free(vs);
	if (out)
		*out = p;
	else
		policy__free(p);
	return err;
}


void ev_open(struct evx *x, const char *path, const char *abs, uint64_t flags, int64_t ret)
{
	memset(x, 0, sizeof(*x));
	x->e = (Mcpt__Event)MCPT__EVENT__INIT;
	x->e.op = MCPT__OP__OP_OPENAT;
	x->e.ret = ret;
	x->e.path = (ProtobufCBinaryData){strlen(path), (uint8_t *)path};
	if (abs)
		x->e.abs_path = (ProtobufCBinaryData){strlen(abs), (uint8_t *)abs};
	x->args[0] = -100;
	x->args[1] = (int64_t)flags;
	x->e.args = x->args;
	x->e.n_args = 2;
	event_decode(&x->v, &x->e);
	x->s.ev = &x->v;
	x->s.exe = (struct ev_bytes){(const uint8_t *)"/usr/bin/node", 13};
	x->s.argv = (struct ev_bytes){(const uint8_t *)"node server.js", 14};
}

void ev_connect(struct evx *x, const uint8_t *sa, size_t n, int64_t ret)
{
	memset(x, 0, sizeof(*x));
	x->e = (Mcpt__Event)MCPT__EVENT__INIT;
	x->e.op = MCPT__OP__OP_CONNECT;
	x->e.ret = ret;
	x->e.data = (ProtobufCBinaryData){n, (uint8_t *)sa};
	event_decode(&x->v, &x->e);
	x->s.ev = &x->v;
}

/* Compiles cond (a YAML flow mapping) with home=/home/u, tmp=/tmp and --set extra=/opt. */
struct policy *compile_cond(const char *lists, const char *cond)
{
	char text[2048];
	struct policy *p = policy__new();
	struct vars *vs = vars__new();
	struct diag d = {0};
	Mcpt__Header h = MCPT__HEADER__INIT;
	Mcpt__Target t = MCPT__TARGET__INIT;
	char err[128];

	t.home = (ProtobufCBinaryData){7, (uint8_t *)"/home/u"};
	t.cwd = (ProtobufCBinaryData){5, (uint8_t *)"/work"};
	h.target = &t;
	ck_assert_int_eq(vars__set_arg(vs, "extra=/opt", err, sizeof(err)), 0);
	ck_assert_int_eq(vars__from_header(vs, &h), 0);
	snprintf(text, sizeof(text),
		 HDR "%s\nrules:\n- id: r\n  description: d\n  severity: high\n"
		     "  category: c\n  condition: %s\n",
		 lists, cond);
	write_file("p.yaml", text);
	ck_assert_int_eq(policy__load_file(p, "p.yaml", &d), 0);
	ck_assert_msg(policy__compile(p, vs, true, &d) == 0, "%s", diag_first(&d));
	diag_fini(&d);
	vars__free(vs);
	return p;
}

bool holds(struct policy *p, const struct evx *x)
{
	int exc;

	return policy_rule_match(p->rules[0], &x->s, 0, &exc);
}


struct policy *policy_from_text(const char *text)
{
	char path[] = "/tmp/mw-policy-XXXXXX";
	int fd = mkstemp(path);
	struct policy *p = policy__new();
	struct vars *vs = vars__new();
	struct diag d = {0};

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, text, strlen(text)), (int)strlen(text));
	close(fd);
	ck_assert_int_eq(policy__load_file(p, path, &d), 0);
	ck_assert_int_eq(policy__compile(p, vs, true, &d), 0);
	unlink(path);
	diag_fini(&d);
	vars__free(vs);
	return p;
}
