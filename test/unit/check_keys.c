/*
 * check_keys.c - static-mode key files (TRACE-FORMAT.md 4.10): generation (modes, format,
 * minisign-compatible public file, no overwrite), loading and signing, and each refusal of a
 * secret key file (group/other bits, symlink, not a regular file, foreign owner, bad base64,
 * wrong length, wrong prefix, checksum error, key id mismatch) and of a public key file, each a
 * single line naming the file and never containing key material; a public key of another pair
 * gives WRONG_KEY on a trace.
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "trace_testlib.h"

Suite *keys_suite(void);

static char dir[64];
static char sec[128], pub[128];
static char orig_line[128]; /* the secret file's key line as generated */
static uint8_t orig_seed[32];

static size_t slurp(const char *path, char *buf, size_t cap);

static void setup(void)
{
	char hex[17], err[256];

	snprintf(dir, sizeof(dir), "/tmp/mcpt-keys-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(sec, sizeof(sec), "%s/k/signing.key", dir);
	snprintf(pub, sizeof(pub), "%s/k/signing.pub", dir);
	snprintf(err, sizeof(err), "%s/k", dir);
	ck_assert_int_eq(mcpt_key_generate(err, hex, err, sizeof(err)), 0);
	{
		char text[512];
		uint8_t blob[76];
		size_t len = 0;

		slurp(sec, text, sizeof(text));
		snprintf(orig_line, sizeof(orig_line), "%s", strchr(text, '\n') + 1);
		orig_line[strcspn(orig_line, "\n")] = '\0';
		ck_assert_int_eq(sodium_base642bin(blob, sizeof(blob), orig_line, strlen(orig_line),
						   NULL, &len, NULL,
						   sodium_base64_VARIANT_ORIGINAL),
				 0);
		memcpy(orig_seed, blob + 12, 32);
		sodium_memzero(blob, sizeof(blob));
	}
}

static void teardown(void)
{
	char cmd[160];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	ck_assert_int_eq(system(cmd), 0);
}

static size_t slurp(const char *path, char *buf, size_t cap)
{
	FILE *f = fopen(path, "rb");
	size_t n;

	ck_assert_ptr_nonnull(f);
	n = fread(buf, 1, cap - 1, f);
	buf[n] = '\0';
	fclose(f);
	return n;
}

static void spit(const char *path, const char *text, mode_t mode)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW, mode);

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	ck_assert_int_eq(fchmod(fd, mode), 0);
	close(fd);
}

/* The refusal is one line, names the file, and shows no piece of the secret: no 12-character
 * run of the original key line, no hex of the seed. */
static void refused(const char *path, const char *needle)
{
	char err[256] = "", run[13], seed_hex[17];

	errno = 0;
	ck_assert_ptr_null(mcpt_signer_load(path, err, sizeof(err)));
	ck_assert_int_ne(errno, 0);
	ck_assert_msg(strstr(err, needle), "\"%s\" not in \"%s\"", needle, err);
	ck_assert_ptr_nonnull(strstr(err, path));
	ck_assert_ptr_null(strchr(err, '\n'));
	for (size_t i = 0; i + 12 <= strlen(orig_line); i++) {
		memcpy(run, orig_line + i, 12);
		run[12] = '\0';
		ck_assert_ptr_null(strstr(err, run));
	}
	sodium_bin2hex(seed_hex, sizeof(seed_hex), orig_seed, 8);
	ck_assert_ptr_null(strstr(err, seed_hex));
}

