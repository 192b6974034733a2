// SPDX-License-Identifier: MIT
/*
 * rk1828-emu: one emulated RK1828 card, presented as a USB device to a QEMU
 * guest over usbredir (QEMU: -chardev socket,id=c0,path=SOCK
 * -device usb-redir,chardev=c0,bus=xhci.0), or with --pcie as a PCIe
 * device through our QEMU device model (-device rk1828-pci,socket=SOCK,
 * emulator/qemu/rk1828-pci.c).
 *
 * Listens on a unix socket, serves exactly one connection, exits 0 when the
 * peer closes it or on SIGTERM/SIGINT.
 */
#include <endian.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <poll.h>
#include <pthread.h>
#include <unistd.h>

#include "card.h"
#include "exec.h"
#include "pcie.h"
#include "profile.h"
#include "usbredir.h"
#include "rk1828/util.h"

#define DEFAULT_MEM_SIZE	(UINT64_C(5) << 30)

static void usage(FILE *f)
{
	fprintf(f,
		"usage: rk1828-emu --socket PATH [options]\n"
		"Emulate one RK1828 NPU card as a USB device for QEMU usb-redir,\n"
		"or with --pcie as a PCIe device for QEMU's rk1828-pci device.\n"
		"\n"
		"  -s, --socket PATH    unix socket to listen on (required)\n"
		"      --pcie           be a PCIe card (registers, rings, DMA) for\n"
		"                       -device rk1828-pci,socket=PATH\n"
		"  -m, --mem-size SIZE  card memory, bytes with optional K/M/G/T or KiB..TiB\n"
		"                       (powers of 1024, decimals: 1.5G) or kB..TB (powers\n"
		"                       of 1000); default 5G\n"
		"      --serial N       serial number (default 0x18280000 + index)\n"
		"      --index N        card index, for log messages (default 0)\n"
		"  -t, --threads N      EXEC compute threads (0 = one per CPU)\n"
		"      --timing PROFILE every job completes at its modelled time on the card\n"
		"                       profile (a file, or 'rk1828' for the built-in\n"
		"                       emulator/profiles/rk1828.conf); the math still runs\n"
		"                       and a job whose math takes longer is counted late\n"
		"      --timing-only    as --timing (default profile rk1828) but EXEC skips\n"
		"                       the math: deterministic filler outputs, so weights\n"
		"                       may stay holes and big models run at modelled speed\n"
		"      --p2p-window MIB with --pcie: expose the top MIB MiB of card memory\n"
		"                       as the peer window, BAR4 (a power of two; default\n"
		"                       64, 0 for none; none when memory is under 2x MIB)\n"
		"      --link usb|pcie  the link --timing shapes WRITE/READ to (default the\n"
		"                       card's own: pcie with --pcie, else usb)\n"
		"      --temp-limit C   temperature (Celsius, 1..200) at which STATS reports\n"
		"                       the card throttled (default 95; the thermal model\n"
		"                       idles at 42 and reaches 90 under full compute load)\n"
		"  -v, --verbose        log every USB transfer (PCIe register access)\n"
		"                       and command\n"
		"  -h, --help           this text\n");
}

static int parse_u64(const char *s, uint64_t *out)
{
	char *end;

	if (!*s || *s == '-')
		return -1;
	errno = 0;
	*out = strtoull(s, &end, 0);
	return (errno || *end) ? -1 : 0;
}

/* Create, bind and listen; a stale socket file at @path is replaced. */
static int listen_unix(const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct stat st;
	int fd;

	if (strlen(path) >= sizeof(sa.sun_path)) {
		fprintf(stderr, "rk1828-emu: socket path too long (max %zu bytes): %s\n",
			sizeof(sa.sun_path) - 1, path);
		return -1;
	}
	strcpy(sa.sun_path, path);
	if (lstat(path, &st) == 0) {
		if (!S_ISSOCK(st.st_mode)) {
			fprintf(stderr, "rk1828-emu: %s exists and is not a socket\n",
				path);
			return -1;
		}
		unlink(path);
	}
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		fprintf(stderr, "rk1828-emu: socket: %s\n", strerror(errno));
		return -1;
	}
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
	    listen(fd, 1) < 0) {
		fprintf(stderr, "rk1828-emu: %s: %s\n", path, strerror(errno));
		close(fd);
		return -1;
	}
	return fd;
}

