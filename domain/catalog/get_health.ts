/**
 * Health as the partner sees it: the providers of its contract. Provider
 * status is what venue calls last observed (no venue call per health request:
 * it must stay cheap; the partner's access comes from the short cache).
 */
import { PROVIDER_IDS } from "../../venues/types.ts";
import { type Ctx, partnerOf } from "../context.ts";
import { effectiveAccessOf } from "../grants/effective_access.ts";
import { realExecutionByProvider } from "./provider_settings.ts";

export async function getHealth({ ctx }: { ctx: Ctx }) {
  const realExecution = await realExecutionByProvider(ctx);
  const contracted = (await effectiveAccessOf(ctx, partnerOf(ctx))).partner.grants.providers;
  return {
    api: "UP" as const,
    providers: PROVIDER_IDS.filter((providerId) => contracted.includes(providerId)).map((providerId) => ({
      providerId,
      status: ctx.venueAvailability.status(providerId),
      realExecution: realExecution[providerId],
    })),
  };
}