START_TEST(test_generate_and_load)
{
	char text[512], err[256], hex[17];
	struct mcpt_signer *s;
	struct mcpt_pubkey pk;
	uint8_t blob[64], id[8], sig[64];
	size_t len;
	struct stat st;

	ck_assert_int_eq(stat(sec, &st), 0);
	ck_assert_int_eq(st.st_mode & 07777, 0600);
	ck_assert_int_eq(stat(pub, &st), 0);
	ck_assert_int_eq(st.st_mode & 07777, 0644);
	slurp(pub, text, sizeof(text));
	ck_assert_int_eq(strncmp(text, "untrusted comment: mcpwitness trace public key ", 47), 0);
	ck_assert_int_eq(sodium_base642bin(blob, sizeof(blob), strchr(text, '\n') + 1,
					   strlen(strchr(text, '\n') + 1) - 1, NULL, &len, NULL,
					   sodium_base64_VARIANT_ORIGINAL),
			 0);
	ck_assert_uint_eq(len, 42); /* minisign: "Ed" || keynum[8] || pk[32] */
	ck_assert_mem_eq(blob, "Ed", 2);
	s = mcpt_signer_load(sec, err, sizeof(err));
	ck_assert_msg(s != NULL, "%s", err);
	ck_assert_int_eq(mcpt_pubkey_load(&pk, pub, err, sizeof(err)), 0);
	mcpt_signer_key_id(s, id);
	ck_assert_mem_eq(id, pk.key_id, 8);
	ck_assert_mem_eq(id, blob + 2, 8);
	mcpt_key_id(pk.pk, id);
	ck_assert_mem_eq(id, pk.key_id, 8);
	mcpt_key_id_hex(id, hex);
	ck_assert_ptr_nonnull(strstr(text, hex));		  /* the comment names it */
	ck_assert_int_eq(hex[0], "0123456789abcdef"[id[7] >> 4]); /* little-endian u64 */
	ck_assert_int_eq(mcpt_signer_sign(s, (const uint8_t *)"m", 1, sig), 0);
	ck_assert_int_eq(crypto_sign_verify_detached(sig, (const uint8_t *)"m", 1, pk.pk), 0);
	ck_assert_int_eq(mcpt_signer_sign(s, (const uint8_t *)"m", 1, sig), 0); /* twice */
	mcpt_signer_free(s);
	mcpt_signer_free(NULL);
}
END_TEST

START_TEST(test_no_overwrite)
{
	char err[256], hex[17], k[96];

	snprintf(k, sizeof(k), "%s/k", dir);
	ck_assert_int_eq(mcpt_key_generate(k, hex, err, sizeof(err)), -EEXIST);
	ck_assert_ptr_nonnull(strstr(err, "refusing to overwrite"));
	ck_assert_int_eq(unlink(sec), 0); /* the public file alone still blocks, and no secret */
	ck_assert_int_eq(mcpt_key_generate(k, hex, err, sizeof(err)), -EEXIST);
	ck_assert_int_eq(access(sec, F_OK), -1);
}
END_TEST

START_TEST(test_group_other_bits)
{
	ck_assert_int_eq(chmod(sec, _i ? 0604 : 0640), 0);
	refused(sec, "group/other");
}
END_TEST

START_TEST(test_symlink)
{
	char link[160];

	snprintf(link, sizeof(link), "%s/link.key", dir);
	ck_assert_int_eq(symlink(sec, link), 0);
	refused(link, "symbolic link");
}
END_TEST

START_TEST(test_not_regular)
{
	char fifo[160];

	snprintf(fifo, sizeof(fifo), "%s/fifo.key", dir);
	ck_assert_int_eq(mkfifo(fifo, 0600), 0);
	refused(fifo, "not a regular file");
	snprintf(fifo, sizeof(fifo), "%s/k", dir);
	refused(fifo, "not a regular file");
}
END_TEST

START_TEST(test_foreign_owner)
{
	if (geteuid() != 0) {
		fprintf(stderr, "SKIP: test_foreign_owner needs root to chown\n");
		return;
	}
	ck_assert_int_eq(chown(sec, 12345, 12345), 0);
	refused(sec, "owned by uid 12345");
}
END_TEST

