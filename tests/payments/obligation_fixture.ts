/**
 * An open obligation of a client (ana unless told), written as the billing
 * jobs write one: due 5 days from the test clock's now, no statement. Each
 * payments test names its provider and source.
 */
import { withTransaction } from "../../db/client.ts";
import { createObligation } from "../../domain/billing/fee_obligations.ts";
import type { TestEnv } from "../_helpers/env.ts";

export interface OpenObligation {
  partnerId: string;
  clientId: number;
  reference: string;
  providerId: string;
  source: string;
  /** 49.9 unless told. */
  amountMicros?: number;
  /** The partner's id unless told. */
  tenantId?: string | null;
  externalUserId?: string;
}

export async function openObligation(env: TestEnv, obligation: OpenObligation) {
  const { partnerId, clientId, reference, providerId, source } = obligation;
  const parties = {
    partnerId,
    tenantId: obligation.tenantId === undefined ? partnerId : obligation.tenantId,
    externalUserId: obligation.externalUserId ?? "ana",
  };
  return await withTransaction(
    env.deps.db,
    async (tx) =>
      (await createObligation(tx, parties, {
        clientId,
        providerId,
        source,
        reference,
        amountMicros: obligation.amountMicros ?? 49_900_000,
        dueFrom: env.clock.now(),
        dueDays: 5,
        statementId: null,
      }, env.clock.now()))!,
  );
}
