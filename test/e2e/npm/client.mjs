// client.mjs - an MCP client built on @modelcontextprotocol/sdk for the interop test: it starts
// the server command given after "--" over stdio (the test passes mcpwitness-collect wrapping
// node .../server-filesystem/dist/index.js), runs the steps of a JSON script one at a time,
// and the steps of a "pipeline" entry all at once (concurrent requests, answered in whatever
// order the server likes). Prints one JSON line per call: {step, tool, arguments, isError}.
//
//   node client.mjs SCRIPT.json -- COMMAND [ARG...]
//   SCRIPT: [{"tool": "write_file", "arguments": {...}}, {"pipeline": [{...}, ...]}, ...]
//
// Run with the test's node_modules on NODE_PATH-free resolution: the test copies this file
// next to the installed node_modules.
import { readFileSync } from "node:fs";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

const argv = process.argv.slice(2);
const sep = argv.indexOf("--");
if (sep !== 1 || argv.length < 3) {
  console.error("usage: node client.mjs SCRIPT.json -- COMMAND [ARG...]");
  process.exit(2);
}
const script = JSON.parse(readFileSync(argv[0], "utf8"));
const transport = new StdioClientTransport({
  command: argv[2],
  args: argv.slice(3),
  env: process.env,
  stderr: "inherit",
});
const client = new Client({ name: "mcpwitness-interop", version: "1.0.0" });

async function call(step, c) {
  const r = await client.callTool({ name: c.tool, arguments: c.arguments });
  console.log(JSON.stringify({ step, tool: c.tool, arguments: c.arguments, isError: !!r.isError,
                               text: (r.content || []).map((x) => x.text || "").join(" ").slice(0, 200) }));
  return r;
}

await client.connect(transport);
let step = 0;
for (const s of script) {
  if (s.pipeline) {
    const base = step;
    step += s.pipeline.length;
    await Promise.all(s.pipeline.map((c, i) => call(base + i, c)));
  } else {
    await call(step++, s);
  }
}
await client.close();
