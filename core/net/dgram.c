// SPDX-License-Identifier: MIT
/* core/net/dgram.c - UDP send_to / recv_from (sendmsg / recvmsg operations). */
#include <errno.h>
#include <string.h>
#include <blitz/net.h>

enum blitz_poll blitz_send_to_poll(struct blitz_dgram *d, int fd, const void *buf, size_t len,
				   const struct blitz_addr *to, struct blitz_cx *cx)
{
	if (!d->started) {
		if (!to) {
			d->result = -EINVAL;
			return BLITZ_READY;
		}
		d->peer = *to;
		d->iov = (struct iovec){ .iov_base = (void *)buf, .iov_len = len };
		memset(&d->msg, 0, sizeof(d->msg));
		d->msg.msg_name = &d->peer.ss;
		d->msg.msg_namelen = d->peer.len;
		d->msg.msg_iov = &d->iov;
		d->msg.msg_iovlen = 1;
		blitz_io_prep_sendmsg(&d->op, fd, &d->msg, 0);
		d->started = 1;
	}
	if (blitz_io_poll(&d->op, cx) == BLITZ_PENDING)
		return BLITZ_PENDING;
	d->started = 0;
	d->result = d->op.result;
	return BLITZ_READY;
}

enum blitz_poll blitz_recv_from_poll(struct blitz_dgram *d, int fd, void *buf, size_t len,
				     struct blitz_cx *cx)
{
	if (!d->started) {
		d->iov = (struct iovec){ .iov_base = buf, .iov_len = len };
		memset(&d->msg, 0, sizeof(d->msg));
		d->msg.msg_name = &d->peer.ss;
		d->msg.msg_namelen = sizeof(d->peer.ss);
		d->msg.msg_iov = &d->iov;
		d->msg.msg_iovlen = 1;
		blitz_io_prep_recvmsg(&d->op, fd, &d->msg, 0);
		d->started = 1;
	}
	if (blitz_io_poll(&d->op, cx) == BLITZ_PENDING)
		return BLITZ_PENDING;
	d->started = 0;
	d->peer.len = d->msg.msg_namelen;
	d->result = d->op.result;
	return BLITZ_READY;
}
