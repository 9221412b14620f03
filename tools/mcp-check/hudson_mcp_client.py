#!/usr/bin/env python3
"""Drives hd-mcp with the official MCP Python SDK (`mcp` on PyPI) as a real client over stdio.

Usage: hudson_mcp_client.py HD_MCP SCENARIO [--mode=legacy|auto] [--policy=POLICY] [ARG...]; the
environment (HUDSON_DB, HUDSON_CONFIG_DIR, ...) is passed on to hd-mcp. The mode is the SDK's
`Client(mode=...)`: "legacy" (the default) opens with the initialize handshake; "auto" probes
`server/discover` and, answered with a modern revision, speaks MCP 2026-07-28 (the protocol version
on every request, no handshake), which this script then requires. Each scenario asserts what it can see from the client's side and prints
one JSON object on standard output for the Swift test (Tests/CLITests/MCPClientTests.swift) to check
against the store and the fake Gmail. Exits 1 with the reason on standard error when an assertion fails.
"""
import asyncio
import json
import os
import re
import sys
from contextlib import asynccontextmanager

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

try:  # the SDK's 2.x client, which negotiates MCP's era (mode="legacy", "auto" or a version)
    from mcp import Client
except ImportError:  # 1.x: the initialize handshake only
    Client = None

# What each mode must negotiate with hd-mcp: the newest revision of its era.
EXPECTED_VERSION = {"legacy": "2025-11-25", "auto": "2026-07-28"}

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


@asynccontextmanager
async def connect(params, mode):
    """The SDK's session with hd-mcp, its negotiated revision and the server's name."""
    if Client is None:
        check(mode == "legacy", "this mcp SDK has no Client(mode=...): pip install -U mcp")
        async with stdio_client(params) as (read, write):
            async with ClientSession(read, write) as session:
                init = await session.initialize()
                yield session, init.protocol_version, init.server_info.name
        return
    async with Client(params, mode=mode) as client:
        yield client, client.protocol_version, client.server_info.name if client.server_info else None


async def run(command, extra_args, mode, scenario, args):
    params = StdioServerParameters(command=command, args=extra_args, env=dict(os.environ))
    async with connect(params, mode) as (session, version, server):
        out = {"protocolVersion": version, "server": server, "mode": mode}
        check(version == EXPECTED_VERSION[mode], f"mode {mode} negotiated {version}")
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
        elif scenario == "era":
            # tools/list, a search and a tool's error, in whichever era the mode reached.
            listed = await session.list_tools()
            out["tools"] = [tool.name for tool in listed.tools]
            result = await session.call_tool("search", {"query": args[0], "limit": 5})
            out["search"] = {"isError": is_error(result), "text": text_of(result),
                             "nextCursor": structured(result).get("nextCursor")}
            failed = await session.call_tool("show", {"ref": "message:0000000000000000"})
            out["error"] = {"isError": is_error(failed), "text": text_of(failed)}
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
    extra, mode = [], "legacy"
    rest = sys.argv[3:]
    if rest and rest[0].startswith("--mode="):
        mode, rest = rest[0].split("=", 1)[1], rest[1:]
        check(mode in EXPECTED_VERSION, f"unknown mode {mode}")
    if rest and rest[0].startswith("--policy="):
        extra, rest = ["--policy", rest[0].split("=", 1)[1]], rest[1:]
    asyncio.run(run(command, extra, mode, scenario, rest))


if __name__ == "__main__":
    main()
