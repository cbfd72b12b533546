/**
 * A client's strategy selection: `null` means every strategy the partner may
 * offer (ALL_GRANTED, following later grants), an array an explicit choice
 * (EXPLICIT; empty = no entries at all).
 */
import { eq, inArray } from "drizzle-orm";
import { withPartnerTransaction } from "../credentials/partner_transaction.ts";
import { clients, strategies } from "../../db/schema.ts";
import { type Ctx, partnerOf } from "../context.ts";
import { ApiError } from "../errors.ts";
import { emitEvent } from "../events/emit_event.ts";
import {
  clientStrategies,
  type EffectiveAccess,
  effectiveAccessOf,
  loadEffectiveAccess,
} from "../grants/effective_access.ts";
import { type ClientRow, loadActiveClient, loadClient } from "./load_client.ts";

function selectionView(access: EffectiveAccess, client: Pick<ClientRow, "strategySelection">) {
  return {
    granted: access.strategies,
    selected: clientStrategies(access, client.strategySelection),
    selectionMode: client.strategySelection === null ? "ALL_GRANTED" as const : "EXPLICIT" as const,
  };
}

export async function getClientStrategies({ ctx, input }: { ctx: Ctx; input: { externalUserId: string } }) {
  const partnerId = partnerOf(ctx);
  const client = await loadClient(ctx.db.read, partnerId, input.externalUserId);
  return selectionView(await effectiveAccessOf(ctx, partnerId), client);
}

export async function setClientStrategies(
  { ctx, input }: { ctx: Ctx; input: { externalUserId: string; strategyIds: string[] | null } },
) {
  const partnerId = partnerOf(ctx);
  const now = ctx.clock.now();
  return await withPartnerTransaction(ctx, async (tx) => {
    const client = await loadActiveClient(tx, partnerId, input.externalUserId);
    const access = await loadEffectiveAccess(tx, partnerId, now);
    const selection = input.strategyIds === null ? null : [...new Set(input.strategyIds)];
    if (selection) {
      const { grants } = access.partner;
      const restricted = access.restrictions?.strategies ?? null;
      const ungranted = selection.filter((id) =>
        !grants.strategies.includes(id) || (restricted && !restricted.includes(id))
      );
      if (ungranted.length) {
        throw new ApiError("GRANT_ESCALATION", {
          message: `Estratégias fora da concessão: ${ungranted.slice(0, 5).map((id) => `"${id}"`).join(", ")}.`,
        });
      }
      const published = selection.length
        ? (await tx.select({ id: strategies.strategyId, status: strategies.status }).from(strategies)
          .where(inArray(strategies.strategyId, selection))).filter((s) => s.status === "PUBLISHED").map((s) => s.id)
        : [];
      const unavailable = selection.filter((id) => !published.includes(id));
      if (unavailable.length) {
        throw new ApiError("STRATEGY_NOT_AVAILABLE", {
          message: `Estratégias não publicadas: ${unavailable.slice(0, 5).map((id) => `"${id}"`).join(", ")}.`,
        });
      }
    }
    await tx.update(clients).set({ strategySelection: selection, updatedAt: now }).where(eq(clients.id, client.id));
    const view = selectionView(access, { strategySelection: selection });
    await emitEvent(tx, {
      type: "client.updated",
      partnerId,
      tenantId: client.tenantId,
      externalUserId: client.externalUserId,
      occurredAt: now,
      data: { change: "STRATEGIES", selectionMode: view.selectionMode, selected: view.selected },
    });
    return view;
  });
}
