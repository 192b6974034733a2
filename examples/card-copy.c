// SPDX-License-Identifier: MIT
/*
 * card-copy: a program outside librk1828's tree that uses only the
 * installed library (pkg-config rk1828). It opens every RK1828 card and
 * runs one round trip of COPY jobs on each: a host BO filled with a
 * pattern goes to a card BO, and from there into a second host BO, the
 * second job waiting for the first through a syncobj. It prints one line
 * per card and exits 0 when every card gave the pattern back.
 *
 *   cc -o card-copy card-copy.c $(pkg-config --cflags --libs rk1828)
 *   ./card-copy [BYTES]        (default 1 MiB)
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rk1828/rk1828.h>

#define TIMEOUT_NS	(30LL * 1000000000LL)

/* Fill @n bytes at @p with a pattern that depends on @seed and position. */
static void fill(uint8_t *p, uint64_t n, uint32_t seed)
{
	uint32_t x = seed * 2654435761u + 1;

	for (uint64_t i = 0; i < n; i++) {
		x = x * 1103515245u + 12345u;
		p[i] = (uint8_t)(x >> 16);
	}
}

/*
 * round_trip() - host BO -> card BO -> host BO on @card, @size bytes.
 * Return: 0 when the bytes came back unchanged, else a negative errno
 * (-EIO for wrong bytes); a message on stderr says which step failed.
 */
static int round_trip(struct rk_card *card, uint64_t size)
{
	struct rk_bo src = { 0 }, mid = { 0 }, dst = { 0 };
	struct rk_sync step = { 0 }, done = { 0 };
	uint8_t *want = NULL;
	int ret;

	ret = rk_bo_create(card, size, RK_BO_HOST, &src);
	if (!ret)
		ret = rk_bo_create(card, size, RK_BO_CARD, &mid);
	if (!ret)
		ret = rk_bo_create(card, size, RK_BO_HOST, &dst);
	if (!ret)
		ret = rk_bo_mmap(card, &src);
	if (!ret)
		ret = rk_bo_mmap(card, &dst);
	if (!ret)
		ret = rk_syncobj_create(card, false, &step.handle);
	if (!ret)
		ret = rk_syncobj_create(card, false, &done.handle);
	if (ret)
		goto out;

	want = malloc(size);
	if (!want) {
		ret = -ENOMEM;
		goto out;
	}
	fill(src.map, size, card->minor);
	memcpy(want, src.map, size);
	memset(dst.map, 0, size);

	ret = rk_submit_copy(card, src.handle, 0, mid.handle, 0, size,
			     NULL, 0, &step, 1, NULL);
	if (!ret)
		ret = rk_submit_copy(card, mid.handle, 0, dst.handle, 0, size,
				     &step, 1, &done, 1, NULL);
	if (!ret)
		ret = rk_syncobj_status(card, done.handle, 0,
					rk_now_ns() + TIMEOUT_NS);
	if (!ret && memcmp(dst.map, want, size) != 0) {
		fprintf(stderr, "%s: the bytes that came back differ\n",
			card->node);
		ret = -EIO;
	}
out:
	if (ret && ret != -EIO)
		fprintf(stderr, "%s: %s\n", card->node, rk_error());
	free(want);
	if (done.handle)
		rk_syncobj_destroy(card, done.handle);
	if (step.handle)
		rk_syncobj_destroy(card, step.handle);
	rk_bo_destroy(card, &dst);
	rk_bo_destroy(card, &mid);
	rk_bo_destroy(card, &src);
	return ret;
}

int main(int argc, char **argv)
{
	struct rk_card *cards;
	uint64_t size = 1 << 20;
	int n, ret, bad = 0;
	char *end;

	if (argc > 2 || (argc == 2 && !strcmp(argv[1], "--help"))) {
		fprintf(stderr, "usage: %s [BYTES]\n", argv[0]);
		return 2;
	}
	if (argc == 2) {
		errno = 0;
		size = strtoull(argv[1], &end, 10);
		if (errno || *end || !size || size > (1ULL << 30)) {
			fprintf(stderr, "%s: BYTES is 1..%llu, not '%s'\n",
				argv[0], 1ULL << 30, argv[1]);
			return 2;
		}
	}
	ret = rk_open_all(&cards, &n);
	if (ret) {
		fprintf(stderr, "%s: %s\n", argv[0], rk_error());
		return 1;
	}
	for (int i = 0; i < n; i++) {
		ret = round_trip(&cards[i], size);
		printf("%s: %s %u Mbit/s, %" PRIu64 " bytes host -> card -> host: %s\n",
		       cards[i].node, rk_link_name(cards[i].link_type),
		       cards[i].link_speed, size, ret ? "FAILED" : "ok");
		bad += ret != 0;
	}
	rk_close_all(cards, n);
	return bad ? 1 : 0;
}
