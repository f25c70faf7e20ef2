/*
 * keys.c - Ed25519 signing keys in static mode (TRACE-FORMAT.md 4.10).
 *
 * Secret file: "untrusted comment: ..." then base64("Ed" || "S1" || key_id[8] || seed[32] ||
 * chk[32]), chk = H("MCPT-v1 seckey" || "Ed" || key_id || seed). Only the seed is stored: the
 * public half is always derived, because libsodium signs with the public half it is given and a
 * corrupted one would leak the secret. Public file: minisign-compatible base64("Ed" || key_id ||
 * pk). KEY_ID(pk) = first 8 bytes of H("MCPT-v1 keyid" || "Ed" || pk).
 *
 * Secret bytes (file text, decoded blob, seed, secret key) live only in sodium_malloc memory and
 * are wiped before release; the signer's key is no-access except while signing. Every refusal
 * is one line naming the file; no message ever contains key material.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"

#define SEC_BLOB_LEN (2 + 2 + MCPT_KEY_ID_LEN + 32 + MCPT_HASH_LEN) /* 76 */
#define PUB_BLOB_LEN (2 + MCPT_KEY_ID_LEN + 32)			    /* 42 */
#define KEY_FILE_MAX 4096
#define COMMENT	     "untrusted comment: "

void mcpt_key_id(const uint8_t pk[32], uint8_t out[MCPT_KEY_ID_LEN])
{
	static const char ctx[] = "MCPT-v1 keyidEd";
	uint8_t h[MCPT_HASH_LEN];

	mcpt_hash2(h, ctx, sizeof(ctx) - 1, pk, 32);
	memcpy(out, h, MCPT_KEY_ID_LEN);
}

void mcpt_key_id_hex(const uint8_t id[MCPT_KEY_ID_LEN], char out[17])
{
	static const char hex[] = "0123456789abcdef";

	for (int i = 0; i < MCPT_KEY_ID_LEN; i++) { /* little-endian u64, most significant first */
		out[2 * i] = hex[id[MCPT_KEY_ID_LEN - 1 - i] >> 4];
		out[2 * i + 1] = hex[id[MCPT_KEY_ID_LEN - 1 - i] & 15];
	}
	out[16] = '\0';
}

void mcpt_seckey_checksum(const uint8_t id[MCPT_KEY_ID_LEN], const uint8_t seed[32],
			  uint8_t out[MCPT_HASH_LEN])
{
	static const char ctx[] = "MCPT-v1 seckeyEd";
	crypto_generichash_state st;

	crypto_generichash_init(&st, NULL, 0, MCPT_HASH_LEN);
	crypto_generichash_update(&st, (const uint8_t *)ctx, sizeof(ctx) - 1);
	crypto_generichash_update(&st, id, MCPT_KEY_ID_LEN);
	crypto_generichash_update(&st, seed, 32);
	crypto_generichash_final(&st, out, MCPT_HASH_LEN);
	sodium_memzero(&st, sizeof(st));
}

struct mcpt_signer *mcpt_signer_from_seed(const uint8_t seed[32])
{
	struct mcpt_signer *s;

	if (sodium_init() < 0) {
		errno = EIO;
		return NULL;
	}
	s = calloc(1, sizeof(*s));
	if (!s)
		return NULL;
	s->sk = sodium_malloc(crypto_sign_SECRETKEYBYTES);
	if (!s->sk)
		goto fail;
	if (crypto_sign_seed_keypair(s->pk, s->sk, seed) != 0)
		goto fail;
	mcpt_key_id(s->pk, s->key_id);
	if (sodium_mprotect_noaccess(s->sk) != 0)
		goto fail;
	return s;
fail:
	mcpt_signer_free(s);
	errno = EIO;
	return NULL;
}

void mcpt_signer_free(struct mcpt_signer *s)
{
	if (!s)
		return;
	if (s->sk)
		sodium_free(s->sk); /* wipes; works on no-access memory */
	free(s);
}

void mcpt_signer_key_id(const struct mcpt_signer *s, uint8_t out[MCPT_KEY_ID_LEN])
{
	memcpy(out, s->key_id, MCPT_KEY_ID_LEN);
}

void mcpt_signer_pubkey(const struct mcpt_signer *s, struct mcpt_pubkey *out)
{
	memcpy(out->key_id, s->key_id, MCPT_KEY_ID_LEN);
	memcpy(out->pk, s->pk, 32);
}

