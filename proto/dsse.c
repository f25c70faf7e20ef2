/*
 * dsse.c - the FINAL seal of a trace as a standard DSSE envelope (TRACE-FORMAT.md 4.12 item 1).
 *
 * A seal's signature is already Ed25519 over the DSSE v1 PAE of its statement, so the envelope
 * is a re-encoding, not a new signature: payloadType is MCPT_SEAL_PAYLOAD_TYPE, payload the
 * statement bytes, and the one signature the seal's, with the key id as minisign shows it. Any
 * DSSE implementation with Ed25519 verifies it; mcpt_dsse_check is ours, and callers compare
 * the statement it returns with the trace's FINAL seal to tie the two together.
 */
#include <errno.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

struct final_seal {
	struct mcpt_buf statement;
	uint8_t signature[MCPT_SEAL_SIG_LEN];
	uint8_t key_id[MCPT_KEY_ID_LEN];
	bool have;
	int err;
};

/* Keeps the FINAL seal once the verifier has checked it (not provisional). */
static int on_record(void *ctx, const struct mcpt_record *rec)
{
	struct final_seal *fs = ctx;
	Mcpt__SealStatement *st = NULL;
	Mcpt__Seal *seal;

	if (rec->type != MCPT_T_SEAL || rec->provisional)
		return 0;
	seal = mcpt__seal__unpack(NULL, rec->body_len, rec->body);
	if (seal)
		st = mcpt__seal_statement__unpack(NULL, seal->statement.len, seal->statement.data);
	if (st && (st->flags & MCPT_SEAL_FINAL) && seal->signature.len == MCPT_SEAL_SIG_LEN &&
	    seal->key_id.len == MCPT_KEY_ID_LEN) {
		fs->statement.len = 0;
		if (mcpt_buf_reserve(&fs->statement, seal->statement.len) == 0) {
			memcpy(fs->statement.p, seal->statement.data, seal->statement.len);
			fs->statement.len = seal->statement.len;
			memcpy(fs->signature, seal->signature.data, MCPT_SEAL_SIG_LEN);
			memcpy(fs->key_id, seal->key_id.data, MCPT_KEY_ID_LEN);
			fs->have = true;
		} else {
			fs->err = -ENOMEM;
		}
	}
	if (st)
		mcpt__seal_statement__free_unpacked(st, NULL);
	if (seal)
		mcpt__seal__free_unpacked(seal, NULL);
	return fs->err;
}

static json_t *b64(const uint8_t *p, size_t n)
{
	size_t len = sodium_base64_ENCODED_LEN(n, sodium_base64_VARIANT_ORIGINAL);
	char *s = malloc(len);
	json_t *j;

	if (!s)
		return NULL;
	sodium_bin2base64(s, len, p, n, sodium_base64_VARIANT_ORIGINAL);
	j = json_string(s);
	free(s);
	return j;
}

static char *envelope(const struct final_seal *fs)
{
	char kid[17], *out;
	json_t *o;

	mcpt_key_id_hex(fs->key_id, kid);
	o = json_pack("{s:s, s:o, s:[{s:s, s:o}]}", "payloadType", MCPT_SEAL_PAYLOAD_TYPE,
		      "payload", b64(fs->statement.p, fs->statement.len), "signatures", "keyid",
		      kid, "sig", b64(fs->signature, MCPT_SEAL_SIG_LEN));
	if (!o)
		return NULL;
	out = json_dumps(o, JSON_COMPACT);
	json_decref(o);
	return out;
}

int mcpt_dsse_export(int fd, const struct mcpt_verify_opts *opts, struct mcpt_report *rep,
		     char **json)
{
	struct final_seal fs = {0};
	int err;

	if (!json || !rep)
		return -EINVAL;
	*json = NULL;
	if (!opts || !opts->key) {
		memset(rep, 0, sizeof(*rep));
		return -EINVAL;
	}
	err = mcpt_verify(fd, opts, on_record, &fs, rep);
	if (!err && (rep->verdict != MCPT_VALID_COMPLETE || !fs.have))
		err = -EBADMSG;
	if (!err) {
		*json = envelope(&fs);
		if (!*json)
			err = -ENOMEM;
	}
	mcpt_buf_free(&fs.statement);
	return err;
}

/* ---- checking an envelope ---- */

/* Standard or URL-safe base64, padded or not (DSSE implementations differ). */
static int unb64(const char *s, uint8_t **out, size_t *len)
{
	static const int variants[] = {
		sodium_base64_VARIANT_ORIGINAL, sodium_base64_VARIANT_ORIGINAL_NO_PADDING,
		sodium_base64_VARIANT_URLSAFE, sodium_base64_VARIANT_URLSAFE_NO_PADDING};
	size_t n = strlen(s), cap = n / 4 * 3 + 3;

	*out = malloc(cap);
	if (!*out)
		return -ENOMEM;
	for (size_t i = 0; i < sizeof(variants) / sizeof(variants[0]); i++)
		if (sodium_base642bin(*out, cap, s, n, NULL, len, NULL, variants[i]) == 0)
			return 0;
	free(*out);
	*out = NULL;
	return -EBADMSG;
}

