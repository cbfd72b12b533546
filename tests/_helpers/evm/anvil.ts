/**
 * A local EVM node for payment tests: anvil, whose Linux binary ships in the
 * npm package `@foundry-rs/anvil-linux-amd64` (the `@foundry-rs/anvil`
 * launcher's platform package), started on a free port with a network's real
 * chain id, automining each transaction into its own block.
 */
import { createRequire } from "node:module";
import { freePort } from "../server.ts";

/** anvil's deterministic development accounts (mnemonic "test test … junk"), funded with ETH. */
export const DEV_KEYS = [
  "0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80",
  "0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d",
  "0x5de4111afa1a4b94908f83103eb1f1706367c2e68ca870fc3fb9a804cdab365a",
  "0x7c852118294e51e653712a81e05800f419141751be58f605c371e15141b007a6",
] as const;

export interface Anvil {
  url: string;
  chainId: number;
  stop(): Promise<void>;
}

function anvilBinary(): string {
  if (Deno.build.os !== "linux" || Deno.build.arch !== "x86_64") {
    throw new Error(`The test EVM node is wired for linux x86_64 only, not ${Deno.build.os} ${Deno.build.arch}`);
  }
  const manifest = createRequire(import.meta.url).resolve("@foundry-rs/anvil-linux-amd64/package.json");
  return manifest.replace(/package\.json$/, "bin/anvil");
}

/** `timestamp`: the genesis block's time (seconds), to date the first blocks in the past. */
export async function startAnvil(chainId: number, options: { timestamp?: number } = {}): Promise<Anvil> {
  const port = freePort();
  const child = new Deno.Command(anvilBinary(), {
    args: [
      "--port",
      String(port),
      "--chain-id",
      String(chainId),
      "--silent",
      ...(options.timestamp ? ["--timestamp", String(options.timestamp)] : []),
    ],
    stdout: "null",
    stderr: "piped",
  }).spawn();
  const url = `http://127.0.0.1:${port}`;
  for (let attempt = 0;; attempt++) {
    try {
      const response = await fetch(url, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "eth_chainId", params: [] }),
      });
      await response.body?.cancel();
      if (response.ok) break;
    } catch {
      if (attempt > 200) throw new Error("anvil did not start");
    }
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  return {
    url,
    chainId,
    async stop() {
      child.kill("SIGTERM");
      await child.status;
      await child.stderr.cancel().catch(() => {});
    },
  };
}