int mcpt_signer_sign(struct mcpt_signer *s, const uint8_t *m, size_t n,
		     uint8_t sig[MCPT_SEAL_SIG_LEN])
{
	int err = 0;

	if (sodium_mprotect_readonly(s->sk) != 0)
		return -EIO;
	/* the derived public half must still be the one the key id names (memory corruption
	 * of it would turn deterministic signatures into a key leak) */
	if (sodium_memcmp(s->sk + 32, s->pk, 32) != 0 ||
	    crypto_sign_detached(sig, NULL, m, n, s->sk) != 0)
		err = -EIO;
	if (sodium_mprotect_noaccess(s->sk) != 0)
		err = -EIO;
	return err;
}

/* Reads a whole key file into sodium_malloc memory (*out, NUL-terminated). Secret files must
 * be regular, not symlinks, owned by root or the euid, without group/other permission bits. */
static int read_key_file(const char *path, bool secret, char **out, size_t *len, char *err,
			 size_t errlen)
{
	int flags = O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK | (secret ? O_NOFOLLOW : 0);
	struct stat st;
	char *buf = NULL;
	ssize_t n = 0;
	int fd, rc;

	fd = open(path, flags);
	if (fd < 0) {
		rc = -errno;
		if (errno == ELOOP)
			mcpt_errf(err, errlen, "%s: is a symbolic link; refusing to follow it", path);
		else
			mcpt_errf(err, errlen, "%s: cannot open: %s", path, strerror(errno));
		return rc;
	}
	rc = -EINVAL;
	if (fstat(fd, &st) != 0) {
		rc = -errno;
		mcpt_errf(err, errlen, "%s: cannot stat: %s", path, strerror(errno));
		goto cleanup;
	}
	if (!S_ISREG(st.st_mode)) {
		mcpt_errf(err, errlen, "%s: not a regular file", path);
		goto cleanup;
	}
	if (secret && st.st_uid != 0 && st.st_uid != geteuid()) {
		rc = -EPERM;
		mcpt_errf(err, errlen, "%s: owned by uid %u, not by root or uid %u", path,
		     (unsigned)st.st_uid, (unsigned)geteuid());
		goto cleanup;
	}
	if (secret && (st.st_mode & 077)) {
		rc = -EPERM;
		mcpt_errf(err, errlen, "%s: mode %04o gives group/other access; chmod 600 it", path,
		     (unsigned)(st.st_mode & 07777));
		goto cleanup;
	}
	if (st.st_size <= 0 || st.st_size > KEY_FILE_MAX) {
		mcpt_errf(err, errlen, "%s: %lld bytes is not the size of a key file", path,
		     (long long)st.st_size);
		goto cleanup;
	}
	buf = sodium_malloc((size_t)st.st_size + 1);
	if (!buf) {
		rc = -ENOMEM;
		mcpt_errf(err, errlen, "%s: out of memory", path);
		goto cleanup;
	}
	while ((size_t)n < (size_t)st.st_size) {
		ssize_t r = read(fd, buf + n, (size_t)st.st_size - (size_t)n);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			rc = r < 0 ? -errno : -EIO;
			mcpt_errf(err, errlen, "%s: cannot read: %s", path,
			     r < 0 ? strerror(errno) : "file shrank while reading");
			goto cleanup;
		}
		n += r;
	}
	buf[n] = '\0';
	*out = buf;
	*len = (size_t)n;
	buf = NULL;
	rc = 0;
cleanup:
	if (buf)
		sodium_free(buf);
	close(fd);
	return rc;
}

/* Decodes "untrusted comment: ...\n<base64>\n" into exactly want bytes. */
static int decode_key_text(const char *path, const char *what, const char *text, size_t len,
			   uint8_t *bin, size_t want, char *err, size_t errlen)
{
	const char *nl, *b64, *end;
	size_t b64len, got = 0;

	nl = memchr(text, '\n', len);
	if (len < sizeof(COMMENT) - 1 || memcmp(text, COMMENT, sizeof(COMMENT) - 1) != 0 || !nl) {
		mcpt_errf(err, errlen,
		     "%s: malformed %s: the first line is not 'untrusted comment: ...'", path,
		     what);
		return -EINVAL;
	}
	b64 = nl + 1;
	b64len = len - (size_t)(b64 - text);
	if (b64len && b64[b64len - 1] == '\n')
		b64len--;
	if (b64len && b64[b64len - 1] == '\r')
		b64len--;
	if (sodium_base642bin(bin, want, b64, b64len, NULL, &got, &end,
			      sodium_base64_VARIANT_ORIGINAL) != 0 ||
	    end != b64 + b64len) {
		mcpt_errf(err, errlen, "%s: malformed %s: the second line is not %zu bytes of base64",
		     path, what, want);
		return -EINVAL;
	}
	if (got != want) {
		mcpt_errf(err, errlen, "%s: malformed %s: %zu bytes of key data, expected %zu", path,
		     what, got, want);
		return -EINVAL;
	}
	return 0;
}

