#!/usr/bin/env python3
"""Drives hd-mcp with the official MCP Python SDK (`mcp` on PyPI) as a real client over stdio.

Usage: hudson_mcp_client.py HD_MCP SCENARIO [ARG...]; the environment (HUDSON_DB, HUDSON_CONFIG_DIR,
...) is passed on to hd-mcp. Each scenario asserts what it can see from the client's side and prints
one JSON object on standard output for the Swift test (Tests/CLITests/MCPClientTests.swift) to check
against the store and the fake Gmail. Exits 1 with the reason on standard error when an assertion fails.
"""
import asyncio
import json
import os
import re
import sys

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

TOOLS = ["search", "show", "labels", "pending", "undo", "mark", "drafts", "send", "filters_dry_run"]
FENCE = re.compile(r'<untrusted-mail-content nonce="([a-z0-9]+)">\n(.*?)\n</untrusted-mail-content nonce="\1">', re.S)


def check(condition, why):
    if not condition:
        print(why, file=sys.stderr)
        sys.exit(1)


def is_error(result):
    # The SDK's 2.x models name fields in snake case; 1.x in the wire's camel case.
    return bool(getattr(result, "is_error", getattr(result, "isError", False)))


def structured(result):
    return getattr(result, "structured_content", getattr(result, "structuredContent", None)) or {}


def text_of(result):
    return "".join(part.text for part in result.content if getattr(part, "type", "") == "text")


async def run(command, extra_args, scenario, args):
    params = StdioServerParameters(command=command, args=extra_args, env=dict(os.environ))
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            init = await session.initialize()
            out = {"protocolVersion": init.protocol_version, "server": init.server_info.name}
            if scenario == "tools":
                listed = await session.list_tools()
                out["tools"] = [tool.name for tool in listed.tools]
                check(sorted(out["tools"]) == sorted(TOOLS), f"tools: {out['tools']}")
            elif scenario == "page":
                query, limit, max_chars = args[0], int(args[1]), int(args[2])
                cursor, ids, pages = None, [], 0
                while True:
                    arguments = {"query": query, "limit": limit, "max_chars": max_chars}
                    if cursor:
                        arguments["cursor"] = cursor
                    result = await session.call_tool("search", arguments)
                    text = text_of(result)
                    check(not is_error(result), f"search failed: {text}")
                    check(len(text) <= max_chars, f"answer of {len(text)} characters over {max_chars}")
                    ids += re.findall(r"^(thread:[A-Za-z0-9_-]+)\t", text, re.M)
                    pages += 1
                    cursor = structured(result).get("nextCursor")
                    if not cursor:
                        break
                    check(f'cursor "{cursor}"' in text, "the cursor is not named in the text")
                    check(pages < 1000, "paging does not end")
                out["ids"], out["pages"] = ids, pages
            elif scenario == "show":
                ref, max_chars = args[0], int(args[1])
                arguments = {"ref": ref} if max_chars == 0 else {"ref": ref, "max_chars": max_chars}
                result = await session.call_tool("show", arguments)
                text = text_of(result)
                out["isError"], out["length"] = is_error(result), len(text)
                out["cursor"] = structured(result).get("nextCursor")
                fenced = FENCE.search(text)
                check(fenced is not None, f"no fenced block in: {text[:300]!r}")
                out["fenced"] = fenced.group(2)
                out["outside"] = FENCE.sub("", text)
                out["controls"] = [hex(ord(c)) for c in text if (ord(c) < 0x20 and c != "\n") or 0x7F <= ord(c) <= 0x9F]
                if out["cursor"]:
                    again = await session.call_tool("show", dict(arguments, cursor=out["cursor"]))
                    out["nextLength"] = len(text_of(again))
                    out["nextFenced"] = (FENCE.search(text_of(again)) or [None, None, ""])[2]
            elif scenario == "call":
                name, arguments = args[0], json.loads(args[1])
                result = await session.call_tool(name, arguments)
                out["isError"], out["text"] = is_error(result), text_of(result)
            elif scenario == "every-tool":
                out["results"] = {}
                for name, arguments in json.loads(args[0]):
                    result = await session.call_tool(name, arguments)
                    out["results"][name + " " + json.dumps(arguments)] = {"isError": is_error(result), "text": text_of(result)}
            else:
                check(False, f"unknown scenario {scenario}")
            print(json.dumps(out))


def main():
    command, scenario = sys.argv[1], sys.argv[2]
    extra = []
    rest = sys.argv[3:]
    if rest and rest[0].startswith("--policy="):
        extra, rest = ["--policy", rest[0].split("=", 1)[1]], rest[1:]
    asyncio.run(run(command, extra, scenario, rest))


if __name__ == "__main__":
    main()