/* Rewrites the secret file's key line from a blob. */
static void rewrite_blob(const uint8_t *blob, size_t n)
{
	char text[512], line[256];

	sodium_bin2base64(line, sizeof(line), blob, n, sodium_base64_VARIANT_ORIGINAL);
	snprintf(text, sizeof(text), "untrusted comment: test\n%s\n", line);
	spit(sec, text, 0600);
}

static size_t read_blob(uint8_t *blob, size_t cap)
{
	char text[512];
	size_t len = 0;

	slurp(sec, text, sizeof(text));
	ck_assert_int_eq(sodium_base642bin(blob, cap, strchr(text, '\n') + 1,
					   strlen(strchr(text, '\n') + 1) - 1, NULL, &len, NULL,
					   sodium_base64_VARIANT_ORIGINAL),
			 0);
	return len;
}

START_TEST(test_corrupted)
{
	uint8_t blob[128], id[8], seed[32];

	ck_assert_uint_eq(read_blob(blob, sizeof(blob)), 76);
	switch (_i) {
	case 0: /* a seed bit flipped: the checksum catches it */
		blob[20] ^= 1;
		rewrite_blob(blob, 76);
		refused(sec, "checksum mismatch");
		break;
	case 1: /* a key id that is not the key's, with a checksum made to match */
		memcpy(id, blob + 4, 8);
		id[0] ^= 1;
		memcpy(seed, blob + 12, 32);
		memcpy(blob + 4, id, 8);
		mcpt_seckey_checksum(id, seed, blob + 44);
		rewrite_blob(blob, 76);
		refused(sec, "does not match the key");
		break;
	case 2:
		rewrite_blob(blob, 75);
		refused(sec, "75 bytes of key data, expected 76");
		break;
	case 3:
		blob[3] = 'c'; /* "EdSc": a minisign encrypted key, say */
		rewrite_blob(blob, 76);
		refused(sec, "wrong prefix");
		break;
	case 4:
		spit(sec, "untrusted comment: x\n!!!!not base64!!!!\n", 0600);
		refused(sec, "base64");
		break;
	case 5:
		spit(sec, "no comment line\n", 0600);
		refused(sec, "untrusted comment");
		break;
	default:
		spit(sec, "", 0600);
		refused(sec, "size of a key file");
	}
}
END_TEST

static void pub_refused(const char *text, const char *needle)
{
	char path[160], err[256];
	struct mcpt_pubkey pk;

	snprintf(path, sizeof(path), "%s/bad.pub", dir);
	spit(path, text, 0644);
	ck_assert_int_ne(mcpt_pubkey_load(&pk, path, err, sizeof(err)), 0);
	ck_assert_msg(strstr(err, needle), "\"%s\" not in \"%s\"", needle, err);
	ck_assert_ptr_nonnull(strstr(err, path));
	ck_assert_ptr_null(strchr(err, '\n'));
}

START_TEST(test_bad_pubkey)
{
	char text[512], line[128], err[256];
	uint8_t blob[42];
	struct mcpt_pubkey pk;
	size_t len;

	slurp(pub, text, sizeof(text));
	ck_assert_int_eq(sodium_base642bin(blob, sizeof(blob), strchr(text, '\n') + 1,
					   strlen(strchr(text, '\n') + 1) - 1, NULL, &len, NULL,
					   sodium_base64_VARIANT_ORIGINAL),
			 0);
	blob[2] ^= 1; /* key id */
	sodium_bin2base64(line, sizeof(line), blob, 42, sodium_base64_VARIANT_ORIGINAL);
	snprintf(text, sizeof(text), "untrusted comment: x\n%s\n", line);
	pub_refused(text, "does not match the key");
	blob[2] ^= 1;
	blob[0] = 'X';
	sodium_bin2base64(line, sizeof(line), blob, 42, sodium_base64_VARIANT_ORIGINAL);
	snprintf(text, sizeof(text), "untrusted comment: x\n%s\n", line);
	pub_refused(text, "wrong prefix");
	blob[0] = 'E';
	memset(blob + 10, 0, 32);
	blob[10] = 2; /* not on the curve */
	sodium_bin2base64(line, sizeof(line), blob, 42, sodium_base64_VARIANT_ORIGINAL);
	snprintf(text, sizeof(text), "untrusted comment: x\n%s\n", line);
	pub_refused(text, "not a valid Ed25519");
	pub_refused("untrusted comment: x\nRWQ=\n", "2 bytes of key data");
	pub_refused("hello\n", "untrusted comment");
	ck_assert_int_eq(mcpt_pubkey_load(&pk, "/nonexistent/x.pub", err, sizeof(err)), -ENOENT);
	ck_assert_ptr_nonnull(strstr(err, "/nonexistent/x.pub: cannot open"));
}
END_TEST

