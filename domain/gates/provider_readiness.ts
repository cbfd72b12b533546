/**
 * `GET /operator/v1/providers`: what the operator sees of each provider's
 * readiness for new entries beyond a client's own account: the real-execution
 * switch (gate 8), the per-signal entry cap, and at builder-fee venues the
 * platform builder read fresh at the venue (gate 9: fees accrue only to a
 * builder in standard mode). The fresh read also refreshes what the gates
 * judge with, so the operator who fixed the builder's mode sees entries open
 * again without waiting for the cache.
 */
import type { Ctx } from "../context.ts";
import { PROVIDER_IDS } from "../../venues/types.ts";
import { maxEntriesPerSignal, realExecutionByProvider } from "../catalog/provider_settings.ts";
import { builderStandingOf, builderStatusOf } from "./builder_standing.ts";

export async function listProviderReadiness({ ctx }: { ctx: Ctx }) {
  const realExecution = await realExecutionByProvider(ctx);
  const providers = [];
  for (const providerId of PROVIDER_IDS) {
    const builder = await builderStandingOf(ctx, providerId, { fresh: true });
    providers.push({
      providerId,
      realExecution: realExecution[providerId],
      maxEntriesPerSignal: await maxEntriesPerSignal(ctx.db.read, providerId),
      builder: builder && {
        ...builder,
        // Paid openings are refused BUILDER_CONFIG_INVALID (or READINESS_UNKNOWN) until this is ACCRUING.
        status: builderStatusOf(builder.accruesFees),
      },
    });
  }
  return { providers };
}
