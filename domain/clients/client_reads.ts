/** Reads of one client: the resource, its status overview and its commercial status. */
import { and, eq, sql } from "drizzle-orm";
import { preparedFor } from "../../db/client.ts";
import { clients, clientSetups } from "../../db/schema.ts";
import { ApiError } from "../errors.ts";
import { type Ctx, partnerOf } from "../context.ts";
import { commercialStates } from "../commercial/commercial_state.ts";
import { clientStrategies, effectiveAccessOf, isAccessActive } from "../grants/effective_access.ts";
import { clientView, loadClient } from "./load_client.ts";

export async function getClient({ ctx, input }: { ctx: Ctx; input: { externalUserId: string } }) {
  const client = await loadClient(ctx.db.read, partnerOf(ctx), input.externalUserId);
  // Automations are configured per provider once the automation routes exist; none can exist before.
  return { ...clientView(client), automations: [] as unknown[] };
}

const clientWithSetups = preparedFor((db) =>
  db.select({ client: clients, setup: clientSetups }).from(clients)
    .leftJoin(clientSetups, eq(clientSetups.clientId, clients.id))
    .where(
      and(
        eq(clients.partnerId, sql.placeholder("partnerId")),
        eq(clients.externalUserId, sql.placeholder("externalUserId")),
      ),
    )
    .prepare()
);

export async function getClientStatus({ ctx, input }: { ctx: Ctx; input: { externalUserId: string } }) {
  const partnerId = partnerOf(ctx);
  // One round trip for the client and its setups: this read is polled by partners.
  const rows = await clientWithSetups(ctx.db.read).execute({ partnerId, externalUserId: input.externalUserId });
  if (!rows.length) throw new ApiError("NOT_FOUND");
  const client = rows[0].client;
  const setups = rows.flatMap((row) => (row.setup ? [row.setup] : []));
  const access = await effectiveAccessOf(ctx, partnerId);
  const commercial = commercialStates(access, client.status);
  return {
    externalUserId: client.externalUserId,
    tenantId: client.tenantId,
    status: client.status,
    access: { active: isAccessActive(access, client.status) },
    strategies: clientStrategies(access, client.strategySelection),
    providers: commercial.map((entry) => {
      const setup = setups.find((s) => s.providerId === entry.providerId);
      return {
        providerId: entry.providerId,
        // Connections are made on the hosted page; until one completes the account is not connected.
        connection: "NOT_CONNECTED",
        setup: setup ? { mode: "REAL", enabled: setup.enabled, outsideEnvelope: setup.outsideEnvelope } : null,
        commercial: entry,
      };
    }),
    automations: [] as { providerId: string; strategyId: string; enabled: boolean }[],
    openPositions: 0,
  };
}

export async function getClientCommercial({ ctx, input }: { ctx: Ctx; input: { externalUserId: string } }) {
  const partnerId = partnerOf(ctx);
  const client = await loadClient(ctx.db.read, partnerId, input.externalUserId);
  const access = await effectiveAccessOf(ctx, partnerId);
  return { clientStatus: client.status, providers: commercialStates(access, client.status) };
}