/* The public key of another pair: verify says WRONG_KEY and prints both ids. */
START_TEST(test_other_pair_is_wrong_key)
{
	char err[256], hex[17], k2[96], pub2[128], h1[17], h2[17];
	struct mcpt_signer *s = mcpt_signer_load(sec, err, sizeof(err));
	struct mcpt_verify_opts vo = {0};
	struct mcpt_pubkey other;
	struct mcpt_report rep;
	struct tl_clock clk;
	Mcpt__Header h;
	Mcpt__Host host;
	Mcpt__Kernel k;
	Mcpt__ClockSample cs;
	struct mcpt_writer_opts wo = {.clock = &clk.clock};
	struct mcpt_writer *w;
	int fd = memfd_create("t", 0);

	ck_assert_ptr_nonnull(s);
	snprintf(k2, sizeof(k2), "%s/k2", dir);
	ck_assert_int_eq(mcpt_key_generate(k2, hex, err, sizeof(err)), 0);
	snprintf(pub2, sizeof(pub2), "%s/signing.pub", k2);
	ck_assert_int_eq(mcpt_pubkey_load(&other, pub2, err, sizeof(err)), 0);
	tl_clock_init(&clk, 1);
	tl_header(&h, &host, &k, &cs);
	w = mcpt_writer__new(fd, &h, s, &wo);
	ck_assert_ptr_nonnull(w);
	ck_assert_int_eq(mcpt_writer__finish(w, MCPT__END_REASON__END_CLEAN), 0);
	mcpt_writer__free(w);
	ck_assert_int_eq(lseek(fd, 0, SEEK_SET), 0);
	vo.key = &other;
	ck_assert_int_eq(mcpt_verify(fd, &vo, NULL, NULL, &rep), 0);
	ck_assert_int_eq(rep.verdict, MCPT_WRONG_KEY);
	mcpt_key_id_hex(s->key_id, h1);
	mcpt_key_id_hex(other.key_id, h2);
	ck_assert_str_eq(h2, hex);
	ck_assert_ptr_nonnull(strstr(rep.message, h1));
	ck_assert_ptr_nonnull(strstr(rep.message, h2));
	mcpt_report__fini(&rep);
	mcpt_signer_free(s);
	close(fd);
}
END_TEST

Suite *keys_suite(void)
{
	Suite *s = suite_create("keys");
	TCase *g = tcase_create("core"), *r = tcase_create("refusals");

	tcase_add_checked_fixture(g, setup, teardown);
	tcase_add_checked_fixture(r, setup, teardown);
	tcase_add_test(g, test_generate_and_load);
	tcase_add_test(g, test_no_overwrite);
	tcase_add_test(g, test_other_pair_is_wrong_key);
	tcase_add_loop_test(r, test_group_other_bits, 0, 2);
	tcase_add_test(r, test_symlink);
	tcase_add_test(r, test_not_regular);
	tcase_add_test(r, test_foreign_owner);
	tcase_add_loop_test(r, test_corrupted, 0, 7);
	tcase_add_test(r, test_bad_pubkey);
	suite_add_tcase(s, g);
	suite_add_tcase(s, r);
	return s;
}
