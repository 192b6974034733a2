/* SPDX-License-Identifier: MIT */
/*
 * rk1828-llm serve: the OpenAI-compatible HTTP server (libmicrohttpd +
 * jansson) over the engine (userspace/engine/engine.h). The server parses,
 * validates, templates, tokenizes and streams; the engine owns every
 * session, KV cache and card. See userspace/doc/server.rst.
 *
 * The server's public header: what the CLI (userspace/cli) calls. Inside
 * the server each layer has its own contract, included only downward:
 *
 *   serve.c (this header)
 *     -> http.h (the HTTP layer: http.c, http_req.h: http_route.c,
 *        http_reply.c, http_endpoints.c, http_gen.c; http_conn.h, http_guard.h)
 *       -> prompt.h, utility.h, gen.h, api.h, api_native.h, resp_store.h,
 *          metrics.h, ui.h (requests, prompts, answers)
 *         -> load.h, agent.h -> srv.h (the state of one server)
 */
#ifndef RK_SERVER_H
#define RK_SERVER_H

struct option;

/**
 * serve_main() - the `serve` subcommand
 * @argc, @argv: its arguments, argv[0] "serve"
 *
 * Loads the model in the background, answers HTTP until SIGINT/SIGTERM
 * (graceful stop) or SIGUSR1 (drain). Return: the process exit status.
 */
int serve_main(int argc, char **argv);

/*
 * srv_options() - serve's options: the getopt_long() table serve_main()
 * parses with, ending in a zeroed entry; the one list of them, which the
 * CLI consults to name serve when another command is given one
 * ("run does not take --port (an option of serve)"). Static storage.
 */
const struct option *srv_options(void);

#endif
