/*
 * keygen.c - creates a static-mode key pair (TRACE-FORMAT.md 4.10): DIR/signing.key (seed only,
 * 0600, created with O_EXCL|O_NOFOLLOW so nothing is ever overwritten or followed) and
 * DIR/signing.pub (0644, byte-compatible with minisign/signify public keys). DIR is created
 * 0700 when missing. Both files are fsynced, then the directory. Secret bytes are built in
 * sodium_malloc memory and wiped.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"

#define SEC_BLOB_LEN 76
#define SEC_TEXT_MAX 256

static int write_new_file(const char *path, mode_t mode, const char *text, char *err, size_t errlen)
{
	int fd, rc;

	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
	if (fd < 0) {
		rc = -errno;
		if (errno == EEXIST)
			mcpt_errf(err, errlen, "%s: already exists; refusing to overwrite it", path);
		else
			mcpt_errf(err, errlen, "%s: cannot create: %s", path, strerror(errno));
		return rc;
	}
	rc = fchmod(fd, mode) ? -errno : 0; /* exact mode whatever the umask */
	if (!rc)
		rc = mcpt_write_all(fd, text, strlen(text));
	if (!rc && fsync(fd) != 0)
		rc = -errno;
	if (close(fd) != 0 && !rc)
		rc = -errno;
	if (rc) {
		mcpt_errf(err, errlen, "%s: cannot write: %s", path, strerror(-rc));
		if (unlink(path) != 0)
			rc = rc ? rc : -errno;
	}
	return rc;
}

/* "untrusted comment: ...\nbase64(blob)\n" into out (cap bytes). */
static int key_text(char *out, size_t cap, const char *what, const char *hex, const uint8_t *blob,
		    size_t bloblen)
{
	int n = snprintf(out, cap, "untrusted comment: mcpwitness trace %s key %s\n", what, hex);

	if (n < 0 ||
	    (size_t)n + sodium_base64_ENCODED_LEN(bloblen, sodium_base64_VARIANT_ORIGINAL) + 1 >
		    cap)
		return -EOVERFLOW;
	sodium_bin2base64(out + n, cap - (size_t)n, blob, bloblen, sodium_base64_VARIANT_ORIGINAL);
	strcat(out, "\n");
	return 0;
}

/* Secret blob "EdS1" || id || seed || chk, then both file texts. */
static int build_texts(const uint8_t *seed, const struct mcpt_signer *s, uint8_t *blob,
		       char *sec_text, char *pub_text, size_t pub_cap, char hex[17])
{
	uint8_t pub[2 + MCPT_KEY_ID_LEN + 32];
	int rc;

	mcpt_key_id_hex(s->key_id, hex);
	memcpy(blob, "EdS1", 4);
	memcpy(blob + 4, s->key_id, MCPT_KEY_ID_LEN);
	memcpy(blob + 12, seed, 32);
	mcpt_seckey_checksum(s->key_id, seed, blob + 44);
	rc = key_text(sec_text, SEC_TEXT_MAX, "secret", hex, blob, SEC_BLOB_LEN);
	if (rc)
		return rc;
	memcpy(pub, "Ed", 2);
	memcpy(pub + 2, s->key_id, MCPT_KEY_ID_LEN);
	memcpy(pub + 10, s->pk, 32);
	return key_text(pub_text, pub_cap, "public", hex, pub, sizeof(pub));
}

static int make_dir(const char *dir, char *err, size_t errlen)
{
	struct stat st;

	if (mkdir(dir, 0700) == 0 || errno == EEXIST) {
		if (stat(dir, &st) == 0 && S_ISDIR(st.st_mode))
			return 0;
		mcpt_errf(err, errlen, "%s: not a directory", dir);
		return -ENOTDIR;
	}
	mcpt_errf(err, errlen, "%s: cannot create directory: %s", dir, strerror(errno));
	return -errno;
}

static int sync_dir(const char *dir)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	int rc = 0;

	if (fd < 0)
		return -errno;
	if (fsync(fd) != 0)
		rc = -errno;
	close(fd);
	return rc;
}

int mcpt_key_generate(const char *dir, char keyid_hex[17], char *err, size_t errlen)
{
	char sec_path[PATH_MAX], pub_path[PATH_MAX], pub_text[SEC_TEXT_MAX];
	char *sec_text = NULL;
	uint8_t *seed = NULL, *blob = NULL;
	struct mcpt_signer *s = NULL;
	int rc;

	if (sodium_init() < 0) {
		mcpt_errf(err, errlen, "%s: libsodium failed to initialise", dir);
		return -EIO;
	}
	if ((size_t)snprintf(sec_path, sizeof(sec_path), "%s/signing.key", dir) >=
		    sizeof(sec_path) ||
	    (size_t)snprintf(pub_path, sizeof(pub_path), "%s/signing.pub", dir) >=
		    sizeof(pub_path)) {
		mcpt_errf(err, errlen, "%s: path too long", dir);
		return -ENAMETOOLONG;
	}
	rc = make_dir(dir, err, errlen);
	if (rc)
		return rc;
	rc = -ENOMEM;
	seed = sodium_malloc(32);
	blob = sodium_malloc(SEC_BLOB_LEN);
	sec_text = sodium_malloc(SEC_TEXT_MAX);
	if (!seed || !blob || !sec_text) {
		mcpt_errf(err, errlen, "%s: out of memory", dir);
		goto cleanup;
	}
	randombytes_buf(seed, 32);
	s = mcpt_signer_from_seed(seed);
	if (!s) {
		rc = -errno;
		mcpt_errf(err, errlen, "%s: cannot derive the key pair: %s", dir, strerror(errno));
		goto cleanup;
	}
	rc = build_texts(seed, s, blob, sec_text, pub_text, sizeof(pub_text), keyid_hex);
	if (rc) {
		mcpt_errf(err, errlen, "%s: cannot encode the key files", dir);
		goto cleanup;
	}
	rc = write_new_file(sec_path, 0600, sec_text, err, errlen);
	if (rc)
		goto cleanup;
	rc = write_new_file(pub_path, 0644, pub_text, err, errlen);
	if (rc) {
		if (unlink(sec_path) != 0)
			mcpt_errf(err, errlen, "%s: left behind after a failure: remove it", sec_path);
		goto cleanup;
	}
	rc = sync_dir(dir);
	if (rc)
		mcpt_errf(err, errlen, "%s: cannot sync the directory: %s", dir, strerror(-rc));
cleanup:
	mcpt_signer_free(s);
	if (sec_text)
		sodium_free(sec_text);
	if (blob)
		sodium_free(blob);
	if (seed)
		sodium_free(seed);
	return rc;
}