static bool sig_verifies(json_t *sig, const struct mcpt_pubkey *key, const struct mcpt_buf *pae,
			 const char *kid, uint8_t out[MCPT_SEAL_SIG_LEN])
{
	const char *id = json_string_value(json_object_get(sig, "keyid"));
	const char *s = json_string_value(json_object_get(sig, "sig"));
	uint8_t *raw = NULL;
	size_t n = 0;
	bool ok;

	if (!s || (id && strcmp(id, kid) != 0) || unb64(s, &raw, &n))
		return false;
	ok = n == MCPT_SEAL_SIG_LEN &&
	     crypto_sign_verify_detached(raw, pae->p, pae->len, key->pk) == 0;
	if (ok)
		memcpy(out, raw, MCPT_SEAL_SIG_LEN);
	free(raw);
	return ok;
}

static int statement(struct mcpt_dsse_info *info, const struct mcpt_pubkey *key, char *err,
		     size_t errlen)
{
	struct mcpt_buf scratch = {0};
	Mcpt__SealStatement *st;
	int rc = -EBADMSG;

	st = mcpt__seal_statement__unpack(NULL, info->statement_len, info->statement);
	if (!st)
		mcpt_errf(err, errlen, "the payload is not a seal statement");
	else if (!mcpt_canonical(&st->base, info->statement, info->statement_len, &scratch) ||
		 st->trace_id.len != MCPT_TRACE_ID_LEN)
		mcpt_errf(err, errlen, "the seal statement is not canonical");
	else if (st->key_id.len != MCPT_KEY_ID_LEN ||
		 memcmp(st->key_id.data, key->key_id, MCPT_KEY_ID_LEN))
		mcpt_errf(err, errlen, "the statement names another key");
	else if (!(st->flags & MCPT_SEAL_FINAL))
		mcpt_errf(err, errlen, "the seal is not a FINAL seal");
	else
		rc = 0;
	if (!rc) {
		memcpy(info->trace_id, st->trace_id.data, MCPT_TRACE_ID_LEN);
		info->seal_index = st->seal_index;
		info->seal_record = st->seal_record;
		info->flags = st->flags;
		info->end_reason = st->end_reason;
	}
	if (st)
		mcpt__seal_statement__free_unpacked(st, NULL);
	mcpt_buf_free(&scratch);
	return rc;
}

static int check(json_t *o, const struct mcpt_pubkey *key, struct mcpt_dsse_info *info, char *err,
		 size_t errlen)
{
	const char *type = json_string_value(json_object_get(o, "payloadType"));
	const char *payload = json_string_value(json_object_get(o, "payload"));
	json_t *sigs = json_object_get(o, "signatures"), *sig;
	struct mcpt_buf pae = {0};
	char kid[17];
	size_t i;
	int rc;

	if (!type || strcmp(type, MCPT_SEAL_PAYLOAD_TYPE) != 0 || !payload ||
	    !json_is_array(sigs)) {
		mcpt_errf(err, errlen, "not a DSSE envelope of an mcpwitness seal (payloadType %s)",
			  type ? "differs" : "missing");
		return -EBADMSG;
	}
	if (unb64(payload, &info->statement, &info->statement_len)) {
		mcpt_errf(err, errlen, "the payload is not base64");
		return -EBADMSG;
	}
	if (mcpt_pae(&pae, info->statement, info->statement_len))
		return -ENOMEM;
	mcpt_key_id_hex(key->key_id, kid);
	rc = -EKEYREJECTED;
	json_array_foreach(sigs, i, sig)
	{
		if (rc && sig_verifies(sig, key, &pae, kid, info->signature))
			rc = 0;
	}
	mcpt_buf_free(&pae);
	if (rc) {
		mcpt_errf(err, errlen, "no signature in the envelope verifies with key %s", kid);
		return rc;
	}
	return statement(info, key, err, errlen);
}

int mcpt_dsse_check(const char *json, size_t len, const struct mcpt_pubkey *key,
		    struct mcpt_dsse_info *info, char *err, size_t errlen)
{
	json_error_t jerr;
	json_t *o;
	int rc;

	if (!json || !key || !info)
		return -EINVAL;
	memset(info, 0, sizeof(*info));
	o = json_loadb(json, len, JSON_REJECT_DUPLICATES, &jerr);
	if (!json_is_object(o)) {
		char esc[200];

		/* jansson quotes the input near the error: escaped like any text from a file */
		mcpt_errf(err, errlen, "not a JSON object (line %d: %s)", jerr.line,
			  o ? "not an object"
			    : mcpt_escape(esc, sizeof(esc), jerr.text, strlen(jerr.text)));
		json_decref(o);
		return -EBADMSG;
	}
	rc = check(o, key, info, err, errlen);
	json_decref(o);
	if (rc)
		mcpt_dsse_info__fini(info);
	return rc;
}

void mcpt_dsse_info__fini(struct mcpt_dsse_info *info)
{
	if (!info)
		return;
	free(info->statement);
	info->statement = NULL;
	info->statement_len = 0;
}
