/**
 * QA test credentials for the hosted page, the way payment sandboxes offer
 * test cards: a funded simulator account for the API-key flow, or funds for
 * the test wallet the page generated in the browser. Only where the service
 * runs with its simulators; anywhere else the route does not exist (404).
 */
import type { Ctx } from "../context.ts";
import { ApiError } from "../errors.ts";
import type { HexAddress } from "../../venues/types.ts";
import { sessionOfTicket } from "../connect/hosted_session.ts";

const TEST_FUNDS = "10000";

export type TestCredentials = { apiKey: string; apiSecret: string } | { funded: true };

export async function qaTestCredentials(
  ctx: Ctx,
  ticket: string,
  input: { walletAddress?: HexAddress },
): Promise<TestCredentials> {
  const urls = simulatorsOf(ctx);
  const session = await sessionOfTicket(ctx, ticket);
  if (session.scheme === "API_KEY") {
    return await control(`${urls.venueA}/_control/accounts`, { balances: { USDT: TEST_FUNDS } });
  }
  if (!input.walletAddress) {
    throw new ApiError("VALIDATION_ERROR", { message: "Informe o endereço da carteira de teste." });
  }
  await control(`${urls.venueB}/_control/wallets`, { address: input.walletAddress, usdc: TEST_FUNDS });
  return { funded: true };
}

function simulatorsOf(ctx: Ctx) {
  if (ctx.config.serviceEnv !== "qa" || !ctx.simulatorUrls) throw new ApiError("NOT_FOUND");
  return ctx.simulatorUrls;
}

/** The simulators' URLs come from the service's own configuration (trusted); still, a redirect is not followed. */
async function control<T>(url: string, body: unknown): Promise<T> {
  const response = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
    redirect: "manual",
  });
  if (!response.ok) {
    await response.body?.cancel();
    throw new ApiError("PROVIDER_DOWN", { message: "O simulador de testes não respondeu." });
  }
  return await response.json() as T;
}
