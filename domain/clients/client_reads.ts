/** Reads of one client: the resource, its status overview and its commercial status. */
import { and, eq, sql } from "drizzle-orm";
import { preparedRow } from "../../db/compiled_row.ts";
import { automations, clients, clientSetups, connectSessions, positions, providerAccounts } from "../../db/schema.ts";
import { automationsOfClient } from "../automation/automations.ts";
import { ApiError } from "../errors.ts";
import { type Ctx, partnerOf } from "../context.ts";
import { commercialStates } from "../commercial/commercial_state.ts";
import { billingStandingOf, dueObligationsJson, parseDueObligations, standingOf } from "../billing/billing_standing.ts";
import { clientStrategies, effectiveAccessOf, isAccessActive } from "../grants/effective_access.ts";
import { clientView, loadClient } from "./load_client.ts";
import { connectionState } from "../accounts/connection_state.ts";

export async function getClient({ ctx, input }: { ctx: Ctx; input: { externalUserId: string } }) {
  const client = await loadClient(ctx.db.read, partnerOf(ctx), input.externalUserId);
  return { ...clientView(client), automations: await automationsOfClient(ctx, client) };
}

interface SetupSummary {
  providerId: string;
  enabled: boolean;
  outsideEnvelope: boolean;
}

/**
 * The client with summaries of its setups, accounts and pending connect
 * sessions as one row: each comes aggregated by a correlated subquery on an
 * index, so this polled read is a single statement returning a single row.
 * It selects only the client's columns the overview shows, through
 * `preparedRow` (db/compiled_row.ts): this is the most polled read.
 */
const clientWithSetups = preparedRow(
  {
    externalUserId: clients.externalUserId,
    tenantId: clients.tenantId,
    status: clients.status,
    strategySelection: clients.strategySelection,
    setups: sql<
      string
    >`(SELECT json_group_array(json_array(${clientSetups.providerId}, ${clientSetups.enabled}, ${clientSetups.outsideEnvelope})) FROM ${clientSetups} WHERE ${clientSetups.clientId} = ${clients.id})`,
    accounts: sql<
      string
    >`(SELECT json_group_object(${providerAccounts.providerId}, ${providerAccounts.connection}) FROM ${providerAccounts} WHERE ${providerAccounts.clientId} = ${clients.id})`,
    openPositions: sql<
      number
    >`(SELECT count(*) FROM ${positions} WHERE ${positions.clientId} = ${clients.id} AND ${positions.status} = 'OPEN')`,
    automations: sql<
      string
    >`(SELECT json_group_array(json_array(${automations.providerId}, ${automations.strategyId}, ${automations.enabled})) FROM ${automations} WHERE ${automations.clientId} = ${clients.id})`,
    pending: sql<
      string
    >`(SELECT json_group_array(DISTINCT ${connectSessions.providerId}) FROM ${connectSessions} WHERE ${connectSessions.clientId} = ${clients.id} AND ${connectSessions.status} = 'PENDING' AND ${connectSessions.expiresAt} > ${
      sql.placeholder("now")
    })`,
    due: dueObligationsJson(sql`${clients.id}`, sql`${sql.placeholder("now")}`),
  },
  (db, fields) =>
    db.select(fields).from(clients).where(
      and(
        eq(clients.partnerId, sql.placeholder("partnerId")),
        eq(clients.externalUserId, sql.placeholder("externalUserId")),
      ),
    ),
);

function parseSetups(json: string): SetupSummary[] {
  return (JSON.parse(json) as [string, number, number][]).map(([providerId, enabled, outsideEnvelope]) => ({
    providerId,
    enabled: enabled === 1,
    outsideEnvelope: outsideEnvelope === 1,
  }));
}

export async function getClientStatus({ ctx, input }: { ctx: Ctx; input: { externalUserId: string } }) {
  const partnerId = partnerOf(ctx);
  const now = ctx.clock.now();
  const client = await clientWithSetups(ctx.db.read, { partnerId, externalUserId: input.externalUserId, now });
  if (!client) throw new ApiError("NOT_FOUND");
  const setups = parseSetups(client.setups);
  const access = await effectiveAccessOf(ctx, partnerId);
  const commercial = commercialStates(access, client.status, standingOf(parseDueObligations(client.due), now));
  const accounts = JSON.parse(client.accounts) as Record<string, string>;
  const pending = new Set(JSON.parse(client.pending) as string[]);
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
        connection: connectionState(accounts[entry.providerId] ?? null, pending.has(entry.providerId)),
        setup: setup ? { mode: "REAL", enabled: setup.enabled, outsideEnvelope: setup.outsideEnvelope } : null,
        commercial: entry,
      };
    }),
    automations: (JSON.parse(client.automations) as [string, string, number][])
      .map(([providerId, strategyId, enabled]) => ({ providerId, strategyId, enabled: enabled === 1 })),
    openPositions: client.openPositions,
  };
}

export async function getClientCommercial({ ctx, input }: { ctx: Ctx; input: { externalUserId: string } }) {
  const partnerId = partnerOf(ctx);
  const client = await loadClient(ctx.db.read, partnerId, input.externalUserId);
  const access = await effectiveAccessOf(ctx, partnerId);
  const billing = await billingStandingOf(ctx.db.read, client.id, ctx.clock.now());
  return { clientStatus: client.status, providers: commercialStates(access, client.status, billing) };
}
