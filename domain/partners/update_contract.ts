/**
 * Contract changes (operator). New terms become a new version that applies
 * from the next period boundary of the version in force, so a statement always
 * freezes the terms it started with. Suspension is different: it is a brake,
 * so it applies at once to the version in force and every later one.
 */
import { and, eq, gte } from "drizzle-orm";
import { withTransaction } from "../../db/client.ts";
import { contractVersions } from "../../db/schema.ts";
import { nextPeriodStart } from "../billing/periods.ts";
import { iso } from "../clock.ts";
import { type Ctx } from "../context.ts";
import { recordChange } from "../events/record_change.ts";
import { contractRow } from "./create_partner.ts";
import { contractInForce, latestContract, loadPartner } from "./load_partner.ts";
import { operatorPartnerView } from "./partner_view.ts";
import type { ContractTermsInput } from "./types.ts";
import { bumpCacheGenerations } from "../cache_generations.ts";

export async function updateContract(
  { ctx, input }: { ctx: Ctx; input: { partnerId: string; terms: ContractTermsInput } },
) {
  const now = ctx.clock.now();
  const result = await withTransaction(ctx.db, async (tx) => {
    await loadPartner(tx, input.partnerId);
    const inForce = await contractInForce(tx, input.partnerId, now);
    const latest = await latestContract(tx, input.partnerId);
    const effectiveFrom = nextPeriodStart(inForce.performancePeriod as "WEEKLY" | "MONTHLY", now);
    // A version already scheduled for that boundary is replaced by the newer terms.
    await tx.delete(contractVersions).where(and(
      eq(contractVersions.partnerId, input.partnerId),
      gte(contractVersions.effectiveFrom, effectiveFrom),
    ));
    const version = latest.version + 1;
    await tx.insert(contractVersions).values(
      contractRow(input.partnerId, version, effectiveFrom, now, input.terms, inForce.suspended),
    );
    await bumpCacheGenerations(tx, "partners");
    await recordChange(ctx, tx, {
      partnerId: input.partnerId,
      action: "contract.versioned",
      before: { version: inForce.version },
      after: { version, effectiveFrom: iso(effectiveFrom), terms: input.terms },
      at: now,
      event: {
        type: "tenant.updated",
        data: { change: "CONTRACT_SCHEDULED", contractVersion: version, effectiveFrom: iso(effectiveFrom) },
      },
    });
    return await operatorPartnerView(tx, input.partnerId, now);
  });
  ctx.caches.partners.clear();
  return result;
}

export async function setContractSuspended(
  { ctx, input }: { ctx: Ctx; input: { partnerId: string; suspended: boolean; reason: string } },
) {
  const now = ctx.clock.now();
  const result = await withTransaction(ctx.db, async (tx) => {
    await loadPartner(tx, input.partnerId);
    const inForce = await contractInForce(tx, input.partnerId, now);
    if (inForce.suspended !== input.suspended) {
      await tx.update(contractVersions).set({ suspended: input.suspended }).where(and(
        eq(contractVersions.partnerId, input.partnerId),
        gte(contractVersions.version, inForce.version),
      ));
      await bumpCacheGenerations(tx, "partners");
      await recordChange(ctx, tx, {
        partnerId: input.partnerId,
        action: input.suspended ? "contract.suspended" : "contract.resumed",
        reason: input.reason,
        before: { suspended: inForce.suspended },
        after: { suspended: input.suspended },
        at: now,
        event: {
          type: "tenant.updated",
          data: {
            change: input.suspended ? "CONTRACT_SUSPENDED" : "CONTRACT_RESUMED",
            contractVersion: inForce.version,
          },
        },
      });
    }
    return await operatorPartnerView(tx, input.partnerId, now);
  });
  ctx.caches.partners.clear();
  return result;
}
