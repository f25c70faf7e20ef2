/*
 * check_hookshape.c - the loader's check of a tp_btf hook's arguments (collector/hookshape.c)
 * against kernel BTF built here: io_uring_complete with the cqe pointer (loaded) and with the
 * older integer arguments (refused), a typedef that is not a function pointer, a missing hook,
 * and a hook no shape is listed for.
 */
#include <check.h>

#include "hookshape.h"

/* BTF with typedef btf_trace_io_uring_complete: void (*)(void *, struct io_ring_ctx *, void *,
 * ARG2), ARG2 a pointer to struct arg2_struct, or (arg2_struct NULL) a u64. */
static struct btf *kernel_with(const char *arg2_struct)
{
	struct btf *b = btf__new_empty();
	int u64, vptr, ctx, ctxp, arg2, proto, fptr;

	ck_assert_ptr_nonnull(b);
	u64 = btf__add_int(b, "unsigned long long", 8, 0);
	vptr = btf__add_ptr(b, 0);
	ctx = btf__add_struct(b, "io_ring_ctx", 8);
	ck_assert_int_eq(btf__add_field(b, "flags", u64, 0, 0), 0);
	ctxp = btf__add_ptr(b, ctx);
	if (arg2_struct) {
		arg2 = btf__add_struct(b, arg2_struct, 8);
		ck_assert_int_eq(btf__add_field(b, "user_data", u64, 0, 0), 0);
		arg2 = btf__add_ptr(b, arg2);
	} else {
		arg2 = u64;
	}
	proto = btf__add_func_proto(b, 0);
	ck_assert_int_eq(btf__add_func_param(b, "__data", vptr), 0);
	ck_assert_int_eq(btf__add_func_param(b, "ctx", ctxp), 0);
	ck_assert_int_eq(btf__add_func_param(b, "req", vptr), 0);
	ck_assert_int_eq(btf__add_func_param(b, "cqe", arg2), 0);
	fptr = btf__add_ptr(b, proto);
	ck_assert_int_gt(btf__add_typedef(b, "btf_trace_io_uring_complete", fptr), 0);
	/* a hook whose typedef is not a pointer to a function */
	ck_assert_int_gt(btf__add_typedef(b, "btf_trace_sched_process_exec", u64), 0);
	return b;
}

START_TEST(cqe_pointer_is_the_shape)
{
	struct btf *b = kernel_with("io_uring_cqe");

	ck_assert(hook_has_shape("io_uring_complete", b));
	btf__free(b);
}
END_TEST

START_TEST(other_arguments_are_refused)
{
	struct btf *b = kernel_with(NULL); /* user_data where the cqe pointer would be */

	ck_assert(!hook_has_shape("io_uring_complete", b));
	btf__free(b);
	b = kernel_with("io_uring_sqe"); /* a pointer, to another struct */
	ck_assert(!hook_has_shape("io_uring_complete", b));
	btf__free(b);
	ck_assert(!hook_has_shape("io_uring_complete", NULL));
	ck_assert_int_lt(hook_typedef("io_uring_complete", NULL), 0);
}
END_TEST

START_TEST(hooks_without_a_listed_shape_pass)
{
	struct btf *b = kernel_with("io_uring_cqe");
	struct btf *empty = btf__new_empty();

	/* not listed: their arguments never changed, whatever the typedef looks like */
	ck_assert(hook_has_shape("sched_process_exec", b));
	ck_assert(hook_has_shape("io_uring_submit_req", empty));
	/* listed but absent from this kernel */
	ck_assert(!hook_has_shape("io_uring_complete", empty));
	/* the hook's typedef, found where it exists only */
	ck_assert_int_gt(hook_typedef("io_uring_complete", b), 0);
	ck_assert_int_lt(hook_typedef("io_uring_complete", empty), 0);
	btf__free(empty);
	btf__free(b);
}
END_TEST

Suite *hookshape_suite(void);

Suite *hookshape_suite(void)
{
	Suite *s = suite_create("hookshape");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, cqe_pointer_is_the_shape);
	tcase_add_test(tc, other_arguments_are_refused);
	tcase_add_test(tc, hooks_without_a_listed_shape_pass);
	suite_add_tcase(s, tc);
	return s;
}
