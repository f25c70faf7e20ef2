/*
 * encode.c - struct mw_event -> Mcpt__Event (see encode.h).
 */
#include <errno.h>
#include <string.h>
#include <sys/sysmacros.h>

#include "encode.h"

/* Cuts an exec argv (NUL-separated) after MW_ARGV_ENTRIES entries. */
static void cap_argv(ProtobufCBinaryData *argv, uint32_t *flags)
{
	size_t i, entries = 0;

	for (i = 0; i < argv->len; i++) {
		if (argv->data[i] != 0)
			continue;
		if (++entries == MW_ARGV_ENTRIES && i + 1 < argv->len) {
			argv->len = i + 1;
			*flags |= MW_F_ARGV_ENTRIES;
			return;
		}
	}
}

/* The kernel keeps dev_t as major << 20 | minor; stat() and everything else in the trace use
 * the userspace encoding. */
uint64_t encode_kdev(uint64_t kdev)
{
	return kdev ? makedev((unsigned int)(kdev >> 20), (unsigned int)(kdev & 0xfffff)) : 0;
}

uint64_t encode_to_kdev(uint64_t dev)
{
	return (uint64_t)major(dev) << 20 | minor(dev);
}

int encode_event(const struct mw_event *ev, size_t size, struct encoded_event *out)
{
	ProtobufCBinaryData slot[MW_SLOTS];
	size_t off = MW_EVENT_HDR_SIZE, n_args = 4;
	int i;

	if (size < MW_EVENT_HDR_SIZE || ev->size < MW_EVENT_HDR_SIZE || ev->size > size)
		return -EBADMSG;
	for (i = 0; i < MW_SLOTS; i++) {
		if (ev->slen[i] > ev->size - off)
			return -EBADMSG;
		slot[i].data = (uint8_t *)ev->data + (off - MW_EVENT_HDR_SIZE);
		slot[i].len = ev->slen[i];
		off += ev->slen[i];
	}
	mcpt__event__init(&out->msg);
	out->msg.seq = ev->seq;
	out->msg.ts = ev->ts;
	out->msg.pid = ev->tgid;
	out->msg.tid = ev->tid;
	out->msg.op = (Mcpt__Op)ev->op;
	out->msg.ret = ev->ret;
	out->msg.flags = ev->flags;
	out->msg.pstart = ev->pstart;
	out->msg.uid = ev->uid;
	out->msg.gid = ev->gid;
	out->msg.dev = encode_kdev(ev->arg[MW_A_DEV]);
	out->msg.ino = ev->arg[MW_A_INO];
	for (i = 0; i < 4; i++)
		out->args[i] = (int64_t)ev->arg[i];
	while (n_args > 0 && out->args[n_args - 1] == 0)
		n_args--;
	out->msg.args = out->args;
	out->msg.n_args = n_args;
	out->msg.path = slot[MW_S_PATH];
	out->msg.abs_path = slot[MW_S_ABS];
	out->msg.opened_path = slot[MW_S_OPENED];
	out->msg.path2 = slot[MW_S_PATH2];
	out->msg.abs_path2 = slot[MW_S_ABS2];
	out->msg.data = slot[MW_S_DATA];
	out->msg.data2 = slot[MW_S_DATA2];
	out->msg.payload = slot[MW_S_PAYLOAD];
	if (ev->op == MW_OP_EXEC)
		cap_argv(&out->msg.data, &out->msg.flags);
	return 0;
}

int encode_stdio(const struct mw_event *ev, size_t size, Mcpt__StdioFrame *out)
{
	size_t before = 0;
	bool in;
	int i;

	if (size < MW_EVENT_HDR_SIZE || ev->size < MW_EVENT_HDR_SIZE || ev->size > size)
		return -EBADMSG;
	for (i = 0; i < MW_S_DATA; i++)
		before += ev->slen[i];
	if (before + ev->slen[MW_S_DATA] > (size_t)(ev->size - MW_EVENT_HDR_SIZE))
		return -EBADMSG;
	mcpt__stdio_frame__init(out);
	out->seq = ev->seq;
	out->ts = ev->ts;
	out->pid = ev->tgid;
	out->tid = ev->tid;
	out->fd = (int32_t)ev->arg[0];
	out->stream_offset = ev->arg[1];
	out->flags = ev->flags;
	if (ev->flags & MW_F_GAP) {
		in = ev->arg[3] == MW_CHAN_IN;
		out->gap_len = ev->arg[2];
		out->orig_len = ev->ret > 0 ? (uint32_t)ev->ret : 0;
	} else {
		in = ev->op == MW_OP_STDIO_READ;
		out->orig_len = (uint32_t)ev->arg[2];
		out->chunk = (uint32_t)ev->arg[3];
		out->last = (ev->flags & MW_F_LAST) != 0;
		out->data.data = (uint8_t *)ev->data + before;
		out->data.len = ev->slen[MW_S_DATA];
	}
	out->dir = in ? MCPT__STDIO_FRAME__DIR__READ : MCPT__STDIO_FRAME__DIR__WRITE;
	return 0;
}
