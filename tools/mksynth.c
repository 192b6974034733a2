// SPDX-License-Identifier: MIT
/*
 * mksynth: write a synthetic GGUF model of the llama, qwen2, qwen3 or
 * qwen35 architecture with seeded random weights, for the reference
 * vectors (tools/gen-ref-vectors), the tests and the benchmarks.
 *
 *   mksynth -o OUT.gguf --arch ARCH [--type TYPE] [--vocab VOCAB.gguf]
 *           [--preset tiny|bench|9b|27b] [--shape FILE] [--shape-only] [--seed S]
 *           [--layers N] [--ffn N] [--mtp N]
 *
 * ARCH: llama, qwen2 (Q/K/V biases), qwen3 (per-head Q/K RMSNorm), qwen35
 * (hybrid: Gated DeltaNet layers and gated full attention every
 * full_attention_interval-th layer). Metadata keys and tensor names are
 * the ones llama.cpp reads (src/llama-arch.cpp, src/models/<arch>.cpp).
 *
 * TYPE: f32, f16, bf16, q8_0, q4_0, q4_1, q5_0, q5_1, q5_k, q6_k, or
 * q4_k_m, the usual "Q4_K_M" mix (Q4_K matrices and token embedding; Q6_K
 * for the LM head, and for ffn_down and attn_v in the layers llama.cpp's
 * use_more_bits() picks: the first and last eighth and every third in
 * between). Norms, biases, ssm_a, ssm_dt, ssm_norm and ssm_conv1d stay F32
 * whatever TYPE is, as llama-quantize leaves them. w4a16 is the vendor's
 * W4A16 layout: group-32 asymmetric Q4_1 matrices and embedding, Q6_K LM
 * head.
 *
 * --vocab: copy every tokenizer.* key of a GGUF vocabulary (for example
 * llama.cpp's models/ggml-vocab-qwen35.gguf) so the model carries a real
 * vocabulary; n_vocab is then its token count. Without it the model has
 * a 512-token placeholder vocabulary of type gpt2: the 256 byte-level
 * tokens (any text tokenizes, one token per byte), fillers, and an
 * end-of-text token.
 *
 * --preset: tiny (default) are the small synthetic shapes, dim 256
 * and 8 layers, every matrix row a multiple of 256 so all types apply;
 * bench are qwen35 and llama of the same parameter count for make bench;
 * 9b and 27b are Qwen3.5-9B and -27B (DESIGN.md section 10) and imply
 * --shape-only and n_vocab 248320 unless --vocab is given.
 *
 * --shape: the hyperparameters of a shape file (tests/shapes/NAME.shape,
 * tests/lib/shape.h) instead of a preset, --arch from the file; RoPE, the
 * context and qwen35's sections as the presets of that arch. Implies
 * --shape-only.
 *
 * --shape-only: mark the file rk1828.shape_only = true (a runtime uploads
 * no weights from it, the card memory being zero already), write the
 * tensor infos but leave the data as holes of a
 * sparse file (real sizes, no disk use): for the planner.
 *
 * --mtp N (qwen35): the last N blocks are multi-token-prediction blocks
 * (<arch>.nextn_predict_layers = N), written like full-attention blocks
 * plus llama.cpp's nextn tensors: nextn.eh_proj [2 dim -> dim],
 * nextn.enorm, nextn.hnorm and nextn.shared_head_norm [dim]; the card
 * pipeline skips them, --spec mtp runs the first (spec_mtp.c).
 *
 * Weights (fixed seed: the file is byte-for-byte reproducible): as
 * tests/lib/synth_preset.h describes. Every random draw is made in the
 * same order whatever TYPE is, so the types of one arch and seed quantize
 * the very same F32 model.
 *
 * The tiny models are made confident the way trained models are, so that
 * llama.cpp's 8-bit activations do not turn near-ties into different top-1
 * tokens: token embeddings of +-1.4 (--embd-scale) keep the current
 * token's own embedding a strong candidate against the blocks' output
 * (tied heads), and an untied head is the embedding plus noise of half
 * its scale. At 1.4, about half of the positions of natural text still
 * pick another token than the current one.
 *
 * The models are written by the one synthetic-model writer
 * (tests/lib/synth_model.h) from the specs of tests/lib/synth_preset.h;
 * this file only parses the options.
 *
 * Exit status 0, or 1 with a message on stderr.
 */
#include <getopt.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shape.h"
#include "synth_model.h"
#include "synth_preset.h"

/**
 * struct opts - mksynth's command line
 * @arch, @type, @vocab, @preset, @out, @shape_file: the options' values
 * @shape_only: --shape-only
 * @seed, @layers, @ffn, @mtp: the numbers (0: the preset's)
 * @embd_scale: --embd-scale (0: the preset's)
 */
