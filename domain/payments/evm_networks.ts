/**
 * A reader per payment network's node, built once per URL (it only holds
 * connections and the tokens' decimals, nothing that grants anything).
 */
import type { EvmNetwork } from "../../config.ts";
import { type EvmReader, evmReader } from "../../venues/evm/transfers.ts";
import type { Ctx } from "../context.ts";

const readers = new Map<string, EvmReader>();

export function evmReaderOf(ctx: Pick<Ctx, "config">, network: EvmNetwork): EvmReader {
  const url = ctx.config.evmRpc[network];
  if (!url) throw new Error(`No node configured for ${network}`);
  let reader = readers.get(url);
  if (!reader) readers.set(url, reader = evmReader(url));
  return reader;
}
