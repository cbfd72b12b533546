/**
 * The write transaction of a partner's request. Authentication ran on cached
 * rows; before anything is written, the transaction re-checks that the
 * credential is still in force and the partner still ACTIVE, so a revoke or a
 * suspension committed through any path (this instance, another one, the
 * operator CLI) stops the very next write everywhere.
 */
import { type Tx, withTransaction } from "../../db/client.ts";
import type { Ctx } from "../context.ts";
import { recheckPrincipal } from "./authenticate_partner.ts";

export async function withPartnerTransaction<T>(ctx: Ctx, work: (tx: Tx) => Promise<T>): Promise<T> {
  if (ctx.actor.kind !== "partner") throw new Error("A partner transaction needs a partner actor");
  const { clientId } = ctx.actor;
  return await withTransaction(ctx.db, async (tx) => {
    await recheckPrincipal(tx, clientId, ctx.clock.now());
    return await work(tx);
  });
}
