/**
 * Health as the partner sees it. Provider status is what venue calls last
 * observed (no venue call per health request: it must stay cheap).
 */
import { PROVIDER_IDS } from "../../venues/types.ts";
import type { Ctx } from "../context.ts";
import { realExecutionByProvider } from "./provider_settings.ts";

export async function getHealth({ ctx }: { ctx: Ctx }) {
  const realExecution = await realExecutionByProvider(ctx);
  return {
    api: "UP" as const,
    providers: PROVIDER_IDS.map((providerId) => ({
      providerId,
      status: ctx.venueAvailability.status(providerId),
      realExecution: realExecution[providerId],
    })),
  };
}