/* The command line: the card's configuration, the socket and the link. */
struct emu_opts {
	struct emu_card_config cfg;
	const char *sock_path;
	struct card_profile prof;
	bool pcie;
};

/* --timing PROFILE: a file, or "rk1828" for the built-in profile. */
static int load_timing(struct emu_opts *o, const char *name)
{
	char err[512];

	if (name && strcmp(name, "rk1828") ? card_profile_load(&o->prof, name, err, sizeof(err))
					   : card_profile_builtin(&o->prof, err, sizeof(err))) {
		fprintf(stderr, "rk1828-emu: --timing: %s\n", err);
		return -1;
	}
	o->cfg.timing = &o->prof;
	return 0;
}

/* What the command line said beyond @o, for the defaults that depend on it. */
struct opt_seen {
	const char *timing;	/* --timing PROFILE */
	bool serial, link;	/* --serial, --link given */
	const char *p2p;	/* --p2p-window MIB */
};

/*
 * One of the card's options with a checked value (--mem-size, --serial,
 * --index, --threads, --temp-limit, --link): 0, or 2 with the message
 * printed.
 */
static int parse_card_opt(int opt, const char *arg, struct emu_card_config *cfg,
			  struct opt_seen *seen)
{
	uint64_t v;

	switch (opt) {
	case 'm':
		if (util_parse_size(arg, &cfg->mem_size) || cfg->mem_size < 4096) {
			fprintf(stderr, "rk1828-emu: bad --mem-size '%s': give " UTIL_SIZE_HELP
				"; at least 4K\n",
				arg);
			return 2;
		}
		break;
	case 'S':
		if (parse_u64(arg, &cfg->serial)) {
			fprintf(stderr, "rk1828-emu: bad --serial '%s'\n", arg);
			return 2;
		}
		seen->serial = true;
		break;
	case 'i':
		if (parse_u64(arg, &v) || v > 255) {
			fprintf(stderr, "rk1828-emu: bad --index '%s' (0..255)\n", arg);
			return 2;
		}
		cfg->index = (unsigned int)v;
		break;
	case 't':
		if (parse_u64(arg, &v) || v > 1024) {
			fprintf(stderr, "rk1828-emu: bad --threads '%s' (0..1024)\n", arg);
			return 2;
		}
		cfg->threads = (int)v;
		break;
	case 'H':
		if (parse_u64(arg, &v) || v < 1 || v > 200) {
			fprintf(stderr, "rk1828-emu: bad --temp-limit '%s' (1..200 Celsius)\n",
				arg);
			return 2;
		}
		cfg->temp_limit_mc = (int32_t)v * 1000;
		break;
	case 'L':
		if (cost_link_parse(arg, &cfg->link)) {
			fprintf(stderr, "rk1828-emu: bad --link '%s' (usb or pcie)\n", arg);
			return 2;
		}
		seen->link = true;
		break;
	}
	return 0;
}

/*
 * After the options: no operands, a socket, and the defaults that depend
 * on other options (the serial on --index, the link on --pcie), then the
 * timing profile. -1 to go on, or 2 with the message printed.
 */
static int finish_options(int argc, char **argv, struct emu_opts *o,
			  const struct opt_seen *seen)
{
	struct emu_card_config *cfg = &o->cfg;

	if (optind < argc) {
		fprintf(stderr, "rk1828-emu: unexpected argument '%s'\n", argv[optind]);
		usage(stderr);
		return 2;
	}
	if (!o->sock_path) {
		fprintf(stderr, "rk1828-emu: --socket PATH is required\n");
		usage(stderr);
		return 2;
	}
	if (!seen->serial)
		cfg->serial = UINT64_C(0x18280000) + cfg->index;
	if (!seen->link && o->pcie)
		cfg->link = COST_LINK_PCIE;
	if ((seen->timing || cfg->timing_only) && load_timing(o, seen->timing))
		return 2;
	if (o->pcie) {
		char *end;
		unsigned long mib = seen->p2p ? strtoul(seen->p2p, &end, 10) : 64;

		if (seen->p2p && (*end || (mib & (mib - 1)) || mib > 2048)) {
			fprintf(stderr, "rk1828-emu: bad --p2p-window '%s' (MiB, a power of two up to 2048, or 0)\n",
				seen->p2p);
			return 2;
		}
		cfg->p2p_window = (uint64_t)mib << 20;
		if (cfg->p2p_window > cfg->mem_size / 2)
			cfg->p2p_window = 0;
	}
	return -1;
}

