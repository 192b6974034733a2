#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
#
# chat-ref.py CASE.json: render a chat template with Jinja2 the way Hugging
# Face transformers' apply_chat_template does (sandboxed environment with
# trim_blocks and lstrip_blocks, loop controls, tojson = json.dumps with
# ensure_ascii=False, raise_exception, strftime_now), and print the result
# to stdout. The reference for tests/unit/test_chat.c, which compares our
# marker-based renderer (userspace/chat/chat_render.c) with it.
#
# CASE.json: {"template": PATH, "messages": [...], "tools": [...] | null,
#             "add_generation_prompt": bool, "enable_thinking": bool | null,
#             "bos_token": str, "eos_token": str}
# Exit status 2 with a message on stderr when the template raises.
import datetime
import json
import sys

import jinja2
import jinja2.ext
import jinja2.sandbox


def tojson(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False):
    return json.dumps(x, ensure_ascii=ensure_ascii, indent=indent,
                      separators=separators, sort_keys=sort_keys)


def raise_exception(msg):
    raise jinja2.exceptions.TemplateError(msg)


def strftime_now(fmt):
    return datetime.datetime.now(datetime.timezone.utc).strftime(fmt)


def main():
    with open(sys.argv[1], encoding="utf-8") as f:
        case = json.load(f)
    with open(case["template"], encoding="utf-8") as f:
        source = f.read()
    env = jinja2.sandbox.ImmutableSandboxedEnvironment(
        trim_blocks=True, lstrip_blocks=True, extensions=[jinja2.ext.loopcontrols])
    env.filters["tojson"] = tojson
    env.globals["raise_exception"] = raise_exception
    env.globals["strftime_now"] = strftime_now
    kwargs = {
        "messages": case["messages"],
        "add_generation_prompt": case.get("add_generation_prompt", True),
        "bos_token": case.get("bos_token", ""),
        "eos_token": case.get("eos_token", ""),
    }
    if case.get("tools"):
        kwargs["tools"] = case["tools"]
    if case.get("enable_thinking") is not None:
        kwargs["enable_thinking"] = case["enable_thinking"]
    try:
        out = env.from_string(source).render(**kwargs)
    except jinja2.exceptions.TemplateError as e:
        print(f"chat-ref: {e}", file=sys.stderr)
        sys.exit(2)
    sys.stdout.write(out)


if __name__ == "__main__":
    main()
