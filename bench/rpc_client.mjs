// Times agentread/read over stdio from a vscode-jsonrpc client, as the extension talks to the server.
//   node bench/rpc_client.mjs '<json config>'
// config: {command: [...], cwd, root, small, big, runs, inflight, total, method, settle_ms?, files?: [{name, params}]}
// (files: the requests timed, each by its name; by default the small and the big file read whole)
// Prints JSON: cold start (spawn to first answer), sequential p50/p99 per file, requests/s with N in flight.
import { spawn } from "node:child_process";
import { createRequire } from "node:module";
import { performance } from "node:perf_hooks";
import { pathToFileURL } from "node:url";

const require = createRequire(import.meta.url);
const rpc = require(process.env.VSCODE_JSONRPC || "vscode-jsonrpc/node");
const cfg = JSON.parse(process.argv[2]);
const method = cfg.method || "agentread/read";

const quantile = (xs, q) => { const s = [...xs].sort((a, b) => a - b); return s[Math.min(s.length - 1, Math.floor(q * s.length))]; };

const t0 = performance.now();
const child = spawn(cfg.command[0], cfg.command.slice(1), { cwd: cfg.cwd, stdio: ["pipe", "pipe", "inherit"], env: process.env });
const conn = rpc.createMessageConnection(new rpc.StreamMessageReader(child.stdout), new rpc.StreamMessageWriter(child.stdin));
conn.listen();
const root = pathToFileURL(cfg.root).href;
await conn.sendRequest("initialize", { processId: process.pid, rootUri: root, capabilities: {},
  workspaceFolders: [{ uri: root, name: "bench" }] });
conn.sendNotification("initialized", {});
await conn.sendRequest(method, { path: cfg.small });
const cold = performance.now() - t0;
// A server an agent calls has been up for a while: settle_ms lets its worker processes start first.
if (cfg.settle_ms) await new Promise((resolve) => setTimeout(resolve, cfg.settle_ms));

const out = { cold_ms: cold };
const files = cfg.files || [{ name: "small", params: { path: cfg.small } }, { name: "big", params: { path: cfg.big } }];
for (const { name, params } of files) {
  const first = performance.now();
  await conn.sendRequest(method, params);
  out[`${name}_first_ms`] = performance.now() - first;
  for (let i = 0; i < 20; i++) await conn.sendRequest(method, params); // warm up caches and the JIT
  const times = [];
  for (let i = 0; i < cfg.runs; i++) {
    const s = performance.now();
    await conn.sendRequest(method, params);
    times.push(performance.now() - s);
  }
  out[`${name}_p50_ms`] = quantile(times, 0.5);
  out[`${name}_p99_ms`] = quantile(times, 0.99);
  let next = 0;
  const s = performance.now();
  const lane = async () => { while (next++ < cfg.total) await conn.sendRequest(method, params); };
  await Promise.all(Array.from({ length: cfg.inflight }, lane));
  out[`${name}_rps`] = cfg.total / ((performance.now() - s) / 1000);
}
conn.dispose();
child.kill();
console.log(JSON.stringify(out));
process.exit(0);
