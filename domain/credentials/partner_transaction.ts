/**
 * The write transaction of a partner's request. Authentication ran on cached
 * rows; inside the transaction, beside its work, the credential is re-checked
 * as still in force and the partner as still ACTIVE, and nothing the work
 * wrote commits unless it is: a revoke or a suspension committed through any
 * path (this instance, another one, the operator CLI) stops the very next
 * write everywhere. The work may hold only database statements (it does:
 * venue calls and other effects happen outside transactions).
 */
import { type Tx, withTransaction } from "../../db/client.ts";
import type { Ctx } from "../context.ts";
import { recheckPrincipal } from "./authenticate_partner.ts";
import { inOrder } from "../concurrency.ts";

export async function withPartnerTransaction<T>(ctx: Ctx, work: (tx: Tx) => Promise<T>): Promise<T> {
  if (ctx.actor.kind !== "partner") throw new Error("A partner transaction needs a partner actor");
  const { clientId } = ctx.actor;
  return await withTransaction(ctx.db, async (tx) => {
    // The recheck's read leaves with the work's first statements (one round trip less on a libSQL server); its
    // refusal comes first, whatever the work answered, and rolls back what the work wrote meanwhile.
    const [, result] = await inOrder([recheckPrincipal(tx, clientId, ctx.clock.now()), work(tx)]);
    return result;
  });
}