/*
 * parse_options() - fill @o from the command line.
 * Return: -1 to go on, or the exit status (0 for --help or --version, 2 for a usage
 * error, with the message printed).
 */
static int parse_options(int argc, char **argv, struct emu_opts *o)
{
	static const struct option opts[] = {
		{ "socket", required_argument, NULL, 's' },
		{ "mem-size", required_argument, NULL, 'm' },
		{ "serial", required_argument, NULL, 'S' },
		{ "index", required_argument, NULL, 'i' },
		{ "threads", required_argument, NULL, 't' },
		{ "temp-limit", required_argument, NULL, 'H' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "pcie", no_argument, NULL, 'P' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ "timing", required_argument, NULL, 'T' },
		{ "timing-only", no_argument, NULL, 'O' },
		{ "link", required_argument, NULL, 'L' },
		{ "p2p-window", required_argument, NULL, 'W' },
		{ 0 }
	};
	struct emu_card_config *cfg = &o->cfg;
	struct opt_seen seen = { 0 };
	int opt;

	memset(o, 0, sizeof(*o));
	cfg->mem_size = DEFAULT_MEM_SIZE;
	cfg->link = COST_LINK_USB;
	while ((opt = getopt_long(argc, argv, "s:m:t:vh", opts, NULL)) != -1) {
		switch (opt) {
		case 's':
			o->sock_path = optarg;
			break;
		case 'm':
		case 'S':
		case 'i':
		case 't':
		case 'H':
		case 'L':
			if (parse_card_opt(opt, optarg, cfg, &seen))
				return 2;
			break;
		case 'v':
			cfg->verbose = 1;
			break;
		case 'T':
			seen.timing = optarg;
			break;
		case 'O':
			cfg->timing_only = true;
			break;
		case 'P':
			o->pcie = true;
			break;
		case 'W':
			seen.p2p = optarg;
			break;
		case 'h':
			usage(stdout);
			return 0;
		case 'V':
			printf("rk1828-emu %s\n", RK1828_VERSION);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	return finish_options(argc, argv, o, &seen);
}

/*
 * stop_signals() - block SIGTERM, SIGINT and SIGHUP in every thread (the
 * I/O loop reads them from the returned signalfd) and ignore SIGPIPE.
 * Return: the signalfd, or -1 with the error printed.
 */
static int stop_signals(void)
{
	sigset_t mask;
	int sfd;

	sigemptyset(&mask);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGHUP);
	pthread_sigmask(SIG_BLOCK, &mask, NULL);
	signal(SIGPIPE, SIG_IGN);
	sfd = signalfd(-1, &mask, SFD_CLOEXEC);
	if (sfd < 0)
		fprintf(stderr, "rk1828-emu: signalfd: %s\n", strerror(errno));
	return sfd;
}

/*
 * accept_peer() - wait on @lfd for the one connection, or on @sfd for a
 * stop signal.
 * Return: the connected fd; -2 when a stop signal came first; -1 on an
 * error (printed).
 */
static int accept_peer(int lfd, int sfd)
{
	int cfd;

	for (;;) {
		struct pollfd pfd[2] = {
			{ .fd = lfd, .events = POLLIN },
			{ .fd = sfd, .events = POLLIN },
		};

		if (poll(pfd, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			fprintf(stderr, "rk1828-emu: poll: %s\n", strerror(errno));
			return -1;
		}
		if (pfd[1].revents & POLLIN)
			return -2;
		if (pfd[0].revents & POLLIN) {
			cfd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
			if (cfd >= 0)
				return cfd;
			if (errno != EINTR && errno != EAGAIN &&
			    errno != ECONNABORTED) {
				fprintf(stderr, "rk1828-emu: accept: %s\n",
					strerror(errno));
				return -1;
			}
		}
	}
}

/*
 * serve_peer() - speak usbredir (or with @pcie the PCIe link) on @cfd
 * until the peer closes it or a stop signal arrives on @sfd.
 * Return: the exit status (0 for either, 1 on an error).
 */
static int serve_peer(struct emu_card *card, const struct emu_card_config *cfg,
		      bool pcie, int cfd, int sfd)
{
	switch (pcie ? emu_pcie_serve(card, cfd, sfd, cfg->verbose) :
		emu_usbredir_serve(card, cfd, sfd, cfg->verbose)) {
	case 0:
		fprintf(stderr, "rk1828-emu: card %u: peer closed the connection\n",
			cfg->index);
		return 0;
	case 1:
		return 0;
	default:
		return 1;
	}
}

/* print_stats() - per-queue command counters on stderr. */
static void print_stats(struct emu_card *card, const struct emu_card_config *cfg)
{
	unsigned int q;

	for (q = 0; q < RK1828_HIF_NUM_QUEUES; q++) {
		struct emu_card_stats st;

		emu_card_get_stats(card, q, &st);
		fprintf(stderr, "rk1828-emu: card %u queue %u: %" PRIu64 " commands, %" PRIu64 " errors, %" PRIu64 " aborted, %" PRIu64 " desyncs\n",
			cfg->index, q, st.commands, st.errors,
			st.aborted, st.desyncs);
	}
}

/* print_timing() - modelled jobs, late ones and power on stderr (timing mode). */
static void print_timing(struct emu_card *card, const struct emu_card_config *cfg)
{
	struct rk1828_hif_stats st;

	if (emu_card_get_hif_stats(card, &st))
		return;
	fprintf(stderr, "rk1828-emu: card %u timing: %" PRIu64 " jobs, %" PRIu64 " late; NPU busy %.3f s; %.2f W average\n",
		cfg->index, (uint64_t)le64toh(st.jobs), (uint64_t)le64toh(st.late_jobs),
		le64toh(st.busy_ns[RK1828_HIF_QUEUE_COMPUTE]) / 1e9, le32toh(st.power_mw) / 1000.0);
}

int main(int argc, char **argv)
{
	struct emu_opts o;
	struct emu_card_config *cfg = &o.cfg;
	struct emu_card *card;
	int lfd, cfd, sfd, ret;

	argv[0] = (char *)"rk1828-emu";	/* getopt's messages: the name, not the path */
	ret = parse_options(argc, argv, &o);
	if (ret >= 0)
		return ret;
	ret = 1;
	sfd = stop_signals();
	if (sfd < 0)
		return 1;

	emu_exec_set_threads(cfg->threads);
	card = emu_card_create(cfg);
	if (!card) {
		fprintf(stderr, "rk1828-emu: cannot create card with %" PRIu64 " bytes of memory: %s\n",
			cfg->mem_size, strerror(errno));
		return 1;
	}
	lfd = listen_unix(o.sock_path);
	if (lfd < 0)
		goto out_card;
	fprintf(stderr, "rk1828-emu: card %u (%s) listening on %s, mem %.1f GiB%s%s%s%s\n",
		cfg->index, o.pcie ? "PCIe" : "USB", o.sock_path,
		(double)cfg->mem_size / (1 << 30),
		cfg->timing ? ", timing " : "", cfg->timing ? cfg->timing->name : "",
		cfg->timing ? (cfg->link == COST_LINK_PCIE ? " over pcie" : " over usb") : "",
		cfg->timing_only ? " (timing only, no math)" : "");

	cfd = accept_peer(lfd, sfd);
	/* One peer per card: stop listening. */
	close(lfd);
	unlink(o.sock_path);
	if (cfd == -2)
		ret = 0;
	if (cfd < 0)
		goto out_card;
	ret = serve_peer(card, cfg, o.pcie, cfd, sfd);
	close(cfd);
out_card:
	if (cfg->verbose || ret)
		print_stats(card, cfg);
	if (cfg->timing)
		print_timing(card, cfg);
	emu_card_destroy(card);
	close(sfd);
	return ret;
}