struct opts {
	const char *arch, *type, *vocab, *preset, *out, *shape_file;
	bool shape_only;
	uint64_t seed;
	unsigned long layers, ffn;
	uint32_t mtp;
	double embd_scale;
};

static void usage(void)
{
	fprintf(stderr,
		"usage: mksynth -o OUT.gguf --arch llama|qwen2|qwen3|qwen35 [--type TYPE]\n"
		"               [--vocab VOCAB.gguf] [--preset tiny|bench|9b|27b] [--shape FILE]\n"
		"               [--shape-only] [--seed S] [--layers N] [--ffn N] [--mtp N]\n"
		"TYPE: f32 f16 bf16 q8_0 q4_0 q4_1 q5_0 q5_1 q5_k q6_k q4_k_m w4a16\n");
}

/* Parse argv into @o. Return: 0, or -1 after usage(). */
static int parse(int argc, char **argv, struct opts *o)
{
	static const struct option opts[] = {
		{ "arch", required_argument, NULL, 'a' },
		{ "type", required_argument, NULL, 't' },
		{ "vocab", required_argument, NULL, 'v' },
		{ "preset", required_argument, NULL, 'p' },
		{ "shape-only", no_argument, NULL, 'S' },
		{ "seed", required_argument, NULL, 's' },
		{ "layers", required_argument, NULL, 'l' },
		{ "ffn", required_argument, NULL, 'f' },
		{ "mtp", required_argument, NULL, 'M' },
		{ "embd-scale", required_argument, NULL, 'E' },
		{ "out", required_argument, NULL, 'o' },
		{ "shape", required_argument, NULL, 'F' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	*o = (struct opts){ .type = "f32", .preset = "tiny" };
	while ((c = getopt_long(argc, argv, "o:", opts, NULL)) != -1) {
		switch (c) {
		case 'a': o->arch = optarg; break;
		case 't': o->type = optarg; break;
		case 'v': o->vocab = optarg; break;
		case 'p': o->preset = optarg; break;
		case 'S': o->shape_only = true; break;
		case 's': o->seed = strtoull(optarg, NULL, 0); break;
		case 'l': o->layers = strtoul(optarg, NULL, 0); break;
		case 'f': o->ffn = strtoul(optarg, NULL, 0); break;
		case 'M': o->mtp = (uint32_t)strtoul(optarg, NULL, 0); break;
		case 'E': o->embd_scale = strtod(optarg, NULL); break;
		case 'o': o->out = optarg; break;
		case 'F': o->shape_file = optarg; break;
		default: usage(); return -1;
		}
	}
	if (optind != argc) {
		usage();
		return -1;
	}
	return 0;
}

/* The spec @o asks for, into @s. Return: 0, or -1 with a message in @err. */
static int spec(const struct opts *o, struct synth_model *s, char *err, size_t errlen)
{
	static struct model_shape ms;
	const char *arch = o->arch;

	if (o->shape_file) {
		if (shape_load(&ms, o->shape_file, err, errlen))
			return -1;
		if (arch && strcmp(arch, ms.arch)) {
			snprintf(err, errlen, "--arch %s, but %s is %s", arch, o->shape_file, ms.arch);
			return -1;
		}
		if (!o->out)
			return 1;
		if (synth_preset_shape(s, &ms, err, errlen))
			return -1;
	} else if (!o->out || !arch) {
		return 1;
	} else if (synth_preset(s, o->preset, arch, err, errlen)) {
		return -1;
	}
	if (o->layers)
		s->n_layers = (uint32_t)o->layers;
	if (o->ffn)
		s->ffn = (uint32_t)o->ffn;
	if (synth_preset_types(s, o->type, err, errlen))
		return -1;
	s->seed = synth_preset_seed(s->arch, o->seed);
	s->n_mtp = o->mtp;
	s->shape_only |= o->shape_only;
	if (o->embd_scale > 0)
		synth_preset_embd_scale(s, o->embd_scale);
	if (o->vocab) {
		s->vocab = SYNTH_VOCAB_FILE;
		s->vocab_path = o->vocab;
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct synth_model s;
	struct opts o;
	char err[512];
	int r;

	if (parse(argc, argv, &o))
		return 1;
	r = spec(&o, &s, err, sizeof(err));
	if (r > 0)
		usage();
	else if (r < 0 || synth_model_write(&s, o.out, err, sizeof(err)))
		fprintf(stderr, "mksynth: %s\n", err);
	else
		return 0;
	return 1;
}
