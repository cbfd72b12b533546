/**
 * `deno task operator <command>`: bootstrap a fresh install without the HTTP
 * API, over the same domain verbs. Reads the same configuration as main.ts.
 *
 *   deno task operator create-partner partner.json   (body of POST /operator/v1/partners)
 *   deno task operator issue-credential <partnerId> [overlapSeconds]
 *   deno task operator revoke-credential <partnerId> <clientId>
 *   deno task operator show-partner <partnerId>
 *   deno task operator rotate-master-key   (re-seal stored secrets with MASTER_KEY)
 *
 * A new credential's secret is printed once, to stdout, and stored only hashed.
 */
import { ConfigError, dataDirOf, parseConfig, withQaSecrets } from "./config.ts";
import { openDatabase } from "./db/client.ts";
import { TestableClock } from "./domain/clock.ts";
import type { Ctx } from "./domain/context.ts";
import { rotateCredential } from "./domain/credentials/issue_credential.ts";
import { revokeCredential } from "./domain/credentials/revoke_credential.ts";
import { ApiError } from "./domain/errors.ts";
import { createLogger } from "./domain/logger.ts";
import { createPartner } from "./domain/partners/create_partner.ts";
import { operatorPartnerView } from "./domain/partners/partner_view.ts";
import { restoreTestClock } from "./domain/qa/test_clock.ts";
import { rotateMasterKey } from "./domain/secrets/rotate_master_key.ts";
import { createSecretBox } from "./domain/secrets/secret_box.ts";
import { createCaches } from "./domain/cache.ts";
import { createRateLimiter } from "./domain/usage/rate_limiter.ts";
import { VenueAvailability } from "./domain/venues/call_venue.ts";
import { CreatePartnerBody } from "./routes/operator/schemas.ts";
import { validationError } from "./routes/validation.ts";
import { createEgressBudgets } from "./domain/venues/egress_budget.ts";
import { databaseSignerNonces } from "./domain/venues/signer_nonces.ts";
import { createVenueRegistry } from "./venues/registry.ts";
import { outboundPolicy } from "./domain/outbound/outbound_policy.ts";
import { OutboundClient } from "./domain/outbound/outbound_client.ts";

const USAGE = `usage:
  deno task operator create-partner <partner.json>
  deno task operator issue-credential <partnerId> [overlapSeconds]
  deno task operator revoke-credential <partnerId> <clientId>
  deno task operator show-partner <partnerId>
  deno task operator rotate-master-key`;

async function buildCtx(): Promise<Ctx> {
  const parsed = parseConfig(Deno.env.toObject());
  const { config } = await withQaSecrets(parsed, dataDirOf(parsed));
  const db = await openDatabase(config.databaseUrl, { authToken: config.databaseAuthToken });
  const clock = new TestableClock();
  if (config.serviceEnv === "qa") await restoreTestClock(db, clock);
  const secrets = await createSecretBox(config.masterKey!, config.previousMasterKeys);
  const logger = createLogger(config.logLevel);
  const egressBudgets = createEgressBudgets(db, config);
  return {
    config,
    db,
    clock,
    venues: createVenueRegistry(
      {
        venueA: config.venueAUrl ?? `${config.publicBaseUrl}/sim/venue-a`,
        venueASpot: config.venueASpotUrl ?? `${config.publicBaseUrl}/sim/venue-a-spot`,
        venueB: config.venueBUrl ?? `${config.publicBaseUrl}/sim/venue-b`,
        venueBMainnet: config.venueBMainnet,
      },
      secrets,
      egressBudgets,
      databaseSignerNonces(db),
    ),
    egressBudgets,
    venueAvailability: new VenueAvailability(),
    caches: createCaches(),
    secrets,
    logger,
    rateLimiter: createRateLimiter(db, () => {}),
    outbound: new OutboundClient(outboundPolicy(config)),
    actor: { kind: "operator" },
    requestId: "cli",
  };
}

async function run(args: string[]): Promise<unknown> {
  const [command, ...rest] = args;
  const ctx = await buildCtx();
  try {
    switch (command) {
      case "create-partner": {
        if (!rest[0]) throw new Error(USAGE);
        const parsed = CreatePartnerBody.safeParse(JSON.parse(await Deno.readTextFile(rest[0])));
        if (!parsed.success) throw validationError(parsed.error);
        return await createPartner({ ctx, input: parsed.data });
      }
      case "issue-credential": {
        if (!rest[0]) throw new Error(USAGE);
        const overlapSeconds = rest[1] === undefined ? undefined : Number(rest[1]);
        return { credential: await rotateCredential({ ctx, input: { partnerId: rest[0], overlapSeconds } }) };
      }
      case "revoke-credential":
        if (!rest[1]) throw new Error(USAGE);
        return await revokeCredential({ ctx, input: { partnerId: rest[0], clientId: rest[1] } });
      case "show-partner":
        if (!rest[0]) throw new Error(USAGE);
        return { partner: await operatorPartnerView(ctx.db.read, rest[0], ctx.clock.now()) };
      case "rotate-master-key":
        return { rotation: await rotateMasterKey(ctx) };
      default:
        throw new Error(USAGE);
    }
  } finally {
    ctx.db.close();
  }
}

try {
  console.log(JSON.stringify(await run(Deno.args), null, 2));
} catch (error) {
  if (error instanceof ApiError) console.error(`${error.code}: ${error.message}`);
  else if (error instanceof ConfigError || error instanceof Error) console.error(error.message);
  Deno.exit(1);
}
