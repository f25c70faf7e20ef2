#!/usr/bin/python3
"""mcp_server.py - the benchmark's stdio MCP server (python3 stdlib only).

Answers initialize, tools/list and tools/call of one tool, `read_files`, which opens and reads
`count` files of the directory given as argv[1] (as a real file-serving tool would) and returns
their total size. One JSON-RPC message per line on stdin and stdout.
"""
import json
import os
import sys


def read_files(directory, count):
    total = 0
    for i in range(count):
        with open(os.path.join(directory, "file%d.txt" % (i % 8)), "rb") as f:
            total += len(f.read())
    return total


def encode(msg):
    """One line of compact JSON (wl_mcp finds responses by `"id":N,`)."""
    return json.dumps(msg, separators=(",", ":")) + "\n"


def main():
    directory = sys.argv[1]
    out = sys.stdout
    for line in sys.stdin:
        msg = json.loads(line)
        if "id" not in msg:
            continue
        method = msg.get("method")
        if method == "initialize":
            result = {"protocolVersion": "2025-06-18", "capabilities": {"tools": {}},
                      "serverInfo": {"name": "bench", "version": "1"}}
        elif method == "tools/list":
            result = {"tools": [{"name": "read_files", "inputSchema": {"type": "object"}}]}
        elif method == "tools/call":
            n = read_files(directory, int(msg["params"]["arguments"].get("count", 3)))
            result = {"content": [{"type": "text", "text": "%d bytes" % n}]}
        else:
            out.write(encode({"jsonrpc": "2.0", "id": msg["id"],
                              "error": {"code": -32601, "message": "no such method"}}))
            out.flush()
            continue
        out.write(encode({"jsonrpc": "2.0", "id": msg["id"], "result": result}))
        out.flush()


if __name__ == "__main__":
    main()