/* Checks a decoded secret blob and builds the signer from it. */
static struct mcpt_signer *signer_from_blob(const char *path, const uint8_t *blob, char *err,
					    size_t errlen)
{
	const uint8_t *id = blob + 4, *seed = blob + 12, *chk = blob + 44;
	uint8_t want[MCPT_HASH_LEN];
	struct mcpt_signer *s;

	if (memcmp(blob, "EdS1", 4) != 0) {
		mcpt_errf(err, errlen, "%s: not an unencrypted mcpwitness secret key (wrong prefix)",
		     path);
		errno = EINVAL;
		return NULL;
	}
	mcpt_seckey_checksum(id, seed, want);
	if (sodium_memcmp(want, chk, MCPT_HASH_LEN) != 0) {
		sodium_memzero(want, sizeof(want));
		mcpt_errf(err, errlen, "%s: checksum mismatch: the key file is corrupted", path);
		errno = EINVAL;
		return NULL;
	}
	sodium_memzero(want, sizeof(want));
	s = mcpt_signer_from_seed(seed);
	if (!s) {
		mcpt_errf(err, errlen, "%s: cannot set up the key: %s", path, strerror(errno));
		return NULL;
	}
	if (memcmp(s->key_id, id, MCPT_KEY_ID_LEN) != 0) {
		mcpt_errf(err, errlen, "%s: the key id in the file does not match the key", path);
		mcpt_signer_free(s);
		errno = EINVAL;
		return NULL;
	}
	return s;
}

struct mcpt_signer *mcpt_signer_load(const char *path, char *err, size_t errlen)
{
	struct mcpt_signer *s = NULL;
	uint8_t *blob = NULL;
	char *text = NULL;
	size_t len = 0;
	int rc;

	if (sodium_init() < 0) {
		mcpt_errf(err, errlen, "%s: libsodium failed to initialise", path);
		errno = EIO;
		return NULL;
	}
	rc = read_key_file(path, true, &text, &len, err, errlen);
	if (rc)
		goto cleanup;
	rc = -ENOMEM;
	blob = sodium_malloc(SEC_BLOB_LEN);
	if (!blob) {
		mcpt_errf(err, errlen, "%s: out of memory", path);
		goto cleanup;
	}
	rc = decode_key_text(path, "secret key file", text, len, blob, SEC_BLOB_LEN, err, errlen);
	if (rc)
		goto cleanup;
	s = signer_from_blob(path, blob, err, errlen);
	rc = s ? 0 : -errno;
cleanup:
	if (blob)
		sodium_free(blob);
	if (text)
		sodium_free(text);
	if (rc)
		errno = -rc;
	return s;
}

int mcpt_pubkey_load(struct mcpt_pubkey *out, const char *path, char *err, size_t errlen)
{
	uint8_t blob[PUB_BLOB_LEN], id[MCPT_KEY_ID_LEN];
	char *text = NULL;
	size_t len = 0;
	int rc;

	if (sodium_init() < 0) {
		mcpt_errf(err, errlen, "%s: libsodium failed to initialise", path);
		return -EIO;
	}
	rc = read_key_file(path, false, &text, &len, err, errlen);
	if (rc)
		return rc;
	rc = decode_key_text(path, "public key file", text, len, blob, sizeof(blob), err, errlen);
	sodium_free(text);
	if (rc)
		return rc;
	if (memcmp(blob, "Ed", 2) != 0) {
		mcpt_errf(err, errlen, "%s: not an Ed25519 public key (wrong prefix)", path);
		return -EINVAL;
	}
	if (!crypto_core_ed25519_is_valid_point(blob + 10)) {
		mcpt_errf(err, errlen, "%s: not a valid Ed25519 public key", path);
		return -EINVAL;
	}
	mcpt_key_id(blob + 10, id);
	if (memcmp(id, blob + 2, MCPT_KEY_ID_LEN) != 0) {
		mcpt_errf(err, errlen, "%s: the key id does not match the key (not an mcpwitness key?)",
		     path);
		return -EINVAL;
	}
	memcpy(out->key_id, id, MCPT_KEY_ID_LEN);
	memcpy(out->pk, blob + 10, 32);
	return 0;
}
